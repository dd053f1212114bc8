#include "model/warning.h"

#include <algorithm>
#include <utility>

namespace tuneprof {

bool HasWarning(const std::vector<IdentifiedWarning>& ids, WarningId id) {
  return std::any_of(ids.begin(), ids.end(), [&](const IdentifiedWarning& w) { return w.id == id; });
}

bool IsWarningLine(const std::vector<IdentifiedWarning>& ids, size_t line, WarningId id) {
  return std::any_of(ids.begin(), ids.end(), [&](const IdentifiedWarning& w) { return w.id == id && w.line == line; });
}

std::vector<size_t> WarningLinesWithId(const std::vector<IdentifiedWarning>& ids, WarningId id) {
  std::vector<size_t> lines;
  for (const IdentifiedWarning& w : ids) {
    if (w.id == id) lines.push_back(w.line);
  }
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  return lines;
}

void DropWarningLines(std::vector<std::string>* lines, std::vector<IdentifiedWarning>* ids, WarningId id, size_t keep) {
  std::vector<bool> drop(lines->size(), false);
  for (size_t line : WarningLinesWithId(*ids, id)) {
    if (line >= drop.size()) continue;
    if (keep > 0) {
      --keep;
    } else {
      drop[line] = true;
    }
  }
  std::erase_if(*ids,
                [&](const IdentifiedWarning& w) { return w.id == id && (w.line >= drop.size() || drop[w.line]); });
  std::vector<size_t> moved_to(drop.size(), 0);  // each kept line's new index
  size_t kept = 0;
  for (size_t line = 0; line < drop.size(); ++line) {
    if (drop[line]) continue;
    moved_to[line] = kept;
    if (kept != line) (*lines)[kept] = std::move((*lines)[line]);  // never onto itself
    ++kept;
  }
  lines->resize(kept);
  for (IdentifiedWarning& w : *ids) {
    if (w.line < moved_to.size()) w.line = moved_to[w.line];
  }
}

void AppendWarningIds(const std::vector<IdentifiedWarning>& from, size_t offset, std::vector<IdentifiedWarning>* into) {
  for (const IdentifiedWarning& w : from) into->push_back(IdentifiedWarning{w.id, offset + w.line});
}

}  // namespace tuneprof

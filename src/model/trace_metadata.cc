// The warnings of a trace that have an id (model/trace.h).
#include "model/trace.h"

#include <algorithm>
#include <utility>

namespace tuneprof {

void AddWarning(TraceMetadata* meta, WarningId id, std::string text) {
  meta->warning_ids.push_back(IdentifiedWarning{id, meta->warnings.size()});
  meta->warnings.push_back(std::move(text));
}

void DropWarnings(TraceMetadata* meta, WarningId id) {
  std::vector<bool> drop(meta->warnings.size(), false);
  std::erase_if(meta->warning_ids, [&](const IdentifiedWarning& w) {
    if (w.id != id) return false;
    if (w.line < drop.size()) drop[w.line] = true;
    return true;
  });
  std::vector<size_t> moved_to(drop.size(), 0);  // each kept line's new index
  size_t kept = 0;
  for (size_t line = 0; line < drop.size(); ++line) {
    if (drop[line]) continue;
    moved_to[line] = kept;
    if (kept != line) meta->warnings[kept] = std::move(meta->warnings[line]);  // never onto itself
    ++kept;
  }
  meta->warnings.resize(kept);
  for (IdentifiedWarning& w : meta->warning_ids) {
    if (w.line < moved_to.size()) w.line = moved_to[w.line];
  }
}

bool IsWarning(const TraceMetadata& meta, size_t line, WarningId id) {
  return std::any_of(meta.warning_ids.begin(), meta.warning_ids.end(),
                     [&](const IdentifiedWarning& w) { return w.id == id && w.line == line; });
}

}  // namespace tuneprof

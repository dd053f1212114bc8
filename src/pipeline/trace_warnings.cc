#include "pipeline/trace_warnings.h"

#include <fmt/format.h>

#include "pipeline/diagnostics.h"

namespace tuneprof {

std::vector<std::string> TraceWarnings(const Trace& trace, std::optional<WarningId> left_out,
                                       std::vector<IdentifiedWarning>* ids) {
  const TraceMetadata& meta = trace.metadata();
  // Cut off, or an empty traceEvents array: said once, in the same words for every format.
  std::vector<std::string> lines = InputWarnings(meta);
  for (size_t line = 0; line < meta.warnings.size(); ++line) {
    const std::string& warning = meta.warnings[line];
    if (left_out && IsWarning(meta, line, *left_out)) continue;
    // The cut-off is said above, once, in the same words for every format.
    if (meta.truncated && IsWarning(meta, line, WarningId::kCutOff)) continue;
    if (ids != nullptr) {
      for (const IdentifiedWarning& w : meta.warning_ids) {
        if (w.line == line) ids->push_back(IdentifiedWarning{w.id, lines.size()});
      }
    }
    lines.push_back(warning.starts_with(meta.path) ? warning : meta.path + ": " + warning);
  }
  return lines;
}

void EmitWarnings(const std::vector<std::string>& warnings, std::vector<std::string>* all) {
  for (const std::string& warning : warnings) {
    PrintWarning(warning);
    all->push_back(warning);
  }
}

void RankWarnings::Add(const std::string& path, const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    const std::string prefix = path + ": ";
    std::string message = warning.starts_with(prefix) ? warning.substr(prefix.size()) : warning;
    const auto [it, added] = index_.try_emplace(message, lines_.size());
    if (added) {
      lines_.push_back(Shared{path, std::move(message), 1});
    } else {
      ++lines_[it->second].ranks;
    }
  }
}

void RankWarnings::Emit(std::vector<std::string>* all) const {
  std::vector<std::string> lines;
  for (const Shared& s : lines_) {
    lines.push_back(s.ranks == 1 ? s.first_path + ": " + s.message
                                 : fmt::format("{} and {} more rank{}: {}", s.first_path, s.ranks - 1,
                                               s.ranks == 2 ? "" : "s", s.message));
  }
  EmitWarnings(lines, all);
}

}  // namespace tuneprof

#include "pipeline/diagnostics.h"

#include <fmt/format.h>

#include <cstdio>

#include "base/rank_ranges.h"
#include "base/text_escape.h"

namespace tuneprof {

std::string ErrorLine(std::string_view message) { return fmt::format("tuneprof: error: {}", EscapeText(message)); }

void PrintError(std::string_view message) { fmt::print(stderr, "{}\n", ErrorLine(message)); }

void PrintWarning(std::string_view message) { fmt::print(stderr, "tuneprof: warning: {}\n", EscapeText(message)); }

std::vector<std::string> InputWarnings(const TraceMetadata& meta) {
  std::vector<std::string> warnings;
  if (meta.truncated) {
    warnings.push_back(
        fmt::format("{}: trace is cut off; using the {} complete events it holds", meta.path, meta.entry_count));
  } else if (meta.has_trace_events_array && meta.entry_count == 0) {
    warnings.push_back(
        fmt::format("{}: the trace holds no events (its traceEvents array is empty); every figure below is empty, "
                    "profile a few steps of the workload",
                    meta.path));
  }
  return warnings;
}

void WarnAboutMissingGroupMembers(const CommAnalysis& comm, std::vector<std::string>* warnings) {
  if (comm.ranks.size() < 2) return;  // one rank alone matches nothing anyway
  constexpr size_t kGroupsNamed = 3;
  size_t groups = 0;
  for (const CommGroupSummary& g : comm.cross_rank.groups) {
    if (g.missing_ranks.empty()) continue;
    if (++groups > kGroupsNamed) continue;
    const std::string name = g.label.empty() ? (g.group.empty() ? "(unnamed)" : g.group) : g.label;
    warnings->push_back(fmt::format(
        "process group {}: {} of its {} members are not in the input (ranks {}): waits for them count as transfer "
        "and a straggler is named among the members present only; pass every rank",
        name, g.missing_ranks.size(), g.global_ranks.size(), RankRanges(g.missing_ranks)));
    PrintWarning(warnings->back());
  }
  if (groups > kGroupsNamed) {
    warnings->push_back(fmt::format("{} more process groups miss members in the input", groups - kGroupsNamed));
    PrintWarning(warnings->back());
  }
}

}  // namespace tuneprof

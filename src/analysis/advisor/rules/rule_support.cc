#include "analysis/advisor/rules/rule_support.h"

#include <fmt/format.h>

namespace tuneprof {

Platform PlatformOf(const RankEvidence& rank) {
  if (rank.split.cpu_only) return Platform::kCpu;
  return rank.on_npu ? Platform::kNpu : Platform::kCuda;
}

std::string_view ForPlatform(const RankEvidence& rank, std::string_view cuda, std::string_view npu,
                             std::string_view cpu) {
  switch (PlatformOf(rank)) {
    case Platform::kCuda:
      return cuda;
    case Platform::kNpu:
      return npu;
    case Platform::kCpu:
      return cpu;
  }
  return cuda;
}

double PerStep(const RankEvidence& rank, double total_ns) {
  return rank.split.steps == 0 ? 0 : total_ns / static_cast<double>(rank.split.steps);
}

double PctOfStep(const RankEvidence& rank, double per_step_ns) {
  return rank.split.step_ns > 0 ? 100 * per_step_ns / rank.split.step_ns : 0;
}

bool RunsBackward(const Trace& trace) {
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] == EventKind::kHostOp &&
        trace.str(events.name[i]).starts_with("autograd::engine::evaluate_function")) {
      return true;
    }
  }
  return false;
}

std::string FormatDuration(double ns) {
  if (ns >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.1f} us", ns / 1e3);
}

}  // namespace tuneprof

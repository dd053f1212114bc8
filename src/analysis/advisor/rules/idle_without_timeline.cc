// idle.no_timeline: a rank read without a timeline (torch_npu's step split alone: step_trace_time.csv,
// analysis.db's StepTraceTime, msprof-analyze's cluster output) whose device is free most of its step.
// The timeline rules that tell host stalls, data loading and launch gaps apart have nothing to read, so
// without this finding the verdict names idle as the bottleneck with nothing behind it. Gain: the free
// time per step, a catch-all shared with the other idle findings and capped as they are. A capture window
// without step markers (StepTraceTime's step empty) is not a training step: its free time holds whatever
// ran around the work captured, so what a fix saves per step is unknown and the finding says so.
#include <fmt/format.h>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// Every step of the split is a capture window without a step marker.
bool WindowWithoutStepMarkers(const RankEvidence& rank) {
  if (rank.breakdown == nullptr || rank.breakdown->steps.empty()) return false;
  for (const StepBreakdown& step : rank.breakdown->steps) {
    if (step.step) return false;
  }
  return true;
}

}  // namespace

void RuleIdleWithoutTimeline(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.split.cpu_only || rank.trace == nullptr || rank.trace->events().size() != 0) return;
  const double step_ns = rank.split.step_ns;
  const double free_ns = rank.split.part(TimePart::kIdle);
  if (step_ns <= 0 || free_ns <= 0) return;
  const double busy_pct = 100 * (step_ns - free_ns) / step_ns;
  if (busy_pct >= config.Get(threshold::kDeviceBusyPct)) return;
  Finding f = NewFinding("idle.no_timeline", rank, config);
  f.catch_all = true;
  f.title = fmt::format(
      "the device is free {:.1f} % of the step ({} a step) and the input has no timeline to tell what it waits for",
      100 - busy_pct, FormatDuration(static_cast<int64_t>(free_ns)));
  f.value = busy_pct;
  f.uncapped_gain_ns = free_ns;
  if (WindowWithoutStepMarkers(rank)) {
    f.title = fmt::format(
        "the device is free {:.1f} % of rank {}'s capture window ({} of it) and the input has no timeline to tell "
        "what it waits for; the window has no step markers, so it is not a training step",
        100 - busy_pct, rank.rank_id, FormatDuration(static_cast<int64_t>(free_ns)));
    f.uncapped_gain_ns = 0;
    f.gain_model =
        "unknown: a capture window without step markers is not a training step, so what a fix saves per step is "
        "not measured";
    f.AddText("step_markers", "none: the window is not a training step");
  }
  f.AddNumber("busy_pct", busy_pct, "%");
  f.AddNumber("free_us_per_step", free_ns / 1e3, "us");
  out->push_back(std::move(f));
}

}  // namespace tuneprof

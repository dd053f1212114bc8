#include "analysis/breakdown/reported_steps.h"

#include <algorithm>
#include <string>
#include <utility>

namespace tuneprof {
namespace {

// A figure of step_trace_time.csv, 0 where the file left it out.
int64_t Reported(int64_t ns) { return ns == kNoId ? 0 : ns; }

// torch_npu's own split of one step, for a rank that kept step_trace_time.csv (or analysis.db's
// StepTraceTime) but no timeline: the same definitions ascend_step_breakdown.h recomputes.
StepBreakdown StepFromReported(const ReportedStepTime& row) {
  StepBreakdown step;
  if (row.step != kNoId) step.step = row.step;
  step.wall_ns = Reported(row.stage_ns);
  step.computing_ns = Reported(row.computing_ns);
  step.communication_ns = Reported(row.communication_ns);
  step.overlapped_ns = Reported(row.overlapped_ns);
  step.communication_not_overlapped_ns = Reported(row.communication_not_overlapped_ns);
  step.free_ns = Reported(row.free_ns);
  step.bubble_ns = Reported(row.bubble_ns);
  step.preparing_ns = row.preparing_ns;
  return step;
}

void AddReported(StepBreakdown* total, const StepBreakdown& step) {
  total->wall_ns += step.wall_ns;
  total->computing_ns += step.computing_ns;
  total->communication_ns += step.communication_ns;
  total->overlapped_ns += step.overlapped_ns;
  total->communication_not_overlapped_ns += step.communication_not_overlapped_ns;
  total->free_ns += step.free_ns;
  total->bubble_ns += step.bubble_ns;  // preparing stays unknown in totals, as for a timeline
}

size_t ReportedStepCount(const Trace& trace) {
  return static_cast<size_t>(
      std::count_if(trace.reported_step_times().begin(), trace.reported_step_times().end(),
                    [&](const ReportedStepTime& row) { return !IsClusterStageRow(trace, row); }));
}

}  // namespace

bool IsClusterStageRow(const Trace& trace, const ReportedStepTime& row) {
  return row.step == kNoId && trace.reported_step_times().size() > 1;
}

// The rank's steps from the profiler's own figures; false when it kept none. `why`: what the timeline
// lacks, the default being no timeline at all (or one cut off before its first device event).
bool BreakdownFromReported(const Trace& trace, RankBreakdown* result, std::string why) {
  if (trace.reported_step_times().empty()) return false;
  result->definitions = StepDefinitions::kTorchNpu;
  for (const ReportedStepTime& row : trace.reported_step_times()) {
    if (IsClusterStageRow(trace, row)) continue;
    result->steps.push_back(StepFromReported(row));
    AddReported(&result->total, result->steps.back());
  }
  // A cut timeline is there, but holds no device event (cut before the first one, or set aside by the
  // importer, which then keeps no event at all): said as cut, not as missing. One whose device events
  // this breakdown sets aside says so itself.
  const std::string_view lead = why.empty() ? kNoDeviceTimelineWarning : ": the cut device timeline is set aside; ";
  if (why.empty()) {
    result->warning_ids.push_back(IdentifiedWarning{WarningId::kNoDeviceTimeline, result->warnings.size()});
    const std::string_view where =
        trace.events().size() == 0 ? "before the end of its steps and set aside" : "before its first device event";
    why = trace.metadata().truncated
              ? "the timeline is cut off " + std::string(where) +
                    " (copy the rank's whole trace_view.json, or its ascend_pytorch_profiler_*.db)"
              : "no trace_view.json or profiler database (copy the Text export's trace_view.json or the Db "
                "export's ascend_pytorch_profiler_*.db with the rank; a run that wrote neither: "
                "torch_npu.profiler._ExperimentalConfig(export_type=torch_npu.profiler.ExportType.Text))";
  }
  result->warnings.push_back(result->path + std::string(lead) +
                             "the step split is torch_npu's own (step_trace_time.csv or analysis.db StepTraceTime); "
                             "copies, syncs, host wait and launches are unknown: " +
                             why);
  return !result->steps.empty();
}

// A torch_npu timeline cut off before the end of its steps holds fewer complete steps than
// step_trace_time.csv, which torch_npu wrote from the whole run: the rank is read from that file, as a
// rank without a timeline is, rather than from the few steps (or none) the cut left whole. Such a cut
// can fall before the process names that say the timeline is torch_npu's: the step file says it.
bool FallBackFromCutTimeline(const Trace& trace, size_t complete_steps, bool device_work_missing,
                             RankBreakdown* result) {
  if (!trace.metadata().truncated) return false;
  const size_t reported = ReportedStepCount(trace);
  if (complete_steps >= reported) return false;
  RankBreakdown fallback;
  fallback.rank = result->rank;
  fallback.path = result->path;
  const std::string why = device_work_missing
                              ? std::string()
                              : "the timeline is cut off with " + std::to_string(complete_steps) + " complete step" +
                                    (complete_steps == 1 ? "" : "s") + " of the " + std::to_string(reported) +
                                    " that step_trace_time.csv holds (copy the rank's whole trace_view.json, or "
                                    "its ascend_pytorch_profiler_*.db)";
  if (!BreakdownFromReported(trace, &fallback, why)) return false;
  *result = std::move(fallback);
  return true;
}

}  // namespace tuneprof

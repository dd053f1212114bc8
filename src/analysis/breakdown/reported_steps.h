#pragma once
// A rank's step split from torch_npu's own figures (step_trace_time.csv, or analysis.db's StepTraceTime),
// for a rank that kept no timeline, or one cut off before the end of its steps. The time breakdown asks
// these before (or instead of) measuring a timeline.
#include <cstddef>
#include <string>

#include "analysis/breakdown/time_breakdown.h"
#include "model/trace.h"

namespace tuneprof {

// Whether `row` is a pipeline stage's row of msprof-analyze's cluster output (no step number, beside the
// rank's own row) rather than one of the rank's steps.
bool IsClusterStageRow(const Trace& trace, const ReportedStepTime& row);

// The rank's steps from the profiler's own figures into `result`; false when it kept none. `why`: what
// the timeline lacks; empty says there is no timeline at all (or one cut before its first device event).
bool BreakdownFromReported(const Trace& trace, RankBreakdown* result, std::string why = {});

// Replaces `result` by the reported steps when a cut timeline holds fewer complete steps than torch_npu
// reported; false (and `result` untouched) otherwise.
bool FallBackFromCutTimeline(const Trace& trace, size_t complete_steps, bool device_work_missing,
                             RankBreakdown* result);

}  // namespace tuneprof

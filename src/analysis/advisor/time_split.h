#pragma once
// Where a rank's average step goes, in the parts a fix can save time from (finding.h TimePart):
// compute-bound work (matmul, conv, attention), memory-bound work (everything else that computes), fused
// compute + communication kernels, exposed communication, exposed copies, the host (device waiting on launches; on a CPU-only trace the
// framework's time between operators), the input pipeline, and other idle time. The parts add up to the
// step time exactly.
//
// Step time is the mean over steps of StepTimeNs (time_breakdown.h: torch_npu's Stage + Bubble, else the
// longer of the ProfilerStep range on the host and the step's device span), at least the step's busy time. Device work per step comes from time_breakdown.h. Work is
// split into compute-bound, memory-bound, unclassified and fused comm by the share of self time of each
// class (op_classes.h): union time cannot be attributed per event, durations can. A fused compute +
// communication kernel (MC2), on a timeline or in kernel_details alike, is in the fused comm part:
// computing the rank runs itself, counted once, never exposed communication. Another kernel is classed by
// its name, else by the operator that launched it (KernelLetters); one neither classes is unclassified
// rather than counted memory-bound, and where the step computes but no work is listed to class it (a
// torch_npu rank with only step_trace_time.csv, cluster output) all the computing is unclassified
// (compute_classes_known false); a rank that keeps kernel_details.csv is classed from it instead.
#include <array>
#include <cstdint>

#include "analysis/advisor/finding.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/device_work.h"
#include "analysis/core/cpu_work.h"
#include "analysis/core/host_op_tree.h"
#include "analysis/core/intervals.h"
#include "model/trace.h"

namespace tuneprof {

struct TimeSplit {
  uint64_t steps = 0;
  double step_ns = 0;                                                   // mean step time
  std::array<double, static_cast<size_t>(TimePart::kCount)> part_ns{};  // mean per step, sum = step_ns
  double compute_bound_share = 0;                                       // of the computing time, by self time
  double unclassified_share = 0;                                        // likewise
  double fused_comm_share = 0;                                          // likewise
  // False when the step has computing time but no operators to class it (a torch_npu rank with only
  // step_trace_time.csv): the computing then is all in the unclassified part, which the verdict counts
  // as compute.
  bool compute_classes_known = true;
  double dataloader_ns = 0;  // mean DataLoader time per step on the host, exposed or not
  bool cpu_only = false;     // the host threads are the device (time_breakdown.h WorkSource::kCpu)
  // CPU-only: mean time per step in outermost operators too small to pay for their dispatch
  // (TinyOpLimits), counted in the host part rather than as compute.
  double dispatch_ns = 0;

  double part(TimePart p) const { return part_ns[static_cast<size_t>(p)]; }
  double Share(TimePart p) const { return step_ns > 0 ? part(p) / step_ns : 0; }
};

// The host ranges of the steps, or all time when the trace has none: host work outside them (the
// profiler's own closing synchronize, set-up before the first step) is no step's.
IntervalSet StepRanges(const RankBreakdown& breakdown);

// On CPU-only traces an outermost operator this small is framework overhead: by its tensors' bytes and
// FLOPs from record_shapes when the trace has them, else by its duration.
struct TinyOpLimits {
  double max_bytes = 16 * 1024;
  double max_flops = 1e6;
  int64_t max_ns = 10'000;
};

// `device_work`: the rank's device work shared with other analyses (nullptr: listed here).
TimeSplit SplitStepTime(const Trace& trace, const RankBreakdown& breakdown, const HostOpTree& tree,
                        const TinyOpLimits& tiny, SharedDeviceWork* device_work = nullptr);

}  // namespace tuneprof

#pragma once
// Where a rank's average step goes, in the parts a fix can save time from (finding.h TimePart):
// compute-bound work (matmul, conv, attention), memory-bound work (everything else that computes),
// exposed communication, exposed copies, the host (device waiting on launches; on a CPU-only trace the
// framework's time between operators), the input pipeline, and other idle time. The parts add up to the
// step time exactly.
//
// Step time is the mean ProfilerStep range on the host when the trace has steps (the iteration cadence a
// user measures), else the span of the work. Device work per step comes from time_breakdown.h. Work is
// split into compute- and memory-bound by the share of self time of each class (op_classes.h): union
// time cannot be attributed per event, durations can.
#include <array>
#include <cstdint>

#include "analysis/advisor/finding.h"
#include "analysis/host_op_tree.h"
#include "analysis/time_breakdown.h"
#include "model/trace.h"

namespace tuneprof {

struct TimeSplit {
  uint64_t steps = 0;
  double step_ns = 0;  // mean step time
  std::array<double, static_cast<size_t>(TimePart::kCount)> part_ns{};  // mean per step, sum = step_ns
  double compute_bound_share = 0;  // of the computing time, by self time
  double dataloader_ns = 0;        // mean DataLoader time per step on the host, exposed or not
  bool cpu_only = false;           // the host threads are the device (time_breakdown.h WorkSource::kCpu)

  double part(TimePart p) const { return part_ns[static_cast<size_t>(p)]; }
  double Share(TimePart p) const { return step_ns > 0 ? part(p) / step_ns : 0; }
};

// Whether a host range is the input pipeline (the TensorBoard plugin's DataLoader rule: names of
// `enumerate(DataLoader)#...` ranges; torch_npu and custom loops spell it in other cases).
bool IsDataLoaderRange(std::string_view name);

TimeSplit SplitStepTime(const Trace& trace, const RankBreakdown& breakdown, const HostOpTree& tree);

}  // namespace tuneprof

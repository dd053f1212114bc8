#pragma once
// torch_npu's step_trace_time.csv, recomputed from the raw device tasks (never read from the
// "Overlap Analysis" track, which is only torch_npu's own rendering of the same numbers).
// Source: Ascend/pytorch torch_npu/profiler/analysis/prof_view/_trace_step_time_parser.py and
// prof_parse/_fwk_cann_relation_parser.py.
//
// msprof draws the Overlap Analysis track over a device's whole timeline: Computing = the compute tasks,
// Communication = the HCCL operations, Communication(Not Overlapped) = communication minus compute, Free
// = the gaps between consecutive busy (compute or communication) periods. Copies (SDMA) and syncs are
// neither, so they sit inside Free. Here each of those is rebuilt from the device tasks as maximal
// intervals (unions; msprof's own pieces are per task, which sums the same when compute does not
// overlap itself).
//
// torch_npu then gives each piece to the step whose device range holds the piece's start, wholly:
//   device range of ProfilerStep#N = [first start of the tasks of the step's first launch,
//                                     max(last end of the tasks of its last launch, host step end))
// where a task's launch is its CANN API call (HostToDevice flow), taken back through the task queue
// to the `enqueue` on the step's thread when the call ran inside a `dequeue`. Per step:
//   Computing, Communication, Communication(Not Overlapped), Free = Σ of their pieces in the step
//   Overlapped = Communication - Communication(Not Overlapped)
//   Bubble     = Σ durations of hcom_receive* operations in the step (pipeline-parallel wait)
//   Stage      = (last end - first start over all those pieces and hcom_receive*) - Bubble
//   Preparing  = first compute or communication piece start - host step start
// A gap after a step's last busy period starts inside it, so a step's Stage runs to the next busy
// period, as torch_npu's does. Deviation: a step without any launch keeps its host range instead of
// making torch_npu drop every step range.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/device_launches.h"
#include "analysis/core/device_work.h"
#include "model/trace.h"

namespace tuneprof {

// The flow category of torch_npu's enqueue -> dequeue links between host threads.
inline constexpr std::string_view kTorchNpuTaskQueueFlow = "async_task_queue";

struct TorchNpuStepRange {
  int64_t number = 0;  // N of ProfilerStep#N
  int64_t host_start_ns = 0;
  int64_t host_end_ns = 0;
  int64_t start_ns = 0;  // the device range, [start, end)
  int64_t end_ns = 0;
};

// One per ProfilerStep, in host order; empty for a trace without steps (then everything is one window).
std::vector<TorchNpuStepRange> TorchNpuStepRanges(const Trace& trace, const LaunchTimes& launch);

struct TorchNpuStep {
  StepBreakdown breakdown;       // everything but the host side
  std::vector<uint32_t> events;  // the device work events starting in the step's range
};

struct TorchNpuSteps {
  std::vector<TorchNpuStep> steps;  // one per range (one in all without steps)
  uint64_t events_outside_steps = 0;
};

// `work`: the device work of one device (or of all, taken as one timeline).
TorchNpuSteps MeasureTorchNpuSteps(const Trace& trace, std::span<const DeviceWorkEvent> work,
                                   const std::vector<TorchNpuStepRange>& ranges);

}  // namespace tuneprof

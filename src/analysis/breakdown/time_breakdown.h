#pragma once
// Where each step's device time goes, per rank and per device: compute, communication (hidden under
// compute or exposed), memory traffic, other (syncs), and free time with no device work, plus the host
// side (host_side.h). Interval unions, never sums of durations. All times int64 ns.
//
// Two sets of definitions, chosen by the trace's producer:
//
// tuneprof (every format but torch_npu). Step of a device event: the ProfilerStep#N whose host range
// [start, end) holds the runtime call that launched it (device_launches.h); an event without a known
// launch falls in the step whose range holds its own start. Events outside every step are counted, not
// attributed. A trace without steps is one window. Wall: the step's span on the device, from the first
// start to the last end of the device work attributed to it (host ranges only say when the launches
// happened; the device runs behind them). With memcpy_ns, other_ns and free_ns defined as the parts not
// already counted, the identity
//   wall = computing + communication_not_overlapped + memcpy + other + free
// holds exactly for every step.
//
// torch_npu (trace_view.json): its own step_trace_time.csv definitions, recomputed from the raw device
// tasks (ascend_step_breakdown.h). There wall is the step, torch_npu's Stage + Bubble, and
//   wall = computing + communication_not_overlapped + free + bubble
// because torch_npu's Free holds copies (SDMA) and syncs (memcpy_ns and other_ns say how much of it
// they are), and the pipeline bubble is its own part, out of the exposed communication
// (pipeline_waits.h).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/breakdown/host_side.h"
#include "model/trace.h"

namespace tuneprof {

enum class StepDefinitions : uint8_t {
  kTuneprof,
  kTorchNpu,  // torch_npu step_trace_time
};

std::string_view StepDefinitionsName(StepDefinitions definitions);

// What was measured: device work, or, in a trace without any (CPU-only gloo DDP), the host threads'
// operators and gloo collectives as cpu_work.h picks them.
enum class WorkSource : uint8_t { kDevice, kCpu };

std::string_view WorkSourceName(WorkSource source);

struct StepBreakdown {
  std::optional<int64_t> step;    // N of ProfilerStep#N; nullopt when the trace has no steps (and in totals)
  int64_t host_start_ns = kNoId;  // the ProfilerStep range on the host, kNoId without steps
  int64_t host_end_ns = kNoId;
  int64_t device_start_ns = kNoId;  // kNoId when no device work was attributed to the step
  int64_t device_end_ns = kNoId;
  uint64_t device_events = 0;

  int64_t wall_ns = 0;                          // device_end - device_start (torch_npu: Stage + Bubble)
  int64_t computing_ns = 0;                     // |U(compute)|
  int64_t communication_ns = 0;                 // |U(communication)|
  int64_t overlapped_ns = 0;                    // |U(communication) ∩ U(compute)|
  int64_t communication_not_overlapped_ns = 0;  // communication - overlapped (torch_npu: - bubble)
  int64_t memory_ns = 0;                        // |U(memcpy, memset)|
  int64_t memcpy_ns = 0;                        // memory not hidden under compute or communication
  int64_t other_ns = 0;                         // syncs/waits not hidden under any of the above
  int64_t free_ns = 0;                          // wall - |U(all device work)| (torch_npu: its Free)
  int64_t bubble_ns = 0;                        // torch_npu: pipeline p2p wait (pipeline_waits.h); 0 otherwise
  int64_t preparing_ns = kNoId;                 // torch_npu: first compute/communication - host step start

  HostSideBreakdown host;
};

// The steps of one device, when a rank drives several.
struct DeviceTimeBreakdown {
  uint32_t device = kNoIndex;  // index into Trace::devices; kNoIndex for work on an unidentified device
  DeviceType type = DeviceType::kGpu;
  int64_t id = kNoId;
  std::vector<StepBreakdown> steps;
  std::vector<StepBreakdown> incomplete_steps;  // as RankBreakdown::incomplete_steps
  StepBreakdown total;
  uint64_t device_events_outside_steps = 0;
};

// Follows the rank's path in the breakdown warning of a rank read without a device timeline.
inline constexpr std::string_view kNoDeviceTimelineWarning = ": no device timeline; ";

struct RankBreakdown {
  int64_t rank = 0;
  std::string path;
  StepDefinitions definitions = StepDefinitions::kTuneprof;
  WorkSource work_on = WorkSource::kDevice;
  std::vector<StepBreakdown> steps;  // in step order, all devices on one timeline
  // Steps of a cut-off trace that reach past where its complete events end (or all steps, when it is
  // cut before any device work that its side tables or launches show): some of their work may be
  // missing, so they are kept apart, out of `steps`, `total` and every mean and verdict drawn from them.
  // So are the steps at the end of a device trace that ran no device work while earlier steps did (the
  // profiler stopped), listed after the cut ones.
  std::vector<StepBreakdown> incomplete_steps;
  // What the breakdown left out and why, one line each naming the trace.
  std::vector<std::string> warnings;
  std::vector<IdentifiedWarning> warning_ids;  // those of `warnings` a later step acts on
  // Over all steps: the sums of the steps' times (steps are disjoint), the host side measured over all
  // their device work together.
  StepBreakdown total;
  std::vector<DeviceTimeBreakdown> devices;  // one per device when the rank has several, else empty
  uint64_t device_events = 0;                // device work events seen on the rank
  uint64_t device_events_outside_steps = 0;
  uint64_t device_count = 0;
};

RankBreakdown ComputeTimeBreakdown(const Trace& trace);

// The time one step takes, the one every command reports as "step". Under torch_npu's definitions it is
// torch_npu's own step, Stage + Bubble (the wall), whether read from the timeline or from
// step_trace_time.csv / analysis.db: the host's ProfilerStep range also holds Preparing (the host time
// before the step's first device task), which torch_npu leaves out of the step and reports on its own
// (StepBreakdown::preparing_ns), so a rank with a timeline and one without are timed alike. Otherwise the
// longer of its ProfilerStep range on the host and the span of its device work: the host range holds
// input waits and host work (a data-loading fix must show); the device span holds the step when the host
// runs ahead of a busy device (CUDA graphs, asynchronous launches), where the host range ends long before
// the step's work does. Without a host range it is the device span.
int64_t StepTimeNs(const StepBreakdown& step, StepDefinitions definitions);

}  // namespace tuneprof

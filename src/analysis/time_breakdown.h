#pragma once
// Where each step's device time goes, per rank: compute, communication (hidden under compute or
// exposed), memory traffic, other (syncs), and free time with no device work. Interval unions, never
// sums of durations. All times int64 ns.
//
// Step of a device event: the ProfilerStep#N whose host range [start, end) holds the runtime call that
// launched it (correlation link); an event without a launch link falls in the step whose range holds
// its own start. Events outside every step are counted, not attributed. A trace without steps is one
// window.
//
// Wall: the step's span on the device, from the first start to the last end of the device work
// attributed to it (host ranges only say when the launches happened; the device runs behind them).
// With memcpy_ns, other_ns and free_ns defined as the parts not already counted, the identity
//   wall = computing + communication_not_overlapped + memcpy + other + free
// holds exactly for every step.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct StepBreakdown {
  std::optional<int64_t> step;  // N of ProfilerStep#N; nullopt when the trace has no steps
  int64_t host_start_ns = kNoId;  // the ProfilerStep range on the host, kNoId without steps
  int64_t host_end_ns = kNoId;
  int64_t device_start_ns = kNoId;  // kNoId when no device work was attributed to the step
  int64_t device_end_ns = kNoId;
  uint64_t device_events = 0;

  int64_t wall_ns = 0;                          // device_end - device_start
  int64_t computing_ns = 0;                     // |U(compute)|
  int64_t communication_ns = 0;                 // |U(communication)|
  int64_t overlapped_ns = 0;                    // |U(communication) ∩ U(compute)|
  int64_t communication_not_overlapped_ns = 0;  // communication - overlapped
  int64_t memory_ns = 0;                        // |U(memcpy, memset)|
  int64_t memcpy_ns = 0;                        // memory not hidden under compute or communication
  int64_t other_ns = 0;                         // syncs/waits not hidden under any of the above
  int64_t free_ns = 0;                          // wall - |U(all device work)|
};

struct RankBreakdown {
  int64_t rank = 0;
  std::string path;
  std::vector<StepBreakdown> steps;    // in step order
  uint64_t device_events = 0;          // device work events seen on the rank
  uint64_t device_events_outside_steps = 0;
  uint64_t devices = 0;                // device work of several devices is merged into one timeline
};

RankBreakdown ComputeTimeBreakdown(const Trace& trace);

}  // namespace tuneprof

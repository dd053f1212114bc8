#pragma once
// Which device work a CUDA graph replayed. A graph launch (cudaGraphLaunch, cuGraphLaunch and their
// versioned names) is one host call that runs every kernel captured in the graph; CUPTI gives each of
// those kernels the launch's correlation id, so the trace links them all to the one call. Serving stacks
// and torch.compile(mode="reduce-overhead") run this way: the host is idle while the device is busy, and
// the replayed kernels have no operator (and no shapes) of their own at replay.
//
// Analyses use this to never call replayed work launch-bound or idle, to not recommend graphs to a run
// that already replays them, and to say which figures the missing operator shapes leave out (FLOPs, MFU).
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

// True for the runtime and driver calls that launch a whole graph.
bool IsGraphLaunchName(std::string_view name);

struct GraphReplays {
  uint64_t launches = 0;         // graph launch calls in the trace, linked to device work or not
  uint64_t replayed_events = 0;  // device work linked to a graph launch
  int64_t replayed_ns = 0;       // Σ duration of that work
  int64_t device_work_ns = 0;    // Σ duration of all device work; measured only when there are launches
  std::vector<bool> replayed;    // by event: device work a graph launch ran

  bool any() const { return launches > 0; }
  // Share of the summed device-work duration that graphs replayed, 0..1 (0 without device work).
  double replayed_share() const {
    return device_work_ns > 0 ? static_cast<double>(replayed_ns) / static_cast<double>(device_work_ns) : 0.0;
  }
};

// One pass over events and links: O(events + links).
GraphReplays FindGraphReplays(const Trace& trace);

}  // namespace tuneprof

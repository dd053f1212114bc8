#pragma once
// When the host launched each piece of device work: the start of the runtime call behind it. Kineto
// joins the two by CUPTI correlation id; torch_npu draws a `HostToDevice` flow from the CANN API call to
// the task (at profiler level 0 the call itself is not in the trace, but the flow's start still says
// when it ran). Launch times place device work in steps and feed the host-side measures.
#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

// Indexed by event; kNoId for events without a known launch (host events, unlinked device work).
using LaunchTimes = std::vector<int64_t>;

LaunchTimes FindLaunchTimes(const Trace& trace);

}  // namespace tuneprof

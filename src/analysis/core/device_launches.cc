#include "analysis/core/device_launches.h"

#include <unordered_map>

namespace tuneprof {
namespace {

// torch_npu's flow from a CANN API call to the device task it submitted.
constexpr std::string_view kTorchNpuLaunchFlow = "HostToDevice";

bool IsHostCall(EventKind kind) { return kind == EventKind::kRuntime || kind == EventKind::kDriver; }

void AddCorrelationLaunches(const Trace& trace, LaunchTimes* launch) {
  const EventTable& events = trace.events();
  for (const Link& link : trace.links()) {
    if (link.kind == LinkKind::kCorrelation) (*launch)[link.to] = events.ts_ns[link.from];
  }
}

// Flows into device work whose start is a runtime call, or torch_npu's launch flow whatever its start
// binds to. The flow's start point carries the call's start, so an unbound start still gives it.
void AddFlowLaunches(const Trace& trace, LaunchTimes* launch) {
  const EventTable& events = trace.events();
  StringId launch_category;
  const bool has_launch_category = trace.strings().Find(kTorchNpuLaunchFlow, &launch_category);
  struct Start {
    int64_t ts_ns;
    bool launches;
  };
  std::unordered_map<FlowKey, Start, FlowKeyHash> starts;
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.phase != FlowPhase::kStart || p.duplicates_correlation) continue;
    const bool from_call = p.event != kNoIndex && IsHostCall(events.kind[p.event]);
    starts.emplace(FlowKey(p), Start{p.ts_ns, from_call || (has_launch_category && p.category == launch_category)});
  }
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.phase != FlowPhase::kEnd || p.event == kNoIndex || !IsDeviceKind(events.kind[p.event])) continue;
    if ((*launch)[p.event] != kNoId) continue;  // a correlation link already said it
    auto it = starts.find(FlowKey(p));
    if (it != starts.end() && it->second.launches) (*launch)[p.event] = it->second.ts_ns;
  }
}

}  // namespace

LaunchTimes FindLaunchTimes(const Trace& trace) {
  LaunchTimes launch(trace.events().size(), kNoId);
  AddCorrelationLaunches(trace, &launch);
  if (!trace.flow_points().empty()) AddFlowLaunches(trace, &launch);
  return launch;
}

}  // namespace tuneprof

#include "analysis/core/device_launches.h"

#include <cstdint>
#include <vector>

#include "base/pair_table.h"

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

bool CountedStart(const FlowPoint& p) { return p.phase == FlowPhase::kStart && !p.duplicates_correlation; }

// Flows into device work whose start is a runtime call, or torch_npu's launch flow whatever its start
// binds to. The flow's start point carries the call's start, so an unbound start still gives it. The
// first start of a key is the one its ends pair with; the first end into an event that pairs with a
// launching start gives the event its launch. Numeric and string ids are kept in tables of their own:
// a string's interned id can equal a number.
void AddFlowLaunches(const Trace& trace, LaunchTimes* launch) {
  const EventTable& events = trace.events();
  const std::vector<FlowPoint>& points = trace.flow_points();
  StringId launch_category;
  const bool has_launch_category = trace.strings().Find(kTorchNpuLaunchFlow, &launch_category);
  size_t string_starts = 0, numeric_starts = 0;
  for (const FlowPoint& p : points) {
    if (CountedStart(p)) ++(p.id_is_string ? string_starts : numeric_starts);
  }
  if (string_starts + numeric_starts == 0) return;
  // By (category, id), numeric and string ids apart.
  PairTable starts[2] = {PairTable(numeric_starts), PairTable(string_starts)};
  for (uint32_t i = 0; i < points.size(); ++i) {
    if (!CountedStart(points[i])) continue;
    // The first start of a key counts.
    starts[points[i].id_is_string].At(points[i].category.value, static_cast<uint64_t>(points[i].id), i);
  }
  for (const FlowPoint& p : points) {
    if (p.phase != FlowPhase::kEnd || p.event == kNoIndex || !IsDeviceKind(events.kind[p.event])) continue;
    if ((*launch)[p.event] != kNoId) continue;  // a correlation link or an earlier end already said it
    const uint32_t* s = starts[p.id_is_string].Find(p.category.value, static_cast<uint64_t>(p.id));
    if (!s) continue;
    const FlowPoint& start = points[*s];
    const bool from_call = start.event != kNoIndex && IsHostCall(events.kind[start.event]);
    if (from_call || (has_launch_category && start.category == launch_category)) (*launch)[p.event] = start.ts_ns;
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

#include "analysis/core/device_launches.h"

#include <algorithm>
#include <vector>

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

bool KeyBefore(const FlowKey& a, const FlowKey& b) { return a.id != b.id ? a.id < b.id : a.space < b.space; }

// A flow point by its key, for pairing starts with ends by sorting rather than hashing: a torch_npu
// rank holds millions of flows, and a hash of that many nodes costs more than two sorts.
struct KeyedPoint {
  FlowKey key;
  uint32_t order = 0;  // the point's place among its kind, so that equal keys keep the file's order

  bool operator<(const KeyedPoint& other) const {
    return KeyBefore(key, other.key) || (key == other.key && order < other.order);
  }
};

bool SameKey(const KeyedPoint& a, const KeyedPoint& b) { return a.key == b.key; }

void SortPoints(std::vector<KeyedPoint>* points) {
  if (!std::is_sorted(points->begin(), points->end())) std::sort(points->begin(), points->end());
}

// Flows into device work whose start is a runtime call, or torch_npu's launch flow whatever its start
// binds to. The flow's start point carries the call's start, so an unbound start still gives it. The
// first start of a key is the one its ends pair with; the first end into an event that pairs with a
// launching start gives the event its launch.
void AddFlowLaunches(const Trace& trace, LaunchTimes* launch) {
  const EventTable& events = trace.events();
  StringId launch_category;
  const bool has_launch_category = trace.strings().Find(kTorchNpuLaunchFlow, &launch_category);
  struct Start {
    int64_t ts_ns;
    bool launches;
  };
  const auto ends_in_device_work = [&](const FlowPoint& p) {
    return p.phase == FlowPhase::kEnd && p.event != kNoIndex && IsDeviceKind(events.kind[p.event]);
  };
  // Sized before they are filled: a vector grown by doubling writes (and the kernel zeroes) twice its size.
  size_t start_count = 0, end_count = 0;
  for (const FlowPoint& p : trace.flow_points()) {
    start_count += p.phase == FlowPhase::kStart && !p.duplicates_correlation;
    end_count += ends_in_device_work(p);
  }
  if (start_count == 0 || end_count == 0) return;
  std::vector<KeyedPoint> start_keys;
  std::vector<Start> starts;
  std::vector<KeyedPoint> end_keys;
  std::vector<uint32_t> end_events;
  start_keys.reserve(start_count);
  starts.reserve(start_count);
  end_keys.reserve(end_count);
  end_events.reserve(end_count);
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.phase == FlowPhase::kStart && !p.duplicates_correlation) {
      const bool from_call = p.event != kNoIndex && IsHostCall(events.kind[p.event]);
      start_keys.push_back(KeyedPoint{FlowKey(p), static_cast<uint32_t>(starts.size())});
      starts.push_back(Start{p.ts_ns, from_call || (has_launch_category && p.category == launch_category)});
    } else if (ends_in_device_work(p)) {
      end_keys.push_back(KeyedPoint{FlowKey(p), static_cast<uint32_t>(end_events.size())});
      end_events.push_back(p.event);
    }
  }
  SortPoints(&start_keys);
  start_keys.erase(std::unique(start_keys.begin(), start_keys.end(), SameKey), start_keys.end());
  SortPoints(&end_keys);
  std::vector<int64_t> end_launch(end_events.size(), kNoId);
  auto s = start_keys.begin();
  for (const KeyedPoint& end : end_keys) {
    while (s != start_keys.end() && KeyBefore(s->key, end.key)) ++s;
    if (s == start_keys.end()) break;
    const Start& start = starts[s->order];
    if (s->key == end.key && start.launches) end_launch[end.order] = start.ts_ns;
  }
  for (size_t i = 0; i < end_events.size(); ++i) {
    int64_t& event_launch = (*launch)[end_events[i]];
    if (event_launch == kNoId) event_launch = end_launch[i];  // a correlation link or an earlier end said it
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

#include "analysis/core/graph_replays.h"

#include <algorithm>

#include "analysis/core/device_work.h"

namespace tuneprof {

bool IsGraphLaunchName(std::string_view name) {
  return name.starts_with("cudaGraphLaunch") || name.starts_with("cuGraphLaunch");
}

GraphReplays FindGraphReplays(const Trace& trace) {
  const EventTable& events = trace.events();
  GraphReplays result;
  result.replayed.assign(events.size(), false);
  // Names are interned: decide each distinct name once.
  std::vector<int8_t> launch_name(trace.strings().size(), -1);
  std::vector<bool> is_launch(events.size(), false);
  for (uint32_t i = 0; i < events.size(); ++i) {
    const EventKind kind = events.kind[i];
    if (kind != EventKind::kRuntime && kind != EventKind::kDriver) continue;
    int8_t& known = launch_name[events.name[i].value];
    if (known < 0) known = IsGraphLaunchName(trace.str(events.name[i])) ? 1 : 0;
    if (known == 1) {
      is_launch[i] = true;
      ++result.launches;
    }
  }
  if (result.launches == 0) return result;
  for (const Link& link : trace.links()) {
    if (link.kind == LinkKind::kCorrelation && is_launch[link.from] && IsDeviceKind(events.kind[link.to])) {
      result.replayed[link.to] = true;
    }
  }
  for (const DeviceWorkEvent& work : ListDeviceWork(trace)) {
    const int64_t dur = std::max<int64_t>(events.dur_ns[work.event], 0);
    result.device_work_ns += dur;
    if (result.replayed[work.event]) {
      ++result.replayed_events;
      result.replayed_ns += dur;
    }
  }
  return result;
}

}  // namespace tuneprof

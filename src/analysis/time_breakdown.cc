#include "analysis/time_breakdown.h"

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "analysis/device_work.h"
#include "analysis/intervals.h"

namespace tuneprof {
namespace {

constexpr size_t kOutsideSteps = std::numeric_limits<size_t>::max();
constexpr size_t kClasses = static_cast<size_t>(WorkClass::kCount);

// The device work attributed to one window, before measuring.
struct WindowWork {
  std::array<std::vector<Interval>, kClasses> by_class;
  int64_t first_start_ns = std::numeric_limits<int64_t>::max();
  int64_t last_end_ns = std::numeric_limits<int64_t>::min();
  uint64_t events = 0;

  void Add(WorkClass work, int64_t start_ns, int64_t end_ns) {
    by_class[static_cast<size_t>(work)].push_back(Interval{start_ns, end_ns});
    first_start_ns = std::min(first_start_ns, start_ns);
    last_end_ns = std::max(last_end_ns, end_ns);
    ++events;
  }
};

// Finds the step whose host range holds a timestamp. Steps are sorted by start; the running maximum of
// their ends bounds the look-back, so disjoint steps (the normal case) cost one binary search.
class StepLocator {
 public:
  explicit StepLocator(const std::vector<Step>& steps) : steps_(steps) {
    int64_t max_end = std::numeric_limits<int64_t>::min();
    for (const Step& step : steps) {
      max_end = std::max(max_end, step.end_ns);
      max_end_so_far_.push_back(max_end);
    }
  }

  // The latest-starting step with start <= ts < end, or kOutsideSteps.
  size_t StepAt(int64_t ts) const {
    auto it = std::upper_bound(steps_.begin(), steps_.end(), ts,
                               [](int64_t t, const Step& step) { return t < step.start_ns; });
    for (size_t k = static_cast<size_t>(it - steps_.begin()); k > 0 && max_end_so_far_[k - 1] > ts; --k) {
      if (ts < steps_[k - 1].end_ns) return k - 1;
    }
    return kOutsideSteps;
  }

 private:
  const std::vector<Step>& steps_;
  std::vector<int64_t> max_end_so_far_;
};

// Host runtime call that launched each device event (correlation links; flows are only viewer hints).
std::unordered_map<uint32_t, uint32_t> LaunchingCalls(const Trace& trace) {
  std::unordered_map<uint32_t, uint32_t> launcher;
  launcher.reserve(trace.links().size());
  for (const Link& link : trace.links()) {
    if (link.kind == LinkKind::kCorrelation) launcher.emplace(link.to, link.from);
  }
  return launcher;
}

uint64_t CountDevices(const Trace& trace, const std::vector<DeviceWorkEvent>& work) {
  std::unordered_set<uint32_t> devices;
  for (const DeviceWorkEvent& w : work) {
    const Track& track = trace.tracks()[trace.events().track[w.event]];
    devices.insert(trace.processes()[track.process].device);
  }
  return devices.size();
}

IntervalSet UnionOfClass(WindowWork* window, WorkClass work) {
  return UnionOf(std::move(window->by_class[static_cast<size_t>(work)]));
}

// Measures one window; each quantity is the part not already counted by the ones before it, so that
// they add up to the wall time.
void Measure(WindowWork* window, StepBreakdown* out) {
  out->device_events = window->events;
  if (window->events == 0) return;
  out->device_start_ns = window->first_start_ns;
  out->device_end_ns = window->last_end_ns;
  out->wall_ns = window->last_end_ns - window->first_start_ns;

  const IntervalSet compute = UnionOfClass(window, WorkClass::kCompute);
  const IntervalSet communication = UnionOfClass(window, WorkClass::kCommunication);
  const IntervalSet memory = UnionOfClass(window, WorkClass::kMemory);
  const IntervalSet other = UnionOfClass(window, WorkClass::kOther);

  out->computing_ns = TotalLength(compute);
  out->communication_ns = TotalLength(communication);
  out->overlapped_ns = IntersectionLength(communication, compute);
  out->communication_not_overlapped_ns = out->communication_ns - out->overlapped_ns;
  out->memory_ns = TotalLength(memory);

  const IntervalSet compute_or_communication = Unite(compute, communication);
  out->memcpy_ns = TotalLength(Subtract(memory, compute_or_communication));
  const IntervalSet busy_without_other = Unite(compute_or_communication, memory);
  out->other_ns = TotalLength(Subtract(other, busy_without_other));
  out->free_ns = out->wall_ns - TotalLength(Unite(busy_without_other, other));
}

}  // namespace

RankBreakdown ComputeTimeBreakdown(const Trace& trace) {
  RankBreakdown result;
  result.rank = trace.metadata().rank;
  result.path = trace.metadata().path;

  const std::vector<DeviceWorkEvent> work = ListDeviceWork(trace);
  result.device_events = work.size();
  result.devices = CountDevices(trace, work);

  const std::vector<Step>& steps = trace.steps();
  const bool whole_trace = steps.empty();
  std::vector<WindowWork> windows(whole_trace ? 1 : steps.size());
  const StepLocator locator(steps);
  const std::unordered_map<uint32_t, uint32_t> launcher = LaunchingCalls(trace);
  const EventTable& events = trace.events();

  for (const DeviceWorkEvent& w : work) {
    size_t window = 0;
    if (!whole_trace) {
      auto call = launcher.find(w.event);
      const int64_t anchor_ns = call != launcher.end() ? events.ts_ns[call->second] : events.ts_ns[w.event];
      window = locator.StepAt(anchor_ns);
    }
    if (window == kOutsideSteps) {
      ++result.device_events_outside_steps;
      continue;
    }
    windows[window].Add(w.work, events.ts_ns[w.event], events.end_ns(w.event));
  }

  for (size_t i = 0; i < windows.size(); ++i) {
    StepBreakdown step;
    if (!whole_trace) {
      step.step = steps[i].number;
      step.host_start_ns = steps[i].start_ns;
      step.host_end_ns = steps[i].end_ns;
    }
    Measure(&windows[i], &step);
    result.steps.push_back(step);
  }
  return result;
}

}  // namespace tuneprof

#include "analysis/breakdown/time_breakdown.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "analysis/breakdown/ascend_step_breakdown.h"
#include "analysis/breakdown/pipeline_waits.h"
#include "analysis/breakdown/one_off_region.h"
#include "analysis/breakdown/reported_steps.h"
#include "analysis/core/cpu_work.h"
#include "analysis/core/device_launches.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"
#include "base/enum_names.h"

namespace tuneprof {
namespace {

// How the producer of `trace` marks steps. msprof alone (an Ascend capture with no PyTorch operator on the
// host) has no prof.step() to call: its capture is the window.
std::string HowToMarkSteps(const Trace& trace) {
  const FormatFacts facts = FactsOf(trace.metadata().format);
  if (facts.nvtx_steps) return "wrap each iteration in an NVTX range (torch.cuda.nvtx.range(\"step\"))";
  const EventTable& e = trace.events();
  const bool pytorch_host = std::any_of(e.kind.begin(), e.kind.end(), [](EventKind k) {
    return k == EventKind::kHostOp || k == EventKind::kUserAnnotation || k == EventKind::kPythonFunction;
  });
  if (facts.ascend_profiler && !pytorch_host) {
    return "the capture has no PyTorch operators (msprof alone), so no step markers: capture whole iterations, or "
           "profile the training loop with torch_npu.profiler, which marks each step";
  }
  return "profile a few steps with torch.profiler.schedule and call prof.step() at each iteration";
}

constexpr size_t kOutsideSteps = std::numeric_limits<size_t>::max();
constexpr size_t kClasses = static_cast<size_t>(WorkClass::kCount);

// A step's breakdown with the device work events it holds, before the host side is measured.
struct Window {
  StepBreakdown breakdown;
  std::vector<uint32_t> events;
  std::vector<uint32_t> host_collectives;  // host_side.h: the device waits on them, not on the host
};

struct Windows {
  std::vector<Window> windows;
  uint64_t events_outside = 0;
};

// The device work attributed to one window, before measuring.
struct WindowWork {
  std::array<std::vector<Interval>, kClasses> by_class;
  std::vector<uint32_t> events;
  std::vector<uint32_t> host_collectives;
  // CPU-only: the step's threads inside collective calls (cpu_work.h IsCollectiveCall), no compute even
  // where an operator holds the call.
  std::vector<Interval> collective_calls;
  int64_t first_start_ns = std::numeric_limits<int64_t>::max();
  int64_t last_end_ns = std::numeric_limits<int64_t>::min();

  // `device`: false for host collectives beside device work (cpu_work.h), which count in the split but
  // are no device event.
  void Add(uint32_t event, WorkClass work, int64_t start_ns, int64_t end_ns, bool device) {
    // A fused compute + communication kernel counts once, as compute (device_work.h).
    const WorkClass counted = work == WorkClass::kFusedComm ? WorkClass::kCompute : work;
    by_class[static_cast<size_t>(counted)].push_back(Interval{start_ns, end_ns});
    (device ? events : host_collectives).push_back(event);
    first_start_ns = std::min(first_start_ns, start_ns);
    last_end_ns = std::max(last_end_ns, end_ns);
  }
};

// Finds the step whose host range holds a timestamp. Steps are sorted by start; the running maximum of
// their ends bounds the look-back, so disjoint steps (the normal case) cost one binary search.
class StepLocator {
 public:
  explicit StepLocator(const std::vector<Step>& steps) : steps_(steps), max_end_so_far_(RunningMaxEnds(steps)) {}

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

IntervalSet UnionOfClass(WindowWork* window, WorkClass work) {
  return UnionOf(std::move(window->by_class[static_cast<size_t>(work)]));
}

// Measures one window; each quantity is the part not already counted by the ones before it, so that
// they add up to the wall time.
void Measure(WindowWork* window, StepBreakdown* out) {
  out->device_events = window->events.size();
  if (window->events.empty()) return;
  out->device_start_ns = window->first_start_ns;
  out->device_end_ns = window->last_end_ns;
  out->wall_ns = window->last_end_ns - window->first_start_ns;

  const IntervalSet compute = window->collective_calls.empty() ? UnionOfClass(window, WorkClass::kCompute)
                                                               : Subtract(UnionOfClass(window, WorkClass::kCompute),
                                                                          UnionOf(std::move(window->collective_calls)));
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

// The smallest correlation id of a host runtime or driver call in the trace; kNoId without one.
int64_t FirstHostCorrelation(const EventTable& events) {
  int64_t first = kNoId;
  for (size_t i = 0; i < events.size(); ++i) {
    const bool call = events.kind[i] == EventKind::kRuntime || events.kind[i] == EventKind::kDriver;
    if (!call || events.correlation[i] == kNoId) continue;
    if (first == kNoId || events.correlation[i] < first) first = events.correlation[i];
  }
  return first;
}

// Device work whose launch the trace lacks, launched before the first host call the profiler recorded:
// correlation ids grow with every call, so it is work queued before the profiled window (the warm-up
// steps' kernels a busy device was still running) and belongs to no profiled step.
bool LaunchedBeforeTrace(const EventTable& events, uint32_t event, int64_t launch_ns, int64_t first_correlation) {
  return launch_ns == kNoId && first_correlation != kNoId && events.correlation[event] != kNoId &&
         events.correlation[event] < first_correlation;
}

// tuneprof's definitions: device work goes to the step whose host range holds its launch.
Windows TuneprofWindows(const Trace& trace, std::span<const DeviceWorkEvent> work, const LaunchTimes& launch) {
  const std::vector<Step>& steps = trace.steps();
  const bool whole_trace = steps.empty();
  std::vector<WindowWork> works(whole_trace ? 1 : steps.size());
  const StepLocator locator(steps);
  const EventTable& events = trace.events();
  const int64_t first_correlation = whole_trace ? kNoId : FirstHostCorrelation(events);
  // On a CPU-only trace the host work is the work; beside device work, host collectives are not events.
  const bool cpu_only = std::none_of(work.begin(), work.end(),
                                     [&](const DeviceWorkEvent& w) { return IsDeviceKind(events.kind[w.event]); });
  Windows result;
  for (const DeviceWorkEvent& w : work) {
    size_t window = 0;
    if (LaunchedBeforeTrace(events, w.event, launch[w.event], first_correlation)) {
      window = kOutsideSteps;
    } else if (!whole_trace) {
      window = locator.StepAt(launch[w.event] != kNoId ? launch[w.event] : events.ts_ns[w.event]);
    }
    if (window == kOutsideSteps) {
      ++result.events_outside;
      continue;
    }
    works[window].Add(w.event, w.work, events.ts_ns[w.event], events.end_ns(w.event),
                      cpu_only || IsDeviceKind(events.kind[w.event]));
    if (cpu_only && w.work == WorkClass::kCommunication && IsCollectiveCall(trace, w.event)) {
      works[window].collective_calls.push_back(Interval{events.ts_ns[w.event], events.end_ns(w.event)});
    }
  }
  for (size_t i = 0; i < works.size(); ++i) {
    Window window;
    if (!whole_trace) {
      window.breakdown.step = steps[i].number;
      window.breakdown.host_start_ns = steps[i].start_ns;
      window.breakdown.host_end_ns = steps[i].end_ns;
    }
    Measure(&works[i], &window.breakdown);
    window.events = std::move(works[i].events);
    window.host_collectives = std::move(works[i].host_collectives);
    result.windows.push_back(std::move(window));
  }
  return result;
}

Windows TorchNpuWindows(const Trace& trace, std::span<const DeviceWorkEvent> work,
                        const std::vector<TorchNpuStepRange>& ranges) {
  TorchNpuSteps steps = MeasureTorchNpuSteps(trace, work, ranges);
  Windows result;
  result.events_outside = steps.events_outside_steps;
  for (TorchNpuStep& step : steps.steps) result.windows.push_back(Window{step.breakdown, std::move(step.events), {}});
  return result;
}

// Steps are disjoint in their device work, so their times add up; the host side is measured again over
// all of it (percentiles and queue depth do not add).
StepBreakdown TotalOf(const Trace& trace, const std::vector<Window>& windows, const LaunchTimes& launch) {
  StepBreakdown total;
  std::vector<uint32_t> events, host_collectives;
  for (const Window& window : windows) {
    const StepBreakdown& s = window.breakdown;
    if (s.device_start_ns != kNoId) {
      const bool first = total.device_start_ns == kNoId;
      total.device_start_ns = first ? s.device_start_ns : std::min(total.device_start_ns, s.device_start_ns);
      total.device_end_ns = std::max(total.device_end_ns, s.device_end_ns);
    }
    total.device_events += s.device_events;
    total.wall_ns += s.wall_ns;
    total.computing_ns += s.computing_ns;
    total.communication_ns += s.communication_ns;
    total.overlapped_ns += s.overlapped_ns;
    total.communication_not_overlapped_ns += s.communication_not_overlapped_ns;
    total.memory_ns += s.memory_ns;
    total.memcpy_ns += s.memcpy_ns;
    total.other_ns += s.other_ns;
    total.free_ns += s.free_ns;
    total.bubble_ns += s.bubble_ns;
    events.insert(events.end(), window.events.begin(), window.events.end());
    host_collectives.insert(host_collectives.end(), window.host_collectives.begin(), window.host_collectives.end());
  }
  total.host = MeasureHostSide(trace, events, launch, host_collectives);
  return total;
}

struct StepsAndTotal {
  std::vector<StepBreakdown> steps;
  std::vector<StepBreakdown> incomplete_steps;  // cut off by the trace's end
  std::vector<StepBreakdown> stopped_steps;     // trailing steps without device work: the profiler stopped
  StepBreakdown total;
  uint64_t events_outside = 0;
};

// Where a cut-off trace stops being whole. kNoId: it is complete. kAllIncomplete: every step may miss work.
constexpr int64_t kAllIncomplete = std::numeric_limits<int64_t>::min() + 1;

// A trace without steps is one window, read as far as the trace goes; it is incomplete only when the
// device work is missing altogether.
bool Incomplete(const StepBreakdown& step, int64_t cut_ns) {
  if (cut_ns == kNoId) return false;
  if (cut_ns == kAllIncomplete) return true;
  return step.step.has_value() && std::max(step.host_end_ns, step.device_end_ns) > cut_ns;
}

// The steps at the end of a device trace in which the device ran nothing while earlier steps ran work:
// the profiler stopped (its last ProfilerStep closes after the kernels were flushed, or before the
// next iteration launched any). Such a step measures the profiler, not the model.
std::set<int64_t> TrailingStepsWithoutWork(const std::vector<Window>& windows) {
  std::set<int64_t> stopped;
  size_t end = windows.size();
  while (end > 0 && windows[end - 1].breakdown.step && windows[end - 1].breakdown.device_events == 0) --end;
  if (end == 0) return {};  // no step ran device work: nothing to tell the trailing ones apart from
  for (size_t i = end; i < windows.size(); ++i) stopped.insert(*windows[i].breakdown.step);
  return stopped;
}

// `stopped`: the steps the profiler stopped in (TrailingStepsWithoutWork), left out like cut-off steps;
// nullopt: decide them from these windows and set them (the rank's own call; its devices reuse them).
StepsAndTotal BreakdownOf(const Trace& trace, std::span<const DeviceWorkEvent> work, const LaunchTimes& launch,
                          const std::optional<std::vector<TorchNpuStepRange>>& torch_npu_ranges, int64_t cut_ns,
                          std::optional<std::set<int64_t>>* stopped) {
  Windows windows =
      torch_npu_ranges ? TorchNpuWindows(trace, work, *torch_npu_ranges) : TuneprofWindows(trace, work, launch);
  StepsAndTotal result;
  result.events_outside = windows.events_outside;
  if (!stopped->has_value()) *stopped = TrailingStepsWithoutWork(windows.windows);
  std::vector<Window> complete;
  for (Window& window : windows.windows) {
    window.breakdown.host = MeasureHostSide(trace, window.events, launch, window.host_collectives);
    const bool profiler_stopped = window.breakdown.step && (*stopped)->contains(*window.breakdown.step);
    if (profiler_stopped) {
      result.stopped_steps.push_back(window.breakdown);
    } else if (Incomplete(window.breakdown, cut_ns)) {
      result.incomplete_steps.push_back(window.breakdown);
    } else {
      result.steps.push_back(window.breakdown);
      complete.push_back(std::move(window));
    }
  }
  result.total = TotalOf(trace, complete, launch);
  return result;
}

// Events a file holds are in file order, which profilers write close to time order but not exactly
// (device work is flushed in batches): the earliest start among the last ones read bounds where work
// can be missing.
constexpr size_t kCutWindowEvents = 256;

// A trace cut before any device work, whose other records show there was some (torch_npu's
// kernel_details / step_trace_time, or launches on the host), is not a CPU-only trace.
bool DeviceWorkExpected(const Trace& trace) {
  if (!trace.kernel_details().rows.empty() || !trace.reported_step_times().empty()) return true;
  const EventTable& e = trace.events();
  for (size_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] == EventKind::kRuntime || e.kind[i] == EventKind::kDriver) return true;
  }
  return false;
}

int64_t CutTime(const Trace& trace, bool device_work_missing) {
  if (!trace.metadata().truncated) return kNoId;
  if (device_work_missing) return kAllIncomplete;
  const EventTable& e = trace.events();
  int64_t cut = std::numeric_limits<int64_t>::max();
  for (size_t i = e.size() > kCutWindowEvents ? e.size() - kCutWindowEvents : 0; i < e.size(); ++i) {
    cut = std::min(cut, e.ts_ns[i]);
  }
  return e.size() == 0 ? kAllIncomplete : cut;
}

// "steps 3, 4", or "its one window" for a trace without steps.
std::string StepList(const std::vector<StepBreakdown>& steps) {
  if (!steps.front().step) return "its one window (no steps)";
  std::string list = "steps";
  for (const StepBreakdown& s : steps) list += (list.size() > 5 ? ", " : " ") + std::to_string(*s.step);
  return list;
}

uint32_t DeviceOf(const Trace& trace, uint32_t event) {
  const Track& track = trace.tracks()[trace.events().track[event]];
  return trace.processes()[track.process].device;
}

// Device work split by device, in device order (work on an unidentified device last).
std::map<uint32_t, std::vector<DeviceWorkEvent>> WorkByDevice(const Trace& trace,
                                                              const std::vector<DeviceWorkEvent>& work) {
  std::map<uint32_t, std::vector<DeviceWorkEvent>> by_device;
  for (const DeviceWorkEvent& w : work) by_device[DeviceOf(trace, w.event)].push_back(w);
  return by_device;
}

DeviceTimeBreakdown DeviceBreakdownOf(const Trace& trace, uint32_t device, StepsAndTotal measured) {
  DeviceTimeBreakdown out;
  out.device = device;
  if (device != kNoIndex) {
    out.type = trace.devices()[device].type;
    out.id = trace.devices()[device].id;
  }
  out.steps = std::move(measured.steps);
  out.incomplete_steps = std::move(measured.incomplete_steps);
  out.incomplete_steps.insert(out.incomplete_steps.end(), measured.stopped_steps.begin(), measured.stopped_steps.end());
  out.total = measured.total;
  out.device_events_outside_steps = measured.events_outside;
  return out;
}

}  // namespace

std::string_view StepDefinitionsName(StepDefinitions definitions) {
  static constexpr std::array<std::string_view, 2> kNames = {"tuneprof", "torch_npu"};
  return EnumName(definitions, kNames, "unknown");
}

std::string_view WorkSourceName(WorkSource source) {
  static constexpr std::array<std::string_view, 2> kNames = {"device", "cpu"};
  return EnumName(source, kNames, "unknown");
}

namespace {

// `ns` in microseconds with one decimal, rounded half up (ns >= 0).
std::string MicrosText(int64_t ns) {
  const int64_t tenths = ns / 100 + (ns % 100 >= 50 ? 1 : 0);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

// Device work whose start precedes its launch, among the work with a known launch: the host's and the
// device's clocks disagree there, by at least the largest such lead. Said with the share and that lead,
// since the latencies count such work as 0.
std::optional<std::string> StartsBeforeLaunch(const Trace& trace, std::span<const DeviceWorkEvent> work,
                                              const LaunchTimes& launch) {
  uint64_t launched = 0, early = 0;
  int64_t lead_ns = 0;
  for (const DeviceWorkEvent& w : work) {
    if (launch[w.event] == kNoId) continue;
    ++launched;
    const int64_t start = trace.events().ts_ns[w.event];
    if (start >= launch[w.event]) continue;
    ++early;
    lead_ns = std::max(lead_ns, launch[w.event] - start);
  }
  if (early == 0) return std::nullopt;
  const bool one = early == 1;
  return trace.metadata().path + ": " + std::to_string(early) + " of " + std::to_string(launched) +
         " launched device event" + (launched == 1 ? "" : "s") + (one ? " starts" : " start") + " up to " +
         MicrosText(lead_ns) + " us before " + (one ? "its" : "their") +
         " launch (the host's and the device's clocks disagree by that much): " + (one ? "its" : "their") +
         " launch latency is counted as 0";
}

// Steps the totals leave out (the profiler stopped, the trace is cut) or a trace without steps, said.
void WarnAboutSteps(const Trace& trace, size_t device_work, bool device_work_missing,
                    const std::vector<StepBreakdown>& stopped_steps, RankBreakdown* result) {
  if (!stopped_steps.empty()) {
    result->warnings.push_back(result->path + ": " + StepList(stopped_steps) +
                               " at the end of the trace ran no device work while the steps before did (the "
                               "profiler stopped): marked incomplete and left out of the totals, means and verdicts");
  }
  if (result->incomplete_steps.size() > stopped_steps.size()) {
    std::vector<StepBreakdown> cut(result->incomplete_steps.begin(),
                                   result->incomplete_steps.end() - static_cast<ptrdiff_t>(stopped_steps.size()));
    result->warnings.push_back(
        result->path + ": " +
        (device_work_missing ? "trace is cut off before any of the device work its other records show; "
                             : "trace is cut off; ") +
        StepList(cut) + " may miss work: marked incomplete and left out of the totals, means and verdicts");
  } else if (device_work_missing && stopped_steps.empty()) {
    result->warnings.push_back(result->path +
                               ": trace is cut off before any of the device work its other records show; "
                               "no device time is measured");
  } else if (device_work > 0 && stopped_steps.empty() &&
             std::none_of(result->steps.begin(), result->steps.end(),
                          [](const StepBreakdown& step) { return step.step.has_value(); })) {
    // Per-step figures are then the whole trace's, one-off work (initialization, a first compile) included.
    const bool nvtx_steps = FactsOf(trace.metadata().format).nvtx_steps;
    const std::optional<OneOffRegion> one_off = FindOneOffRegion(trace);
    result->warnings.push_back(result->path + ": no steps marked" +
                               (nvtx_steps ? " (ProfilerStep#N or repeating NVTX ranges)" : " (ProfilerStep#N)") +
                               ": the whole trace counts as one step, one-off work such as initialization included" +
                               (one_off ? " (here '" + one_off->name + "', which runs once)" : std::string()) + "; " +
                               HowToMarkSteps(trace));
  }
}

// Each device's own breakdown where the rank drove several, the host's collectives counted on each.
void AddDeviceBreakdowns(const Trace& trace, const std::vector<DeviceWorkEvent>& work,
                         const std::vector<DeviceWorkEvent>& host_collectives, const LaunchTimes& launch,
                         const std::optional<std::vector<TorchNpuStepRange>>& torch_npu_ranges, int64_t cut_ns,
                         std::optional<std::set<int64_t>>* stopped, RankBreakdown* result) {
  const std::map<uint32_t, std::vector<DeviceWorkEvent>> by_device = WorkByDevice(trace, work);
  result->device_count = by_device.size();
  if (by_device.size() <= 1) return;
  for (auto [device, device_work_of] : by_device) {
    device_work_of.insert(device_work_of.end(), host_collectives.begin(), host_collectives.end());
    result->devices.push_back(DeviceBreakdownOf(
        trace, device, BreakdownOf(trace, device_work_of, launch, torch_npu_ranges, cut_ns, stopped)));
  }
}

}  // namespace

int64_t StepTimeNs(const StepBreakdown& step, StepDefinitions definitions) {
  if (definitions == StepDefinitions::kTorchNpu) return step.wall_ns;
  const bool host_range = step.host_start_ns != kNoId && step.host_end_ns != kNoId;
  return host_range ? std::max(step.host_end_ns - step.host_start_ns, step.wall_ns) : step.wall_ns;
}

namespace {

RankBreakdown MeasureTimeBreakdown(const Trace& trace) {
  RankBreakdown result;
  result.rank = trace.metadata().rank;
  result.path = trace.metadata().path;

  std::vector<DeviceWorkEvent> work = ListDeviceWork(trace);
  const bool device_work_missing = work.empty() && trace.metadata().truncated && DeviceWorkExpected(trace);
  if (work.empty() && !device_work_missing) {
    work = ListCpuWork(trace);
    if (!work.empty()) result.work_on = WorkSource::kCpu;
  }
  const FormatFacts facts = FactsOf(trace.metadata().format);
  if (work.empty() && facts.ascend_profiler && BreakdownFromReported(trace, &result)) return result;
  const size_t device_work = work.size();
  if (result.work_on == WorkSource::kDevice) AppendHostCollectives(trace, &work);
  const int64_t cut_ns = CutTime(trace, device_work_missing);
  const LaunchTimes launch = FindLaunchTimes(trace);
  std::optional<std::vector<TorchNpuStepRange>> torch_npu_ranges;
  if (facts.ascend_profiler) {
    result.definitions = StepDefinitions::kTorchNpu;
    torch_npu_ranges = TorchNpuStepRanges(trace, launch);
  }

  // Only a device trace's steps can lack device work because the profiler stopped; a CPU-only one's
  // work is its host threads', and torch_npu's steps follow its own step_trace_time definitions.
  std::optional<std::set<int64_t>> stopped;
  if (result.work_on != WorkSource::kDevice || device_work == 0 || torch_npu_ranges) stopped.emplace();
  StepsAndTotal all = BreakdownOf(trace, work, launch, torch_npu_ranges, cut_ns, &stopped);
  result.device_events = device_work;
  result.device_events_outside_steps = all.events_outside;
  result.steps = std::move(all.steps);
  result.incomplete_steps = std::move(all.incomplete_steps);
  const std::vector<StepBreakdown> stopped_steps = all.stopped_steps;
  result.incomplete_steps.insert(result.incomplete_steps.end(), stopped_steps.begin(), stopped_steps.end());
  result.total = all.total;
  // A window without a step number is the whole cut trace, no step torch_npu counted.
  const auto numbered = static_cast<size_t>(std::count_if(
      result.steps.begin(), result.steps.end(), [](const StepBreakdown& step) { return step.step.has_value(); }));
  if (FallBackFromCutTimeline(trace, numbered, device_work_missing, &result)) return result;
  if (auto early = StartsBeforeLaunch(trace, std::span(work).first(device_work), launch)) {
    result.warnings.push_back(std::move(*early));
  }
  WarnAboutSteps(trace, device_work, device_work_missing, stopped_steps, &result);
  const std::vector<DeviceWorkEvent> host_collectives(work.begin() + static_cast<ptrdiff_t>(device_work), work.end());
  work.resize(device_work);
  AddDeviceBreakdowns(trace, work, host_collectives, launch, torch_npu_ranges, cut_ns, &stopped, &result);
  return result;
}

}  // namespace

RankBreakdown ComputeTimeBreakdown(const Trace& trace) {
  RankBreakdown result = MeasureTimeBreakdown(trace);
  SplitOutPipelineBubble(trace, &result);
  return result;
}

}  // namespace tuneprof

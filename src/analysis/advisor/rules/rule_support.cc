#include "analysis/advisor/rules/rule_support.h"

#include <fmt/format.h>

#include <vector>

#include "analysis/core/device_launches.h"
#include "analysis/core/device_work.h"

namespace tuneprof {

Platform PlatformOf(const RankEvidence& rank) {
  if (rank.split.cpu_only) return Platform::kCpu;
  return rank.on_npu ? Platform::kNpu : Platform::kCuda;
}

std::string_view ForPlatform(const RankEvidence& rank, std::string_view cuda, std::string_view npu,
                             std::string_view cpu) {
  switch (PlatformOf(rank)) {
    case Platform::kCuda:
      return cuda;
    case Platform::kNpu:
      return npu;
    case Platform::kCpu:
      return cpu;
  }
  return cuda;
}

double PerStep(const RankEvidence& rank, double total_ns) {
  return rank.split.steps == 0 ? 0 : total_ns / static_cast<double>(rank.split.steps);
}

double PctOfStep(const RankEvidence& rank, double per_step_ns) {
  return rank.split.step_ns > 0 ? 100 * per_step_ns / rank.split.step_ns : 0;
}

bool RunsBackward(const Trace& trace) {
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] == EventKind::kHostOp &&
        trace.str(events.name[i]).starts_with("autograd::engine::evaluate_function")) {
      return true;
    }
  }
  return false;
}

std::string FormatDuration(double ns) {
  if (ns >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.1f} us", ns / 1e3);
}

IntervalSet QueuedDeviceWork(const Trace& trace, uint32_t device) {
  const LaunchTimes launch = FindLaunchTimes(trace);
  const EventTable& events = trace.events();
  std::vector<Interval> queued;
  for (const DeviceWorkEvent& work : ListDeviceWork(trace)) {
    if (device != kNoIndex && trace.processes()[trace.tracks()[events.track[work.event]].process].device != device) {
      continue;
    }
    const int64_t at = work.event < launch.size() ? launch[work.event] : kNoId;
    if (at != kNoId && at < events.ts_ns[work.event]) queued.push_back(Interval{at, events.ts_ns[work.event]});
  }
  return UnionOf(std::move(queued));
}

void SayQueuedIdle(double queued_idle_ns, Finding* f) {
  f->title += ", with launched work queued for most of the idle time";
  f->AddNumber("idle_with_work_queued_us", queued_idle_ns / 1e3, "us");
  f->strategy =
      "The device sat idle while launched work waited in its queue: it waits on events, other streams or "
      "work not in the trace (another process on the device, a collective's peer), not on the host; a larger "
      "batch does not shorten it. Find what the queued work waits for.";
  f->apis = {"torch.profiler / nsys on every process sharing the device; look for cudaStreamWaitEvent, "
             "event records and cross-stream dependencies before the queued kernels"};
}

}  // namespace tuneprof

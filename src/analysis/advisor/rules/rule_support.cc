#include "analysis/advisor/rules/rule_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <unordered_map>
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

namespace {

// The device work `events` stand for, each once: device events themselves, host events what they launched.
std::vector<uint32_t> EvidenceWork(const Trace& trace, const ModuleAttribution& modules,
                                   std::span<const uint32_t> events) {
  const EventTable& table = trace.events();
  std::vector<uint32_t> work;
  for (const uint32_t e : events) {
    if (trace.tracks()[table.track[e]].on_device) {
      work.push_back(e);
    } else {
      modules.LaunchedWithin(table.track[e], table.ts_ns[e], table.end_ns(e), &work);
    }
  }
  std::sort(work.begin(), work.end());
  work.erase(std::unique(work.begin(), work.end()), work.end());
  return work;
}

}  // namespace

void SayModules(const RankEvidence& rank, std::span<const uint32_t> events, Finding* f) {
  if (rank.modules == nullptr || rank.modules->empty() || rank.trace == nullptr) return;
  const ModuleAttribution& modules = *rank.modules;
  const EventTable& table = rank.trace->events();
  int64_t total = 0;
  std::unordered_map<std::string_view, int64_t> by_path;  // rolled-up layers share one path
  for (const uint32_t w : EvidenceWork(*rank.trace, modules, events)) {
    const std::optional<uint32_t> module = modules.ModuleOf(w);
    if (!module) continue;  // not work the view measures (a sync, a wait)
    const int64_t ns = std::max<int64_t>(table.dur_ns[w], 0);
    total += ns;
    if (*module != kNoIndex) by_path[modules.Name(*module)] += ns;
  }
  if (total <= 0) return;
  std::vector<std::pair<std::string_view, int64_t>> ranked(by_path.begin(), by_path.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return std::tie(b.second, a.first) < std::tie(a.second, b.first);
  });
  for (const auto& [path, ns] : ranked) {
    const double share = static_cast<double>(ns) / static_cast<double>(total);
    if (share < kModuleMinShare || f->modules.size() == kMaxModules) break;
    f->modules.push_back(ModuleShare{std::string(path), share});
  }
}

}  // namespace tuneprof

#include "analysis/advisor/rules/rule_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/core/device_launches.h"
#include "analysis/core/device_work.h"

namespace tuneprof {

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

std::optional<Finding> ExposedPartFinding(const RankEvidence& rank, const AdvisorConfig& config, TimePart part,
                                          std::string_view threshold_key, std::string_view id, std::string_view what,
                                          std::string_view under) {
  const double exposed = rank.split.part(part);
  const double pct = PctOfStep(rank, exposed);
  if (exposed <= 0 || pct < config.Get(threshold_key)) return std::nullopt;
  Finding f = NewFinding(id, rank, config);
  f.title = fmt::format("{:.1f} % of the step is {} not hidden under {} ({} per step)", pct, what, under,
                        FormatDuration(exposed));
  f.value = pct;
  return f;
}

IntervalSet QueuedDeviceWork(const RankEvidence& rank, uint32_t device) {
  const Trace& trace = *rank.trace;
  const LaunchTimes launch = FindLaunchTimes(trace);
  const EventTable& events = trace.events();
  std::vector<Interval> queued;
  for (const DeviceWorkEvent& work : rank.device_work.List(trace)) {
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
  f->apis = {
      "torch.profiler / nsys on every process sharing the device; look for cudaStreamWaitEvent, "
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
  const EventTable& table = rank.trace->events();
  std::vector<WeightedWork> work;
  for (const uint32_t w : EvidenceWork(*rank.trace, *rank.modules, events)) {
    work.push_back(WeightedWork{w, std::max<int64_t>(table.dur_ns[w], 0)});
  }
  SayModulesOfWork(rank, work, f);
}

namespace {

// Names on `f` the modules holding `kModuleMinShare` or more of `total`, from each module's time (by
// index into `modules`); rolled-up layers share one name, so their times are summed by name.
void NameModules(const ModuleAttribution& modules, const std::unordered_map<uint32_t, int64_t>& by_module,
                 int64_t total, Finding* f) {
  if (total <= 0) return;
  std::unordered_map<std::string_view, int64_t> by_path;
  for (const auto& [module, ns] : by_module) by_path[modules.Name(module)] += ns;
  std::vector<std::pair<std::string_view, int64_t>> ranked(by_path.begin(), by_path.end());
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return std::tie(b.second, a.first) < std::tie(a.second, b.first); });
  for (const auto& [path, ns] : ranked) {
    const double share = static_cast<double>(ns) / static_cast<double>(total);
    if (share < kModuleMinShare || f->modules.size() == kMaxModules) break;
    f->modules.push_back(ModuleShare{std::string(path), share});
  }
}

}  // namespace

void SayModulesOfWork(const RankEvidence& rank, std::span<const WeightedWork> work, Finding* f) {
  if (rank.modules == nullptr || rank.modules->empty()) return;
  int64_t total = 0;
  std::unordered_map<uint32_t, int64_t> by_module;
  for (const WeightedWork& w : work) {
    const std::optional<uint32_t> module = rank.modules->ModuleOf(w.event);
    if (!module || w.ns <= 0) continue;  // not work the view measures (a sync, a wait)
    total += w.ns;
    if (*module != kNoIndex) by_module[*module] += w.ns;
  }
  NameModules(*rank.modules, by_module, total, f);
}

void SayModulesOfHostTime(const RankEvidence& rank, std::span<const WeightedWork> calls, Finding* f) {
  if (rank.modules == nullptr || rank.modules->empty() || rank.trace == nullptr) return;
  const EventTable& events = rank.trace->events();
  std::vector<ModuleAttribution::HostPoint> points;
  points.reserve(calls.size());
  for (const WeightedWork& c : calls) points.push_back({events.track[c.event], events.ts_ns[c.event]});
  const std::vector<uint32_t> around = rank.modules->ModulesAround(points);
  int64_t total = 0;
  std::unordered_map<uint32_t, int64_t> by_module;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].ns <= 0) continue;
    total += calls[i].ns;
    if (around[i] != kNoIndex) by_module[around[i]] += calls[i].ns;
  }
  NameModules(*rank.modules, by_module, total, f);
}

void SayModulesOfRows(const RankEvidence& rank, std::span<const uint32_t> rows, Finding* f) {
  if (rank.modules == nullptr || rank.modules->empty() || rank.trace == nullptr || rows.empty()) return;
  const Trace& trace = *rank.trace;
  const std::vector<uint32_t> launchers = DeviceLaunchers(trace);
  const std::vector<uint32_t> tasks = KernelDetailTasks(trace, launchers);
  const EventTable& events = trace.events();
  const std::vector<NpuOpRow>& all = trace.kernel_details().rows;
  std::vector<uint32_t> module_of(rows.size(), kNoIndex);
  // Tasks the view does not measure are placed by their launching operator, in one sweep.
  std::vector<ModuleAttribution::HostPoint> points;
  std::vector<size_t> placed;
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint32_t task = tasks[rows[i]];
    if (task == kNoIndex) continue;
    const std::optional<uint32_t> module = rank.modules->ModuleOf(task);
    if (module) {
      module_of[i] = *module;
      continue;
    }
    const uint32_t op = launchers[task];
    points.push_back({events.track[op], events.ts_ns[op]});
    placed.push_back(i);
  }
  const std::vector<uint32_t> around = rank.modules->ModulesAround(points);
  for (size_t p = 0; p < placed.size(); ++p) module_of[placed[p]] = around[p];
  int64_t total = 0;
  std::unordered_map<uint32_t, int64_t> by_module;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t ns = all[rows[i]].dur_ns;
    if (ns <= 0) continue;
    total += ns;
    if (module_of[i] != kNoIndex) by_module[module_of[i]] += ns;
  }
  NameModules(*rank.modules, by_module, total, f);
}

std::vector<WeightedWork> ExposedCommunicationWork(const RankEvidence& rank) {
  const Trace& trace = *rank.trace;
  const EventTable& events = trace.events();
  const std::vector<DeviceWorkEvent>& work = rank.device_work.List(trace);
  // A device is its process in the trace (Kineto draws each GPU as one), whether or not the trace names it.
  const auto device_of = [&](uint32_t e) { return trace.tracks()[events.track[e]].process; };
  std::unordered_map<uint32_t, std::vector<Interval>> computing;  // by device
  for (const DeviceWorkEvent& w : work) {
    if (Computes(w.work)) computing[device_of(w.event)].push_back({events.ts_ns[w.event], events.end_ns(w.event)});
  }
  std::unordered_map<uint32_t, IntervalSet> busy;
  for (auto& [device, spans] : computing) busy[device] = UnionOf(std::move(spans));
  std::vector<WeightedWork> exposed;
  for (const DeviceWorkEvent& w : work) {
    if (w.work != WorkClass::kCommunication) continue;
    const Interval span{events.ts_ns[w.event], events.end_ns(w.event)};
    const auto it = busy.find(device_of(w.event));
    const int64_t hidden = it == busy.end() ? 0 : OverlapLength(it->second, span);
    if (span.length() - hidden > 0) exposed.push_back(WeightedWork{w.event, span.length() - hidden});
  }
  return exposed;
}

std::string_view ExpertAllToAllOverlapApis(const RankEvidence& rank) {
  return ForPlatform(
      rank,
      "Megatron-LM: --moe-token-dispatcher-type flex --moe-enable-deepep; SGLang: --enable-two-batch-overlap; "
      "DeepEP: Buffer.low_latency_dispatch(..., return_recv_hook=True)",
      "MindSpeed: --moe-alltoall-overlap-comm; MC2 fused dispatch / combine (torch_npu npu_moe_distribute_dispatch "
      "/ npu_moe_distribute_combine)",
      "overlap the MoE all-to-all with compute (two-batch overlap)");
}

bool MostOf(uint64_t part, uint64_t whole) { return whole > 0 && 2 * part >= whole; }

}  // namespace tuneprof

// host.launch_bound (GPU/NPU): the device sits idle waiting for the host to launch work (time_breakdown
// host wait, DataLoader waits and host pauses taken out: those are the host busy elsewhere, and no graph
// capture shortens them), above 5 % of the step.
// host.pauses (GPU/NPU): the host pauses (host_side.h: device gaps of 10 ms or more ended by a launch
// issued after the device drained), above 5 % of the step: time the host spends on something other than
// launching (sleep, blocking I/O, CPU work, evaluation, logging). Gain: the pauses' time. host.framework_overhead (CPU-only
// traces): the main thread's time outside any operator plus the time in operators too short to do
// real work (time_split.h dispatch_ns), the framework's and Python's per-op overhead.
// Gain: that time (CUDA graphs or a compiler replace per-op launches with one).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/breakdown/one_off_region.h"
#include "analysis/core/cpu_work.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

// host.launch_bound speaks of stalls, not launches, when gaps of kHostStallNs or more hold this share of
// the wait; a launch-bound rank whose stalls hold kStallsNamedShareOfWait of it or more is told where they
// are as well, so that the advice does not switch from all launches to all stalls at one share.
constexpr double kStallShareOfWait = 0.5;
constexpr double kStallsNamedShareOfWait = 0.1;

struct KernelSizes {
  uint64_t count = 0;
  uint64_t tiny = 0;
  double median_ns = 0;
};

KernelSizes MeasureKernels(const RankEvidence& rank, double tiny_ns) {
  const EventTable& events = rank.trace->events();
  std::vector<int64_t> durations;
  for (const DeviceWorkEvent& work : rank.device_work.List(*rank.trace)) {
    if (Computes(work.work)) durations.push_back(events.dur_ns[work.event]);
  }
  KernelSizes sizes;
  sizes.count = durations.size();
  if (durations.empty()) return sizes;
  sizes.tiny = static_cast<uint64_t>(
      std::count_if(durations.begin(), durations.end(), [&](int64_t d) { return static_cast<double>(d) < tiny_ns; }));
  std::nth_element(durations.begin(), durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2),
                   durations.end());
  sizes.median_ns = static_cast<double>(durations[durations.size() / 2]);
  return sizes;
}

// A run that already replays CUDA graphs waits for the host between replays and in the code left eager:
// the advice is to shrink that remainder, not to adopt graphs. A replay's kernels all carry the graph
// launch's time, so inside a replay no gap counts as host wait; only the gap before a replay can.
void AddGraphContext(const RankEvidence& rank, Finding* f) {
  const GraphReplays& graphs = rank.compute->graphs;
  f->AddNumber("graph_launches_per_step", PerStep(rank, static_cast<double>(graphs.launches)), "count");
  f->AddNumber("graph_replayed_pct", 100.0 * graphs.replayed_share(), "% of device-work time");
  f->strategy = fmt::format(
      "The run already replays CUDA graphs ({:.1f} % of device-work time): the device waits for the eager "
      "remainder and for the host between replays. Bring the eager part into the compiled region (find its "
      "graph breaks), prepare the next replay's inputs while the current one runs, and keep synchronizing calls "
      "out of the loop.",
      100.0 * graphs.replayed_share());
  f->apis = {"TORCH_LOGS=graph_breaks (torch.compile)", "torch._dynamo.explain(model)(inputs)"};
}

// A synchronizing runtime call this long blocks the host as a stall does (host_side.h kHostStallNs).
constexpr int64_t kStallSyncNs = 1'000'000;
constexpr size_t kStallSitesNamed = 3;

struct StallSites {
  bool frames = false;  // the trace holds Python frames or recorded stacks
  std::string sites;    // "main.py(509): display 91.7 ms (1 call); ..." by time, "" when none
  std::string top;      // the longest one's site alone
};

// Where the host blocks in synchronizing calls of a millisecond or more (the stalls' usual cause: .item(),
// printing a tensor), as the user's source lines around them, longest first; whether the trace has frames
// at all, so that a run that recorded them is not told to record them.
StallSites FindStallSites(const RankEvidence& rank) {
  const Trace& trace = *rank.trace;
  const EventTable& events = trace.events();
  StallSites out;
  CallSites sites(trace, rank.tree);
  std::map<std::string, std::pair<int64_t, uint64_t>> by_site;
  for (uint32_t e = 0; e < events.size(); ++e) {
    if (events.kind[e] == EventKind::kPythonFunction) out.frames = true;
    if (events.kind[e] != EventKind::kRuntime || events.dur_ns[e] < kStallSyncNs) continue;
    const std::string_view name = trace.str(events.name[e]);
    if (name.find("Synchronize") == std::string_view::npos) continue;
    const std::string& site = sites.Of(e);
    if (site.empty()) continue;
    out.frames = true;
    auto& [ns, calls] = by_site[site];
    ns += events.dur_ns[e];
    ++calls;
  }
  std::vector<std::pair<std::string, std::pair<int64_t, uint64_t>>> sorted(by_site.begin(), by_site.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  if (!sorted.empty()) out.top = sorted.front().first;
  for (size_t i = 0; i < sorted.size() && i < kStallSitesNamed; ++i) {
    out.sites += fmt::format("{}{} {} ({} call{})", i == 0 ? "" : "; ", sorted[i].first,
                             FormatDuration(static_cast<double>(sorted[i].second.first)), sorted[i].second.second,
                             sorted[i].second.second == 1 ? "" : "s");
  }
  return out;
}

// The stalled branch's pointer at what the host runs in the gaps: the call sites where the trace names them,
// the capture that records them only where it has no frames.
void SayWhereTheHostStalls(const RankEvidence& rank, Finding* f) {
  const StallSites stall = FindStallSites(rank);
  if (!stall.sites.empty()) {
    f->AddText("stall_call_sites", stall.sites);
    f->strategy += " The synchronizing calls of 1 ms or more are made at " + stall.sites + ".";
    f->apis = {
        fmt::format("move the synchronizing call at {} off the step's path (every N steps, or after it)", stall.top)};
    if (PlatformOf(rank) == Platform::kCuda) f->apis.emplace_back("torch.cuda.set_sync_debug_mode(\"warn\")");
    return;
  }
  f->apis = {std::string(ForPlatform(rank, "torch.cuda.set_sync_debug_mode(\"warn\")",
                                     stall.frames ? "the Python frames the run recorded around the gaps (trace_view)"
                                                  : "torch_npu.profiler.profile(with_stack=True) (what the host runs "
                                                    "in the gaps)",
                                     stall.frames ? "the Python frames the run recorded around the gaps"
                                                  : "torch.profiler.profile(with_stack=True)"))};
}

// A launch-bound rank whose gaps of a millisecond or more still hold a tenth of the wait or more: those
// gaps are not launches, and where the trace names the synchronizing calls behind them, the finding names
// them beside the launch advice.
void SayStallsBesideLaunches(const RankEvidence& rank, double stall, double wait, Finding* f) {
  const StallSites sites = FindStallSites(rank);
  if (sites.sites.empty()) return;
  f->AddText("stall_call_sites", sites.sites);
  f->strategy += fmt::format(
      " Gaps of 1 ms or more hold {} of the wait per step ({:.0f} %); the synchronizing calls of 1 ms or more "
      "are made at {}.",
      FormatDuration(stall), 100.0 * stall / wait, sites.sites);
  f->apis.push_back(
      fmt::format("move the synchronizing call at {} off the step's path (every N steps, or after it)", sites.top));
}

void LaunchBound(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const double wait = rank.split.part(TimePart::kHostWait);
  const double pct = PctOfStep(rank, wait);
  if (wait <= 0 || pct < config.Get(threshold::kHostWaitPct)) return;
  const KernelSizes sizes = MeasureKernels(rank, config.Get(threshold::kTinyKernelUs) * 1e3);
  const HostSideBreakdown& host = rank.breakdown->total.host;
  // Gaps of a millisecond or more (not pauses) are the host busy before one launch, not launching.
  const double stall = PerStep(rank, static_cast<double>(host.host_stall_ns));
  const double stalls = PerStep(rank, static_cast<double>(host.host_stall_gaps));
  const bool stalled = stall >= kStallShareOfWait * wait;
  Finding f = NewFinding("host.launch_bound", rank, config);
  f.title = fmt::format("the device waits for the host {:.1f} % of the step ({} per step): {}", pct,
                        FormatDuration(wait), stalled ? "mostly in gaps >= 1 ms" : "launch-bound");
  f.value = pct;
  f.uncapped_gain_ns = wait;
  f.AddNumber("host_wait_us", wait / 1e3, "us");
  f.AddNumber("host_wait_gaps_per_step", PerStep(rank, static_cast<double>(host.host_wait_gaps - host.host_pause_gaps)),
              "count");
  f.AddNumber("kernels_per_step", PerStep(rank, static_cast<double>(sizes.count)), "count");
  f.AddNumber("median_kernel_us", sizes.median_ns / 1e3, "us");
  f.AddNumber("tiny_kernel_pct",
              sizes.count ? 100.0 * static_cast<double>(sizes.tiny) / static_cast<double>(sizes.count) : 0, "%");
  if (host.launch_latency) f.AddNumber("launch_latency_p50_us", host.launch_latency->p50_ns / 1e3, "us");
  f.AddNumber("host_stall_us", stall / 1e3, "us");
  f.AddNumber("host_stalls_per_step", stalls, "count");
  if (rank.compute->graphs.any()) {
    AddGraphContext(rank, &f);
  } else if (stalled) {
    f.strategy = fmt::format(
        "Most of the wait is the host busy before a few launches, a millisecond or more each: a synchronizing "
        "call (.item(), .cpu(), printing a tensor), CPU work or data preparation in the loop, or this rank's "
        "own host work that the other ranks then wait for. Find what the host runs in those gaps and move it "
        "off the step's path (asynchronously, earlier, or less often); graphs and fusion shorten only the "
        "short gaps ({} per step).",
        FormatDuration(wait - stall));
    SayWhereTheHostStalls(rank, &f);
  } else {
    f.strategy =
        "Launch less often and ahead of the device: capture the step in a graph (one launch replays all kernels), "
        "fuse small kernels with a compiler, raise the work per kernel (batch size), and keep the host loop free "
        "of synchronizing calls.";
    f.apis = {std::string(ForPlatform(
        rank, "torch.compile(model, mode=\"reduce-overhead\") (CUDA graphs); torch.cuda.CUDAGraph",
        "export TASK_QUEUE_ENABLE=2; torchair graph mode (torch.compile(model, backend=torchair.get_npu_backend()))",
        "torch.compile(model)"))};
    if (stall >= kStallsNamedShareOfWait * wait) SayStallsBesideLaunches(rank, stall, wait, &f);
  }
  out->push_back(std::move(f));
}

// A trace without step markers is one step: a one-off region there (one_off_region.h) puts set-up time,
// most of it outside operators (waiting for the other processes, building buckets), into the overhead.
struct OneOff {
  OneOffRegion region;
  double outside_ops_ns = 0;  // per step: the region's time outside every operator and collective
};

std::optional<OneOff> OneOffOverhead(const RankEvidence& rank) {
  const std::vector<StepBreakdown>& steps = rank.breakdown->steps;
  if (steps.empty() || std::any_of(steps.begin(), steps.end(), [](const StepBreakdown& s) { return s.step; })) {
    return std::nullopt;
  }
  std::optional<OneOffRegion> region = FindOneOffRegion(*rank.trace);
  if (!region) return std::nullopt;
  const EventTable& events = rank.trace->events();
  std::vector<Interval> work;
  for (const DeviceWorkEvent& item : ListCpuWork(*rank.trace)) {
    work.push_back(Interval{events.ts_ns[item.event], events.end_ns(item.event)});
  }
  const IntervalSet busy = UnionOf(std::move(work));
  if (busy.empty()) return std::nullopt;
  // The step of a trace without markers runs from the first work to the last: the region counts within it.
  const Interval span{std::max(region->start_ns, busy.front().start_ns),
                      std::min(region->start_ns + region->dur_ns, busy.back().end_ns)};
  if (span.length() <= 0) return std::nullopt;
  const double outside = static_cast<double>(span.length() - OverlapLength(busy, span));
  return OneOff{std::move(*region), PerStep(rank, outside)};
}

// The finding then says where its time is, keeps only the rest as its gain, and points at profiling
// steady-state steps instead of compiling.
void SayMostlyOneOff(const OneOff& one_off, double overhead, double pct, Finding* f) {
  const std::string& name = one_off.region.name;
  const double share = 100.0 * std::min(1.0, one_off.outside_ops_ns / overhead);
  f->title = fmt::format(
      "{:.1f} % of the step runs outside any operator ({} per step), {:.0f} % of it inside '{}', which runs "
      "once: set-up, not per-step overhead",
      pct, FormatDuration(overhead), share, name);
  f->uncapped_gain_ns = std::max(0.0, overhead - one_off.outside_ops_ns);
  f->gain_model = fmt::format(
      "the time between operators outside '{}': a compiled graph runs them back to back; the set-up runs once "
      "whatever the step",
      name);
  f->AddText("one_off_region", name);
  f->AddNumber("one_off_region_us", static_cast<double>(one_off.region.dur_ns) / 1e3, "us");
  f->AddNumber("one_off_outside_ops_us", one_off.outside_ops_ns / 1e3, "us");
  f->strategy = fmt::format(
      "This trace marks no steps and is mostly '{}' ({}, {:.0f} % of the trace), which runs once: its time "
      "says nothing about the training step. Profile steady-state steps after it and read the per-step overhead "
      "there; a set-up this long matters only to short jobs (it is often waiting for the other processes).",
      name, FormatDuration(static_cast<double>(one_off.region.dur_ns)), 100.0 * one_off.region.share_of_span());
  f->apis = {"torch.profiler.schedule(wait=1, warmup=1, active=3)", "prof.step() at each iteration"};
}

void FrameworkOverhead(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const double overhead = rank.split.part(TimePart::kHostWait);
  const double pct = PctOfStep(rank, overhead);
  if (overhead <= 0 || pct < config.Get(threshold::kHostWaitPct)) return;
  const EventTable& events = rank.trace->events();
  uint64_t ops = 0;
  std::vector<int64_t> durations;
  for (const auto& track : rank.tree.by_track) {
    for (uint32_t event : track) {
      if (events.kind[event] != EventKind::kHostOp || rank.tree.parent_op[event] != kNoIndex) continue;
      ++ops;
      durations.push_back(events.dur_ns[event]);
    }
  }
  double median = 0;
  if (!durations.empty()) {
    std::nth_element(durations.begin(), durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2),
                     durations.end());
    median = static_cast<double>(durations[durations.size() / 2]);
  }
  Finding f = NewFinding("host.framework_overhead", rank, config);
  const bool tiny_ops = rank.split.dispatch_ns > 0.5 * overhead;
  f.title = tiny_ops ? fmt::format(
                           "{:.1f} % of the step is framework overhead ({} per step), most of it in operators "
                           "too small to pay for their dispatch",
                           pct, FormatDuration(overhead))
                     : fmt::format(
                           "{:.1f} % of the step runs outside any operator ({} per step): Python/framework "
                           "overhead",
                           pct, FormatDuration(overhead));
  f.value = pct;
  f.uncapped_gain_ns = overhead;
  f.AddNumber("overhead_us", overhead / 1e3, "us");
  f.AddNumber("top_level_ops_per_step", PerStep(rank, static_cast<double>(ops)), "count");
  f.AddNumber("median_op_us", median / 1e3, "us");
  f.AddNumber("tiny_op_time_us", rank.split.dispatch_ns / 1e3, "us");
  f.AddNumber("tiny_op_threshold_kib", config.Get(threshold::kTinyOpKib), "KiB");
  if (const std::optional<OneOff> one_off = OneOffOverhead(rank);
      one_off && one_off->outside_ops_ns >= 0.5 * overhead) {
    SayMostlyOneOff(*one_off, overhead, pct, &f);
  }
  out->push_back(std::move(f));
}

void HostPauses(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const HostSideBreakdown& host = rank.breakdown->total.host;
  const double per_step = PerStep(rank, static_cast<double>(host.host_pause_ns));
  const double pct = PctOfStep(rank, per_step);
  if (host.host_pause_gaps == 0 || pct < config.Get(threshold::kHostWaitPct)) return;
  Finding f = NewFinding("host.pauses", rank, config);
  f.title = fmt::format("the host pauses {:.1f} % of the step ({} per step) without launching: not launch overhead",
                        pct, FormatDuration(per_step));
  f.value = pct;
  f.uncapped_gain_ns = per_step;
  f.AddNumber("pause_us_per_step", per_step / 1e3, "us");
  f.AddNumber("pauses_per_step", PerStep(rank, static_cast<double>(host.host_pause_gaps)), "count");
  out->push_back(std::move(f));
}

}  // namespace

void RuleHostBound(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.split.cpu_only) {
    FrameworkOverhead(rank, config, out);
  } else {
    LaunchBound(rank, config, out);
    HostPauses(rank, config, out);
  }
}

}  // namespace tuneprof

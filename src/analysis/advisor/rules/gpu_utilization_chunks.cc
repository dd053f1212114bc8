// idle.gpu_time_util_per_device (nsys gpu_time_util, as its rule script computes it): per device, the
// span from its first to its last kernel/memcpy/memset cut into 30 equal chunks (gpu_time_util_chunks);
// a chunk's in-use % is the sum of its ops' overlap with it over its length (ops on parallel streams
// add up, so it can pass 100 %: "time" utilization, not resource utilization). Chunks below 50 %
// (device_busy_pct) are reported, consecutive ones coalesced with their duration-weighted mean.
// idle.low_utilization (rules/device_idle.cc) reads the union of the rank's device work instead; on a
// rank with one device whose work is only kernels and copies this rule leaves the finding to it.
// Gain: the idle time (chunk length minus the ops' union) inside the low chunks, per step. Where launched
// work waited to start through most of the worst device's idle time, the cause is that wait, not the batch.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

// Kernels, copies and memsets. On an NPU the HCCL operations too: a device waiting inside a collective
// is communicating (Notify Wait), not starved, and the communication rules speak for that time.
bool IsDeviceOp(EventKind kind, DeviceType device) {
  if (kind == EventKind::kCollective) return device == DeviceType::kNpu;
  return kind == EventKind::kKernel || kind == EventKind::kMemcpy || kind == EventKind::kMemset;
}

// The device ops per device (index into Trace::devices), as written (not united).
std::map<uint32_t, std::vector<Interval>> GpuOpsAsWrittenPerDevice(const Trace& trace) {
  const EventTable& events = trace.events();
  std::map<uint32_t, std::vector<Interval>> ops;
  for (uint32_t i = 0; i < events.size(); ++i) {
    const uint32_t device = trace.processes()[trace.tracks()[events.track[i]].process].device;
    if (device == kNoIndex || events.dur_ns[i] < 0) continue;
    if (!IsDeviceOp(events.kind[i], trace.devices()[device].type)) continue;
    ops[device].push_back(Interval{events.ts_ns[i], events.end_ns(i)});
  }
  return ops;
}

// "NPU 3", "GPU 0"; the bare word when the trace does not number its device.
std::string UnitLabel(const Device& device) {
  const std::string word = device.type == DeviceType::kNpu ? "NPU" : "GPU";
  return device.id == kNoId ? word : fmt::format("{} {}", word, device.id);
}

bool SameAsRankUnion(const RankEvidence& rank, const std::map<uint32_t, std::vector<Interval>>& per_device) {
  return per_device.size() == 1 && rank.device_work.Busy(*rank.trace) == UnionOf(per_device.begin()->second);
}

struct LowChunks {
  uint32_t index = kNoIndex;  // into Trace::devices
  IntervalSet idle;           // the idle time inside the low chunks
  std::string device;         // UnitLabel
  uint64_t low = 0;
  double idle_ns = 0;
  double mean_pct = 0;  // in-use % over the device's whole span
  std::string ranges;   // coalesced low ranges with their weighted in-use %
};

// Sum of the ops' overlap with [start, end); `ops` sorted by start.
double SummedOverlap(const std::vector<Interval>& ops, int64_t start, int64_t end) {
  double sum = 0;
  for (const Interval& op : ops) {
    if (op.start_ns >= end) break;
    sum += static_cast<double>(std::max<int64_t>(0, std::min(op.end_ns, end) - std::max(op.start_ns, start)));
  }
  return sum;
}

LowChunks ChunksOf(const Trace& trace, uint32_t device, std::vector<Interval> ops, int64_t chunks, double threshold) {
  LowChunks out;
  out.index = device;
  out.device = UnitLabel(trace.devices()[device]);
  std::vector<Interval> low_spans;
  std::sort(ops.begin(), ops.end(), [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  int64_t first = ops.front().start_ns, last = first;
  for (const Interval& op : ops) last = std::max(last, op.end_ns);
  const int64_t chunk = (last - first) / chunks;
  if (chunk <= 0) return out;
  const IntervalSet busy = UnionOf(ops);
  out.mean_pct = 100 * SummedOverlap(ops, first, last) / static_cast<double>(last - first);
  int64_t range_start = kNoId;
  double range_used = 0;
  auto close_range = [&](int64_t end) {
    out.ranges += fmt::format("{}{:.3f}-{:.3f} ms ({:.1f} %)", out.ranges.empty() ? "" : ", ",
                              static_cast<double>(range_start - trace.start_ns()) / 1e6,
                              static_cast<double>(end - trace.start_ns()) / 1e6,
                              100 * range_used / static_cast<double>(end - range_start));
    range_start = kNoId;
    range_used = 0;
  };
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t start = first + c * chunk, end = c + 1 == chunks ? last : start + chunk;
    const double used = SummedOverlap(ops, start, end);
    if (100 * used / static_cast<double>(end - start) >= threshold) {
      if (range_start != kNoId) close_range(start);
      continue;
    }
    ++out.low;
    low_spans.push_back(Interval{start, end});
    out.idle_ns += static_cast<double>(end - start - IntersectionLength(busy, IntervalSet{Interval{start, end}}));
    if (range_start == kNoId) range_start = start;
    range_used += used;
    if (c + 1 == chunks) close_range(end);
  }
  out.idle = Subtract(UnionOf(std::move(low_spans)), busy);
  return out;
}

}  // namespace

void RuleGpuUtilizationChunks(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.split.cpu_only) return;
  std::map<uint32_t, std::vector<Interval>> per_device = GpuOpsAsWrittenPerDevice(*rank.trace);
  if (per_device.empty() || SameAsRankUnion(rank, per_device)) return;
  const int64_t chunks = std::max<int64_t>(1, static_cast<int64_t>(config.Get(threshold::kGpuTimeUtilChunks)));
  const double threshold = config.Get(threshold::kDeviceBusyPct);
  std::vector<LowChunks> found;
  for (auto& [device, ops] : per_device) {
    LowChunks low = ChunksOf(*rank.trace, device, std::move(ops), chunks, threshold);
    if (low.low > 0) found.push_back(std::move(low));
  }
  if (found.empty()) return;
  const auto worst = std::max_element(found.begin(), found.end(),
                                      [](const LowChunks& a, const LowChunks& b) { return a.idle_ns < b.idle_ns; });
  std::string devices;
  for (const LowChunks& low : found) {
    // Summed, not united: ops on parallel streams add up, so this can pass 100 % (nsys' "time" use).
    devices += fmt::format("{}{}: {} of {} chunks; ops' summed time {:.1f} % of the span (parallel streams add up); {}",
                           devices.empty() ? "" : "; ", low.device, low.low, chunks, low.mean_pct, low.ranges);
  }
  const bool npu = rank.trace->devices()[per_device.begin()->first].type == DeviceType::kNpu;
  Finding f = NewFinding("idle.gpu_time_util_per_device", rank, config);
  f.catch_all = true;
  f.title = fmt::format("{} time utilization below {:.0f} % in {} of {} chunks on {} ({} device{} affected)",
                        npu ? "NPU" : "GPU", threshold, worst->low, chunks, worst->device, found.size(),
                        found.size() == 1 ? "" : "s");
  f.metric = npu ? "per device and chunk: summed task, copy and HCCL time / chunk length"
                 : "per device and chunk: summed kernel/memcpy/memset time / chunk length";
  f.value = worst->mean_pct;
  f.uncapped_gain_ns = PerStep(rank, worst->idle_ns);
  f.AddNumber("low_chunks", static_cast<double>(worst->low), "count");
  f.AddNumber("idle_in_low_chunks_us", worst->idle_ns / 1e3, "us");
  f.AddText("devices", devices);
  f.apis = {
      npu                          ? "larger batch_size; TASK_QUEUE_ENABLE=2 (torch_npu's two-level task queue); "
                                     "torch_npu.npu.NPUGraph / torch_npu.npu.graph (capture and replay a fixed-shape step; aclnn operators only)"
      : rank.compute->graphs.any() ? "larger batch_size (the run already replays CUDA graphs)"
                                   : "larger batch_size; torch.compile(model, mode=\"reduce-overhead\"); CUDA graphs"};
  const double queued_idle = static_cast<double>(IntersectionLength(worst->idle, QueuedDeviceWork(rank, worst->index)));
  if (queued_idle > 0 && 2 * queued_idle >= worst->idle_ns) SayQueuedIdle(queued_idle, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof

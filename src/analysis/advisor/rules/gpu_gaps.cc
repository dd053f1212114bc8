// idle.gpu_gaps_per_device (nsys gpu_gaps, as its rule script computes it): per device, the gaps of at
// least 500 ms (gpu_gap_ms) between its first and last kernel, memcpy or memset, leading and trailing
// idle excluded. Unlike idle.gpu_gaps (rules/device_idle.cc), which reads the union of all device work
// of the rank (cuda_sync waits included), a device starving while another one works is found here.
// On a rank with one device whose work is only kernels and copies both see the same timeline, and
// this rule stays quiet. Gain: the gaps' time per step, of the device with the most.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

bool IsGpuOp(EventKind kind) {
  return kind == EventKind::kKernel || kind == EventKind::kMemcpy || kind == EventKind::kMemset;
}

// Kernels, copies and memsets per device ordinal, as unions.
std::map<int64_t, IntervalSet> GpuOpsPerDevice(const Trace& trace) {
  const EventTable& events = trace.events();
  std::map<int64_t, std::vector<Interval>> ops;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!IsGpuOp(events.kind[i]) || events.dur_ns[i] < 0) continue;
    const uint32_t device = trace.processes()[trace.tracks()[events.track[i]].process].device;
    if (device == kNoIndex) continue;
    ops[trace.devices()[device].id].push_back(Interval{events.ts_ns[i], events.end_ns(i)});
  }
  std::map<int64_t, IntervalSet> out;
  for (auto& [device, intervals] : ops) out.emplace(device, UnionOf(std::move(intervals)));
  return out;
}

// One device whose ops are all the device work there is: idle.gpu_gaps already reports this timeline.
bool SameAsRankUnion(const RankEvidence& rank, const std::map<int64_t, IntervalSet>& per_device) {
  return per_device.size() == 1 && rank.device_work.Busy(*rank.trace) == per_device.begin()->second;
}

struct DeviceGaps {
  int64_t device = 0;
  uint64_t count = 0;
  double total_ns = 0;
  double longest_ns = 0;
  std::string first;  // the first few, as ranges from the trace start
};

DeviceGaps GapsOf(const Trace& trace, int64_t device, const IntervalSet& busy, int64_t min_gap) {
  DeviceGaps g;
  g.device = device;
  for (size_t i = 1; i < busy.size(); ++i) {
    const int64_t gap = busy[i].start_ns - busy[i - 1].end_ns;
    if (gap < min_gap) continue;
    ++g.count;
    g.total_ns += static_cast<double>(gap);
    g.longest_ns = std::max(g.longest_ns, static_cast<double>(gap));
    if (g.count <= 5) {
      g.first += fmt::format("{}{:.3f}-{:.3f} ms", g.first.empty() ? "" : ", ",
                             static_cast<double>(busy[i - 1].end_ns - trace.start_ns()) / 1e6,
                             static_cast<double>(busy[i].start_ns - trace.start_ns()) / 1e6);
    }
  }
  return g;
}

}  // namespace

void RuleGpuGaps(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.split.cpu_only) return;
  const std::map<int64_t, IntervalSet> per_device = GpuOpsPerDevice(*rank.trace);
  if (per_device.empty() || SameAsRankUnion(rank, per_device)) return;
  const int64_t min_gap = static_cast<int64_t>(config.Get(threshold::kGpuGapMs) * 1e6);
  std::vector<DeviceGaps> found;
  for (const auto& [device, busy] : per_device) {
    DeviceGaps g = GapsOf(*rank.trace, device, busy, min_gap);
    if (g.count > 0) found.push_back(std::move(g));
  }
  if (found.empty()) return;
  const auto worst = std::max_element(found.begin(), found.end(),
                                      [](const DeviceGaps& a, const DeviceGaps& b) { return a.total_ns < b.total_ns; });
  uint64_t count = 0;
  std::string devices;
  for (const DeviceGaps& g : found) {
    count += g.count;
    devices += fmt::format("{}GPU {}: {} gaps ({}; {})", devices.empty() ? "" : "; ", g.device, g.count,
                           FormatDuration(g.total_ns), g.first);
  }
  Finding f = NewFinding("idle.gpu_gaps_per_device", rank, config);
  f.title = fmt::format(
      "{} gaps of at least {:.0f} ms without kernels or copies on {} of {} devices "
      "(most on GPU {}: {})",
      count, config.Get(threshold::kGpuGapMs), found.size(), per_device.size(), worst->device,
      FormatDuration(worst->total_ns));
  f.value = static_cast<double>(count);
  f.uncapped_gain_ns = PerStep(rank, worst->total_ns);
  f.AddNumber("gaps", static_cast<double>(count), "count");
  f.AddNumber("worst_device_gap_total_us", worst->total_ns / 1e3, "us");
  f.AddNumber("longest_gap_us", worst->longest_ns / 1e3, "us");
  f.AddText("devices", devices);
  out->push_back(std::move(f));
}

}  // namespace tuneprof

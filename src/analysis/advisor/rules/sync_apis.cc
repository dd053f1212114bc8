// host.sync_apis (nsys cuda_api_sync): host time in calls that wait for the device
// (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, aclrtSynchronize*), above 1 % of
// the step. Each one drains the launch queue, so the device then waits for the host's next launch.
// Sync time is the union of the calls' intervals per process, of the process with the most: threads
// that wait at the same time wait once, so the share of the step never passes 100 %. The per-call list
// keeps each name's own sum. Only waits inside the steps' host ranges count: the synchronize a script
// calls after its profiled loop is no step's.
// Gain: min(sync time, host-wait time): removing the waits lets the host run ahead.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

bool IsSyncCall(std::string_view name) {
  return name.find("Synchronize") != std::string_view::npos && !name.starts_with("aten::");
}

}  // namespace

void RuleSyncApis(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.split.cpu_only) return;
  const EventTable& events = rank.trace->events();
  std::map<std::string_view, std::pair<uint64_t, double>> calls;
  std::map<uint32_t, std::vector<Interval>> waits;  // per process
  const IntervalSet steps = StepRanges(*rank.breakdown);
  std::vector<WeightedWork> waiting;  // each call's time in the steps, for the modules that made it
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kRuntime && events.kind[i] != EventKind::kDriver) continue;
    const std::string_view name = rank.trace->str(events.name[i]);
    if (!IsSyncCall(name) || events.dur_ns[i] < 0) continue;
    const int64_t in_steps = OverlapLength(steps, Interval{events.ts_ns[i], events.end_ns(i)});
    if (in_steps <= 0) continue;
    auto& [count, time] = calls[name];
    ++count;
    time += static_cast<double>(in_steps);
    waiting.push_back(WeightedWork{i, in_steps});
    waits[rank.trace->tracks()[events.track[i]].process].push_back(Interval{events.ts_ns[i], events.end_ns(i)});
  }
  double total = 0;
  for (auto& [process, intervals] : waits) {
    total = std::max(total, static_cast<double>(IntersectionLength(UnionOf(std::move(intervals)), steps)));
  }
  const double per_step = PerStep(rank, total);
  const double pct = PctOfStep(rank, per_step);
  if (calls.empty() || pct < config.Get(threshold::kSyncApiPct)) return;
  Finding f = NewFinding("host.sync_apis", rank, config);
  f.title = fmt::format("the host spends {:.1f} % of the step waiting in synchronize calls", pct);
  f.value = pct;
  f.uncapped_gain_ns = std::min(per_step, rank.split.part(TimePart::kHostWait));
  uint64_t count = 0;
  std::string names;
  for (const auto& [name, stats] : calls) {
    count += stats.first;
    names += fmt::format("{}{} x{} ({})", names.empty() ? "" : ", ", name, stats.first, FormatDuration(stats.second));
  }
  f.AddNumber("sync_calls", static_cast<double>(count), "count");
  f.AddNumber("sync_us_per_step", per_step / 1e3, "us");
  f.AddText("calls", names);
  SayModulesOfHostTime(rank, waiting, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof

// host.sync_memcpy (nsys cuda_memcpy_sync and cuda_memset_sync): copies launched by a synchronous API
// (cudaMemcpy*, not *Async) and memsets of pinned or managed memory launched by cudaMemset* (not
// *Async), found through the launch's correlation link. The host thread blocks in the call until the
// device finishes (cudaMemset on device memory does not block, hence the memory kinds). No threshold,
// as in nsys. Gain: min(host time in those calls, host-wait idle time) per step.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

bool IsAsync(std::string_view name) {
  return name.find("Async") != std::string_view::npos || name.find("async") != std::string_view::npos;
}

// Whether the call `host` launching device event `device` is a blocking memcpy / memset.
bool IsBlockingCopy(const Trace& trace, uint32_t host, uint32_t device,
                    const std::map<uint32_t, const CopyInfo*>& copies) {
  const EventTable& events = trace.events();
  if (events.kind[host] != EventKind::kRuntime) return false;
  const std::string_view call = trace.str(events.name[host]);
  if (IsAsync(call)) return false;
  if (events.kind[device] == EventKind::kMemcpy) return call.starts_with("cudaMemcpy");
  if (events.kind[device] != EventKind::kMemset || !call.starts_with("cudaMemset")) return false;
  auto it = copies.find(device);
  return it != copies.end() && (it->second->dst == MemoryKind::kPinned || it->second->dst == MemoryKind::kManaged);
}

}  // namespace

void RuleSyncMemcpy(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.split.cpu_only) return;
  const Trace& trace = *rank.trace;
  const EventTable& events = trace.events();
  std::map<uint32_t, const CopyInfo*> copies;
  for (const CopyInfo& copy : trace.copies()) copies.emplace(copy.event, &copy);
  std::map<uint32_t, bool> calls;  // host call -> counted once even when it launched several copies
  std::map<std::string_view, std::pair<uint64_t, double>> by_name;
  std::vector<uint32_t> blocking_copies;  // the device copies, for the modules that made them
  double total = 0;
  for (const Link& link : trace.links()) {
    if (link.kind != LinkKind::kCorrelation || !IsBlockingCopy(trace, link.from, link.to, copies)) continue;
    blocking_copies.push_back(link.to);
    if (!calls.emplace(link.from, true).second) continue;
    const double dur = static_cast<double>(std::max<int64_t>(events.dur_ns[link.from], 0));
    auto& [count, time] = by_name[trace.str(events.name[link.from])];
    ++count;
    time += dur;
    total += dur;
  }
  if (calls.empty()) return;
  const double per_step = PerStep(rank, total);
  Finding f = NewFinding("host.sync_memcpy", rank, config);
  f.title = fmt::format("{} synchronous memcpy/memset calls block the host ({} per step)", calls.size(),
                        FormatDuration(per_step));
  f.value = static_cast<double>(calls.size());
  f.uncapped_gain_ns = std::min(per_step, rank.split.part(TimePart::kHostWait));
  std::string names;
  for (const auto& [name, stats] : by_name) {
    names += fmt::format("{}{} x{} ({})", names.empty() ? "" : ", ", name, stats.first, FormatDuration(stats.second));
  }
  f.AddNumber("sync_copy_calls", static_cast<double>(calls.size()), "count");
  f.AddNumber("sync_copy_us_per_step", per_step / 1e3, "us");
  f.AddText("calls", names);
  SayModules(rank, blocking_copies, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof

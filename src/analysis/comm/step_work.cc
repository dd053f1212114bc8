#include "analysis/comm/step_work.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/core/device_work.h"

namespace tuneprof {
namespace {

// The steps' windows merged into sorted disjoint ranges; empty where no step has one (then every event
// counts). Windows of several devices' steps may overlap: merged, each event counts once.
std::vector<std::pair<int64_t, int64_t>> Windows(const RankBreakdown& breakdown, bool host) {
  std::vector<std::pair<int64_t, int64_t>> all;
  for (const StepBreakdown& s : breakdown.steps) {
    const int64_t start = host ? s.host_start_ns : s.device_start_ns;
    const int64_t end = host ? s.host_end_ns : s.device_end_ns;
    if (start != kNoId && end != kNoId && end > start) all.emplace_back(start, end);
  }
  std::sort(all.begin(), all.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& w : all) {
    if (!merged.empty() && w.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, w.second);
    } else {
      merged.push_back(w);
    }
  }
  return merged;
}

// Whether `at` falls in one of the merged windows (start inclusive, end exclusive).
bool Inside(const std::vector<std::pair<int64_t, int64_t>>& windows, int64_t at) {
  if (windows.empty()) return true;
  auto it = std::upper_bound(windows.begin(), windows.end(), at,
                             [](int64_t t, const std::pair<int64_t, int64_t>& w) { return t < w.first; });
  return it != windows.begin() && at < std::prev(it)->second;
}

using Totals = std::unordered_map<uint32_t, NamedWork>;  // StringId value -> its work

void Add(Totals* totals, StringId name, int64_t ns, int64_t self_ns) {
  NamedWork& w = (*totals)[name.value];
  ++w.calls;
  w.total_ns += ns;
  w.self_ns += self_ns;
}

// Most time first, ties by name, so that equal inputs list alike; at most kMaxStepWorkNames.
std::vector<NamedWork> Ranked(const Trace& trace, Totals totals) {
  std::vector<NamedWork> out;
  out.reserve(totals.size());
  for (auto& [name, work] : totals) {
    work.name = trace.str(StringId{name});
    out.push_back(std::move(work));
  }
  std::sort(out.begin(), out.end(), [](const NamedWork& a, const NamedWork& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (out.size() > kMaxStepWorkNames) out.resize(kMaxStepWorkNames);
  return out;
}

bool CommunicationRow(const Trace& trace, const NpuOpRow& row) {
  const std::string_view core = trace.str(row.accelerator_core);
  const std::string_view type = trace.str(row.type);
  return core == "HCCL" || core == "COMMUNICATION" || type.starts_with("hcom") || type.starts_with("HCCL");
}

// torch_npu's kernel_details rows by Type, of the steps where the rows name theirs.
bool AddKernelDetailRows(const Trace& trace, const RankBreakdown& breakdown, Totals* totals) {
  const KernelDetailTable& table = trace.kernel_details();
  if (table.rows.empty()) return false;
  std::vector<int64_t> steps;
  for (const StepBreakdown& s : breakdown.steps) {
    if (s.step) steps.push_back(*s.step);
  }
  std::sort(steps.begin(), steps.end());
  for (const NpuOpRow& row : table.rows) {
    if (row.dur_ns == kNoId || row.dur_ns < 0 || CommunicationRow(trace, row)) continue;
    if (row.step != kNoId && !steps.empty() && !std::binary_search(steps.begin(), steps.end(), row.step)) continue;
    const StringId name = trace.str(row.type).empty() ? row.name : row.type;
    Add(totals, name, row.dur_ns, row.dur_ns);
  }
  return true;
}

void AddDeviceWork(const Trace& trace, const RankBreakdown& breakdown, Totals* totals) {
  const EventTable& e = trace.events();
  const auto windows = Windows(breakdown, /*host=*/false);
  for (const DeviceWorkEvent& w : ListDeviceWork(trace)) {
    if (w.work != WorkClass::kCompute && w.work != WorkClass::kMemory) continue;
    if (!Inside(windows, e.ts_ns[w.event])) continue;
    const int64_t ns = std::max<int64_t>(e.dur_ns[w.event], 0);
    Add(totals, e.name[w.event], ns, ns);
  }
}

}  // namespace

RankStepWork MeasureStepWork(const Trace& trace, const RankBreakdown& breakdown, const HostOpTree& tree) {
  RankStepWork out;
  const EventTable& e = trace.events();
  const auto windows = Windows(breakdown, /*host=*/true);
  Totals apis;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kHostOp || e.dur_ns[i] < 0 || !Inside(windows, e.ts_ns[i])) continue;
    if (trace.str(e.name[i]).starts_with("ProfilerStep#")) continue;  // the step itself, where written as an op
    Add(&apis, e.name[i], e.dur_ns[i], i < tree.self_ns.size() ? tree.self_ns[i] : e.dur_ns[i]);
  }
  out.host_apis = Ranked(trace, std::move(apis));
  Totals ops;
  if (!AddKernelDetailRows(trace, breakdown, &ops)) AddDeviceWork(trace, breakdown, &ops);
  out.device_ops = Ranked(trace, std::move(ops));
  return out;
}

}  // namespace tuneprof

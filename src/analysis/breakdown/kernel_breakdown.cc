#include "analysis/breakdown/kernel_breakdown.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

constexpr std::string_view kNoHostOp = "(no host op)";

// Running sums of one row; the stddev comes from the sum of squares around the mean at the end.
struct Accumulator {
  WorkClass work = WorkClass::kCompute;
  bool mixed_work = false;
  std::vector<int64_t> values_ns;
  int64_t inclusive_ns = 0;

  void Add(int64_t value_ns, int64_t inclusive, WorkClass w) {
    if (!values_ns.empty() && w != work) mixed_work = true;
    work = w;
    values_ns.push_back(value_ns);
    inclusive_ns += inclusive;
  }
};

KernelRow RowOf(const std::string& name, const Accumulator& a) {
  KernelRow row;
  row.name = name;
  row.work = a.work;
  row.mixed_work = a.mixed_work;
  row.count = a.values_ns.size();
  row.min_ns = *std::min_element(a.values_ns.begin(), a.values_ns.end());
  row.max_ns = *std::max_element(a.values_ns.begin(), a.values_ns.end());
  for (int64_t v : a.values_ns) row.total_ns += v;
  const double mean = static_cast<double>(row.total_ns) / static_cast<double>(row.count);
  row.mean_ns = std::llround(mean);
  if (row.count > 1) {
    double squares = 0;
    for (int64_t v : a.values_ns) squares += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
    row.stddev_ns = std::sqrt(squares / static_cast<double>(row.count - 1));
  }
  row.inclusive_ns = a.inclusive_ns;
  return row;
}

std::vector<KernelRow> SortedRows(const std::map<std::string, Accumulator, std::less<>>& groups) {
  std::vector<KernelRow> rows;
  int64_t total = 0;
  for (const auto& [name, a] : groups) rows.push_back(RowOf(name, a));
  for (const KernelRow& r : rows) total += r.total_ns;
  for (KernelRow& r : rows) r.share = total > 0 ? static_cast<double>(r.total_ns) / static_cast<double>(total) : 0;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const KernelRow& a, const KernelRow& b) { return a.total_ns > b.total_ns; });
  return rows;
}

Accumulator& Group(std::map<std::string, Accumulator, std::less<>>* groups, std::string_view name) {
  auto it = groups->find(name);
  if (it == groups->end()) it = groups->emplace(std::string(name), Accumulator{}).first;
  return it->second;
}

// Host events of one thread as a nesting: events sorted by start (longer first, then file order on
// ties: Kineto writes a parent before a child of the same span), each one's parent the innermost earlier
// event still open at its start.
template <typename Visit>
void WalkNesting(const Trace& trace, std::vector<uint32_t> events, Visit visit) {
  const EventTable& e = trace.events();
  std::sort(events.begin(), events.end(), [&](uint32_t a, uint32_t b) {
    if (e.track[a] != e.track[b]) return e.track[a] < e.track[b];
    if (e.ts_ns[a] != e.ts_ns[b]) return e.ts_ns[a] < e.ts_ns[b];
    if (e.dur_ns[a] != e.dur_ns[b]) return e.dur_ns[a] > e.dur_ns[b];
    return e.source_offset[a] < e.source_offset[b];
  });
  std::vector<uint32_t> open;
  uint32_t track = kNoIndex;
  for (uint32_t i : events) {
    if (e.track[i] != track) open.clear();
    track = e.track[i];
    while (!open.empty() && e.end_ns(open.back()) <= e.ts_ns[i]) open.pop_back();
    visit(i, open.empty() ? kNoIndex : open.back());
    open.push_back(i);
  }
}

// The innermost host operator around each runtime call that launched device work.
std::unordered_map<uint32_t, uint32_t> LaunchingOps(const Trace& trace) {
  const EventTable& e = trace.events();
  std::unordered_map<uint32_t, uint32_t> call_of_work;
  std::vector<uint32_t> events;
  for (const Link& link : trace.links()) {
    if (link.kind != LinkKind::kCorrelation) continue;
    call_of_work[link.to] = link.from;
    events.push_back(link.from);
  }
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] == EventKind::kHostOp && e.dur_ns[i] >= 0) events.push_back(i);
  }
  std::unordered_map<uint32_t, uint32_t> op_of_call;
  // A call sits inside the ops open at its start; ops never nest inside calls, so the innermost open
  // event that is an op is the launching one.
  WalkNesting(trace, std::move(events), [&](uint32_t i, uint32_t parent) {
    if (e.kind[i] != EventKind::kHostOp && parent != kNoIndex && e.kind[parent] == EventKind::kHostOp) {
      op_of_call[i] = parent;
    }
  });
  std::unordered_map<uint32_t, uint32_t> op_of_work;
  for (const auto& [work, call] : call_of_work) {
    if (auto it = op_of_call.find(call); it != op_of_call.end()) op_of_work[work] = it->second;
  }
  return op_of_work;
}

KernelBreakdown DeviceBreakdown(const Trace& trace, const std::vector<DeviceWorkEvent>& work) {
  const EventTable& e = trace.events();
  const std::unordered_map<uint32_t, uint32_t> op_of_work = LaunchingOps(trace);
  std::map<std::string, Accumulator, std::less<>> kernels, by_work, by_op;
  KernelBreakdown result;
  for (const DeviceWorkEvent& w : work) {
    // Syncs and waits hold a stream without working: ranked among the kernels they would crowd out the
    // work (an HCCL notify wait lasts as long as the slowest peer), so the tables list work only.
    if (IsDeviceWait(e.kind[w.event], w.work, trace.str(e.name[w.event]))) continue;
    const int64_t dur = std::max<int64_t>(e.dur_ns[w.event], 0);
    result.total_ns += dur;
    Group(&kernels, trace.str(e.name[w.event])).Add(dur, dur, w.work);
    Group(&by_work, WorkClassName(w.work)).Add(dur, dur, w.work);
    auto op = op_of_work.find(w.event);
    Group(&by_op, op == op_of_work.end() ? kNoHostOp : trace.str(e.name[op->second])).Add(dur, dur, w.work);
  }
  result.kernels = SortedRows(kernels);
  result.by_work = SortedRows(by_work);
  result.by_host_op = SortedRows(by_op);
  return result;
}

bool IsHostRange(EventKind kind) { return kind == EventKind::kHostOp || kind == EventKind::kUserAnnotation; }

KernelBreakdown HostOpBreakdown(const Trace& trace) {
  const EventTable& e = trace.events();
  std::vector<uint32_t> events;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (IsHostRange(e.kind[i]) && e.dur_ns[i] >= 0) events.push_back(i);
  }
  std::vector<int64_t> children_ns(e.size(), 0);
  std::vector<uint32_t> order;
  WalkNesting(trace, events, [&](uint32_t i, uint32_t parent) {
    if (parent != kNoIndex) children_ns[parent] += e.dur_ns[i];
    order.push_back(i);
  });
  std::map<std::string, Accumulator, std::less<>> ops;
  KernelBreakdown result;
  result.source = KernelTableSource::kHostOps;
  for (uint32_t i : order) {
    const std::string_view name = trace.str(e.name[i]);
    if (name.starts_with(kProfilerStepPrefix)) continue;  // the step, not an operator
    const int64_t self = std::max<int64_t>(e.dur_ns[i] - children_ns[i], 0);
    result.total_ns += self;
    Group(&ops, name).Add(self, e.dur_ns[i], WorkClass::kCompute);
  }
  result.kernels = SortedRows(ops);
  return result;
}

}  // namespace

namespace {

// Without the HCCL planes (a Level0 export), the hcom_* operations span their collectives and the
// collectives' own tasks (SDMA transfers, notify writes) run on a hardware stream of their own, inside
// those spans: the operation already counts that time as communication, so those tasks are left out
// rather than listed again as memory or compute work (which made the work types add up to more than the
// step). A stream is taken as a collective's when it transfers (SDMA) and every task on it lies inside a
// collective, but for the stream syncs between them (waits and records, out of the tables anyway) and a
// task ending within kRoundingNs of its collective (the two are rounded apart).
constexpr int64_t kRoundingNs = 1000;

struct StreamTasks {
  bool transfers = false;
  bool outside = false;
};

std::vector<DeviceWorkEvent> WithoutCollectiveStreams(const Trace& trace, std::vector<DeviceWorkEvent> work) {
  const EventTable& e = trace.events();
  std::vector<Interval> spans;
  for (const DeviceWorkEvent& w : work) {
    if (e.kind[w.event] == EventKind::kCollective) spans.push_back(Interval{e.ts_ns[w.event], e.end_ns(w.event)});
  }
  const IntervalSet collectives = UnionOf(std::move(spans));
  std::unordered_map<uint32_t, StreamTasks> streams;
  for (const DeviceWorkEvent& w : work) {
    if (e.kind[w.event] == EventKind::kCollective) continue;
    StreamTasks& stream = streams[e.track[w.event]];
    stream.transfers = stream.transfers || w.work == WorkClass::kMemory;
    const Interval span{e.ts_ns[w.event], e.end_ns(w.event)};
    const bool sync = w.work == WorkClass::kOther || trace.str(e.name[w.event]).starts_with("EVENT_RECORD");
    if (!sync && OverlapLength(collectives, span) + kRoundingNs < span.length()) stream.outside = true;
  }
  std::erase_if(work, [&](const DeviceWorkEvent& w) {
    const auto it = streams.find(e.track[w.event]);
    return e.kind[w.event] != EventKind::kCollective && it != streams.end() && it->second.transfers &&
           !it->second.outside;
  });
  return work;
}

}  // namespace

// torch_npu draws each HCCL task twice: on its HCCL plane and, with the same start and duration, on the
// hardware stream that ran it, inside an hcom_* operation on the group's track. Each hardware task is
// counted once: the hardware stream's copy, as communication; the HCCL tracks (planes and the
// operations spanning their tasks) are left out once the hardware stream shows their tasks. Where it
// does not (an export without the hardware copies), the HCCL tracks stay.
std::vector<DeviceWorkEvent> CountHcclTasksOnce(const Trace& trace, std::vector<DeviceWorkEvent> work) {
  const EventTable& e = trace.events();
  std::set<std::pair<int64_t, int64_t>> hccl;
  for (const DeviceWorkEvent& w : work) {
    if (e.kind[w.event] == EventKind::kCollective) hccl.emplace(e.ts_ns[w.event], e.dur_ns[w.event]);
  }
  if (hccl.empty()) return work;
  bool twins = false;
  for (DeviceWorkEvent& w : work) {
    if (e.kind[w.event] == EventKind::kCollective || !hccl.contains({e.ts_ns[w.event], e.dur_ns[w.event]})) continue;
    twins = true;
    if (w.work != WorkClass::kOther) w.work = WorkClass::kCommunication;  // a notify wait stays a wait
  }
  if (twins) {
    std::erase_if(work, [&](const DeviceWorkEvent& w) { return e.kind[w.event] == EventKind::kCollective; });
    return work;
  }
  return WithoutCollectiveStreams(trace, std::move(work));
}

namespace {

std::vector<DeviceWorkEvent> ListWorkAndWaits(const Trace& trace) {
  std::vector<DeviceWorkEvent> work = ListDeviceWork(trace);
  if (FactsOf(trace.metadata().format).ascend_profiler) work = CountHcclTasksOnce(trace, std::move(work));
  return work;
}

}  // namespace

KernelBreakdown ComputeKernelBreakdown(const Trace& trace) {
  const std::vector<DeviceWorkEvent> work = ListWorkAndWaits(trace);
  return work.empty() ? HostOpBreakdown(trace) : DeviceBreakdown(trace, work);
}

std::vector<DeviceWorkEvent> ListMeasuredDeviceWork(const Trace& trace) {
  std::vector<DeviceWorkEvent> work = ListWorkAndWaits(trace);
  const EventTable& e = trace.events();
  std::erase_if(work, [&](const DeviceWorkEvent& w) {
    return IsDeviceWait(e.kind[w.event], w.work, trace.str(e.name[w.event]));
  });
  return work;
}

KernelTotals SumKernelsAcrossRanks(std::span<const KernelBreakdown> ranks) {
  KernelTotalsBuilder builder;
  for (const KernelBreakdown& rank : ranks) builder.Add(rank);
  return std::move(builder).Finish();
}

void KernelTotalsBuilder::Add(const KernelBreakdown& rank) {
  totals_.total_ns += rank.total_ns;
  totals_.host_ops |= rank.source == KernelTableSource::kHostOps;
  for (const KernelRow& row : rank.kernels) {
    auto it = by_name_.find(row.name);
    if (it == by_name_.end()) it = by_name_.emplace(row.name, KernelTotal{row.name, 0, 0}).first;
    it->second.count += row.count;
    it->second.total_ns += row.total_ns;
  }
}

KernelTotals KernelTotalsBuilder::Finish() && {
  KernelTotals totals = std::move(totals_);
  totals.kernels.reserve(by_name_.size());
  for (auto& [name, total] : by_name_) totals.kernels.push_back(std::move(total));
  std::sort(totals.kernels.begin(), totals.kernels.end(), [](const KernelTotal& a, const KernelTotal& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return totals;
}

}  // namespace tuneprof

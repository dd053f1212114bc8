#include "analysis/comm/wait_causes.h"

#include <algorithm>
#include <array>
#include <optional>
#include <unordered_map>
#include <utility>

#include "analysis/core/cpu_work.h"
#include "analysis/core/device_work.h"
#include "analysis/core/host_op_tree.h"
#include "analysis/core/intervals.h"
#include "base/enum_names.h"

namespace tuneprof {
namespace {

// A piece of work an operator did, on the rank's clock: device work under the operator that launched it,
// or a host operator's own time on a CPU-only rank.
struct OperatorWork {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  StringId name;
  double weight = 1;  // the share of the span that is the operator's own (host operators: self / duration)
};

struct RankTimeline {
  IntervalSet compute, communication, dataloader;
  std::vector<OperatorWork> work;  // sorted by start
};

RankTimeline BuildTimeline(const Trace& trace, const HostOpTree* given_tree) {
  const EventTable& e = trace.events();
  std::vector<DeviceWorkEvent> work = ListDeviceWork(trace);
  const bool cpu_only = work.empty();
  if (cpu_only) {
    work = ListCpuWork(trace);
  } else {
    AppendHostCollectives(trace, &work);  // gloo collectives of a device trace: its own waits too
  }
  HostOpTree built;
  const HostOpTree& tree = given_tree != nullptr ? *given_tree : (built = BuildHostOpTree(trace));
  const std::vector<uint32_t> launcher = cpu_only ? std::vector<uint32_t>{} : LaunchingOps(trace, tree);
  RankTimeline out;
  std::vector<Interval> compute, communication;
  for (const DeviceWorkEvent& w : work) {
    const Interval span{e.ts_ns[w.event], e.end_ns(w.event)};
    if (w.work == WorkClass::kCommunication) {
      communication.push_back(span);
      continue;
    }
    if (w.work != WorkClass::kCompute && w.work != WorkClass::kMemory) continue;
    compute.push_back(span);
    OperatorWork op{span.start_ns, span.end_ns, e.name[w.event], 1};
    if (cpu_only) {
      op.weight = e.dur_ns[w.event] > 0 ? static_cast<double>(tree.self_ns[w.event]) / e.dur_ns[w.event] : 0;
    } else if (w.event < launcher.size() && launcher[w.event] != kNoIndex) {
      op.name = e.name[launcher[w.event]];
    }
    out.work.push_back(op);
  }
  out.compute = UnionOf(std::move(compute));
  out.communication = UnionOf(std::move(communication));
  out.dataloader = DataLoaderRanges(trace);
  std::sort(out.work.begin(), out.work.end(),
            [](const OperatorWork& a, const OperatorWork& b) { return a.start_ns < b.start_ns; });
  return out;
}

// The part of `set` inside `window`, in O(log n + k).
IntervalSet Clip(const IntervalSet& set, Interval window) {
  IntervalSet out;
  auto it = std::upper_bound(set.begin(), set.end(), window.start_ns,
                             [](int64_t t, const Interval& i) { return t < i.end_ns; });
  for (; it != set.end() && it->start_ns < window.end_ns; ++it) {
    out.push_back(Interval{std::max(it->start_ns, window.start_ns), std::min(it->end_ns, window.end_ns)});
  }
  return out;
}

// Compute first, then the rank's own collectives, then data loading; the rest of the window is host time.
WaitCauseTimes Causes(const RankTimeline& t, Interval window) {
  const IntervalSet compute = Clip(t.compute, window);
  const IntervalSet idle = Subtract(IntervalSet{window}, compute);
  const IntervalSet own_wait = Intersect(idle, Clip(t.communication, window));
  const IntervalSet host = Subtract(idle, own_wait);
  const int64_t data = IntersectionLength(host, Clip(t.dataloader, window));
  WaitCauseTimes times{};
  times[static_cast<size_t>(WaitCause::kCompute)] = TotalLength(compute);
  times[static_cast<size_t>(WaitCause::kOwnWait)] = TotalLength(own_wait);
  times[static_cast<size_t>(WaitCause::kDataLoading)] = data;
  times[static_cast<size_t>(WaitCause::kHostPause)] = TotalLength(host) - data;
  return times;
}

std::vector<LeadOperator> Operators(const Trace& trace, const RankTimeline& t, Interval window) {
  std::unordered_map<uint32_t, double> by_name;  // StringId value -> ns
  auto it = std::lower_bound(t.work.begin(), t.work.end(), window.start_ns,
                             [](const OperatorWork& w, int64_t at) { return w.start_ns < at; });
  for (; it != t.work.end() && it->start_ns < window.end_ns; ++it) {
    const int64_t overlap = std::min(it->end_ns, window.end_ns) - it->start_ns;
    if (overlap > 0) by_name[it->name.value] += it->weight * static_cast<double>(overlap);
  }
  std::vector<std::pair<double, uint32_t>> ranked;
  for (const auto& [name, ns] : by_name) ranked.emplace_back(ns, name);
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (ranked.size() > kMaxLeadOperators) ranked.resize(kMaxLeadOperators);
  std::vector<LeadOperator> out;
  for (const auto& [ns, name] : ranked) {
    out.push_back(LeadOperator{trace.str(StringId{name}), static_cast<int64_t>(ns)});
  }
  return out;
}

// Where a group's first collective on the rank has no earlier end to start from, its lead-in starts where
// the step that launched it starts, if it is the rank's first collective of the step: the ranks of a job start
// their steps together to within the previous step's last collective, so the windows compare as a later
// collective's do. Kineto's step ranges are on the
// host, which launches the step's device work after it; nullopt where the trace marks no step around it.
std::optional<int64_t> StepStartBefore(const Trace& trace, const Collective& c) {
  // Asked once per group on the rank (its first collective), so a scan of the steps is enough.
  for (const Step& step : trace.steps()) {
    if (c.step ? step.number == *c.step : (c.start_ns >= step.start_ns && c.start_ns < step.end_ns)) {
      return step.start_ns;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view WaitCauseName(WaitCause cause) {
  static constexpr std::array<std::string_view, 5> kNames = {"compute", "host_pause", "data_loading", "own_wait",
                                                             "unexplained"};
  static_assert(kNames.size() == kWaitCauseCount);
  return EnumName(cause, kNames, "unexplained");
}

std::vector<CollectiveLeadIn> MeasureLeadIns(const Trace& trace, const std::vector<Collective>& collectives,
                                             const HostOpTree* tree) {
  std::vector<CollectiveLeadIn> out(collectives.size());
  if (collectives.empty()) return out;
  const RankTimeline timeline = BuildTimeline(trace, tree);
  std::unordered_map<std::string_view, int64_t> previous_end;  // group -> end of its last collective so far
  for (size_t i = 0; i < collectives.size(); ++i) {
    const Collective& c = collectives[i];
    auto [it, first] = previous_end.try_emplace(c.group, c.start_ns + c.duration_ns);
    Interval window{std::min(it->second, c.start_ns), c.start_ns};
    if (first) {
      // The step start is the ranks' common point only before the rank's first collective of the step: after
      // another group's (a pipeline's hand-off), its ranks no longer start together. A send / receive is left
      // without one too: at a pipeline's first hand-off the sender's work since the step start is the first
      // micro-batch the next stage cannot start without, the schedule's fill, not lateness of its own.
      if (c.type == CollectiveType::kSendRecv) continue;
      const std::optional<int64_t> step_start = StepStartBefore(trace, c);
      if (!step_start || (i > 0 && collectives[i - 1].start_ns >= *step_start)) continue;
      window.start_ns = std::min(*step_start, c.start_ns);
    }
    it->second = std::max(it->second, c.start_ns + c.duration_ns);
    if (window.length() <= 0) continue;
    out[i].causes = Causes(timeline, window);
    out[i].operators = Operators(trace, timeline, window);
  }
  return out;
}

WaitCauseTimes ChargeWindow(const CollectiveLeadIn& late, const CollectiveLeadIn& median, int64_t window_ns) {
  WaitCauseTimes charged{};
  if (window_ns <= 0) return charged;
  WaitCauseTimes extra{};
  int64_t extra_total = 0;
  for (size_t c = 0; c < kWaitCauseCount; ++c) {
    extra[c] = std::max<int64_t>(late.causes[c] - median.causes[c], 0);
    extra_total += extra[c];
  }
  const size_t unexplained = static_cast<size_t>(WaitCause::kUnexplained);
  if (extra_total <= window_ns) {
    charged = extra;
    charged[unexplained] += window_ns - extra_total;
    return charged;
  }
  // More extra time than lateness (the late rank also saved time elsewhere): the window in proportion.
  int64_t given = 0;
  size_t largest = 0;
  for (size_t c = 0; c < kWaitCauseCount; ++c) {
    charged[c] = static_cast<int64_t>(static_cast<double>(window_ns) * static_cast<double>(extra[c]) /
                                      static_cast<double>(extra_total));
    given += charged[c];
    if (extra[c] > extra[largest]) largest = c;
  }
  charged[largest] += window_ns - given;  // rounding, so that the causes add up to the window
  return charged;
}

void AddLeadOperators(const CollectiveLeadIn& lead_in, int sign, std::map<std::string, int64_t>* totals) {
  for (const LeadOperator& op : lead_in.operators) (*totals)[op.name.str()] += sign * op.ns;
}

}  // namespace tuneprof

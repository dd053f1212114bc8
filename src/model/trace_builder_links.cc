// The links Finish resolves between events: CUPTI correlations and the trace's flow points.
#include <algorithm>
#include <limits>
#include <vector>

#include "base/pair_table.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

bool IsHostCallKind(EventKind kind) { return kind == EventKind::kRuntime || kind == EventKind::kDriver; }

}  // namespace

// CUPTI correlation ids join a runtime call to the kernel or copy it launched (HTA joins on the same
// key; flows are only a viewer hint and are missing in some traces).
void TraceBuilder::ResolveCorrelationLinks() {
  const EventTable& e = trace_.events_;
  const auto host_call = [&](uint32_t i) { return IsHostCallKind(e.kind[i]) && e.correlation[i] != kNoId; };
  size_t calls = 0;
  for (uint32_t i = 0; i < e.size(); ++i) calls += host_call(i);
  if (calls == 0) return;
  PairTable call_of(calls);  // (0, correlation) -> the first host call carrying it
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (host_call(i)) call_of.At(0, static_cast<uint64_t>(e.correlation[i]), i);
  }
  const StringId category = Intern("correlation");
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (!IsDeviceKind(e.kind[i]) || e.correlation[i] == kNoId || e.kind[i] == EventKind::kGpuAnnotation) continue;
    const uint32_t* call = call_of.Find(0, static_cast<uint64_t>(e.correlation[i]));
    if (call != nullptr) trace_.links_.push_back(Link{*call, i, LinkKind::kCorrelation, category});
  }
}

// Flow endpoints carry no event reference: they attach to the interval on the same track that starts
// at the same ts (the innermost one), or, for bp:"e" points with no such interval, to the one
// enclosing them. Points are few next to events: exact matches come from one hashed pass over the
// events; only the rare enclosing case sorts the tracks involved.
std::vector<Link> TraceBuilder::ResolveFlows() {
  auto& points = trace_.flow_points_;
  const EventTable& e = trace_.events_;
  std::vector<Link> links;
  const size_t bound_points = static_cast<size_t>(
      std::count_if(points.begin(), points.end(), [](const FlowPoint& p) { return !p.duplicates_correlation; }));
  if (bound_points == 0) return links;
  PairTable exact(bound_points);  // (track, ts) -> event
  // Only events on a track that holds points are looked up: the probes miss the cache, and most events
  // (operators, overlap analysis, other streams) share no track with a flow.
  std::vector<char> has_points(trace_.tracks_.size(), 0);
  for (const FlowPoint& p : points) {
    if (p.duplicates_correlation) continue;
    exact.At(p.track, static_cast<uint64_t>(p.ts_ns), kNoIndex);
    has_points[p.track] = 1;
  }
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.dur_ns[i] < 0 || !has_points[e.track[i]]) continue;
    uint32_t* event = exact.Find(e.track[i], static_cast<uint64_t>(e.ts_ns[i]));
    if (event == nullptr) continue;
    if (*event == kNoIndex || e.dur_ns[i] < e.dur_ns[*event]) *event = i;  // innermost
  }
  std::vector<bool> needs_enclosing(trace_.tracks_.size(), false);
  bool any_enclosing = false;
  for (FlowPoint& p : points) {
    if (p.duplicates_correlation) continue;
    p.event = *exact.Find(p.track, static_cast<uint64_t>(p.ts_ns));
    if (p.event == kNoIndex && p.binds_enclosing) {
      needs_enclosing[p.track] = true;
      any_enclosing = true;
    }
  }
  if (any_enclosing) BindEnclosingFlowPoints(needs_enclosing);
  const auto bound_start = [](const FlowPoint& p) {
    return !p.duplicates_correlation && p.phase == FlowPhase::kStart && p.event != kNoIndex;
  };
  // Keyed by (category, id), numeric and string ids in tables of their own: a string's interned id can
  // equal a number.
  size_t string_starts = 0, numeric_starts = 0;
  for (const FlowPoint& p : points) {
    if (bound_start(p)) ++(p.id_is_string ? string_starts : numeric_starts);
  }
  PairTable starts[2] = {PairTable(numeric_starts), PairTable(string_starts)};
  for (const FlowPoint& p : points) {
    // A key started again counts from its last start.
    if (bound_start(p)) starts[p.id_is_string].At(p.category.value, static_cast<uint64_t>(p.id), kNoIndex) = p.event;
  }
  for (const FlowPoint& p : points) {
    if (p.duplicates_correlation || p.phase != FlowPhase::kEnd || p.event == kNoIndex) continue;
    const uint32_t* start = starts[p.id_is_string].Find(p.category.value, static_cast<uint64_t>(p.id));
    if (start != nullptr) links.push_back(Link{*start, p.event, LinkKind::kFlow, p.category});
  }
  return links;
}

// The latest-starting slice before the point's ts on its track that still covers it.
void TraceBuilder::BindEnclosingFlowPoints(const std::vector<bool>& tracks) {
  const EventTable& e = trace_.events_;
  struct Slot {
    uint32_t track;
    uint32_t event;
    int64_t ts;
    int64_t end;
  };
  std::vector<Slot> order;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (tracks[e.track[i]] && e.dur_ns[i] >= 0) order.push_back(Slot{e.track[i], i, e.ts_ns[i], e.end_ns(i)});
  }
  std::sort(order.begin(), order.end(),
            [](const Slot& a, const Slot& b) { return a.track != b.track ? a.track < b.track : a.ts < b.ts; });
  for (FlowPoint& p : trace_.flow_points_) {
    if (p.duplicates_correlation || p.event != kNoIndex || !p.binds_enclosing) continue;
    auto it = std::lower_bound(order.begin(), order.end(), p, [](const Slot& s, const FlowPoint& q) {
      return s.track != q.track ? s.track < q.track : s.ts < q.ts_ns;
    });
    int steps = 0;  // bounded look-back: nesting is shallow
    for (auto j = it; j != order.begin() && steps < 64; ++steps) {
      --j;
      if (j->track != p.track) break;
      if (j->end >= p.ts_ns) {
        p.event = j->event;
        break;
      }
    }
  }
}

}  // namespace tuneprof

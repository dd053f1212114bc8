#include "analysis/core/host_op_tree.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "analysis/core/mostly_sorted.h"

namespace tuneprof {
namespace {

bool IsHostInterval(const EventTable& events, uint32_t i) {
  if (events.dur_ns[i] < 0 || IsDeviceKind(events.kind[i])) return false;
  switch (events.kind[i]) {
    case EventKind::kHostOp:
    case EventKind::kUserAnnotation:
    case EventKind::kPythonFunction:
    case EventKind::kRuntime:
    case EventKind::kDriver:
    case EventKind::kOther:
      return true;
    default:
      return false;
  }
}

// Links each range of one thread to the innermost open range that contains it.
void NestTrack(const EventTable& events, const std::vector<uint32_t>& order, HostOpTree* tree) {
  std::vector<uint32_t> open;
  for (uint32_t event : order) {
    const int64_t end = events.end_ns(event);
    while (!open.empty() && events.end_ns(open.back()) < end) open.pop_back();
    if (!open.empty()) {
      const uint32_t parent = open.back();
      tree->parent[event] = parent;
      tree->self_ns[parent] -= events.dur_ns[event];
      tree->parent_op[event] = events.kind[parent] == EventKind::kHostOp ? parent : tree->parent_op[parent];
      const uint32_t op = tree->parent_op[event];
      if (op != kNoIndex) tree->outermost_op[event] = tree->outermost_op[op] != kNoIndex ? tree->outermost_op[op] : op;
    }
    open.push_back(event);
  }
}

struct RangeKey {
  int64_t ts_ns;
  int64_t dur_ns;
  uint32_t event;
  // By start, then longest first (parents before children), then by index.
  bool operator<(const RangeKey& o) const {
    if (ts_ns != o.ts_ns) return ts_ns < o.ts_ns;
    if (dur_ns != o.dur_ns) return dur_ns > o.dur_ns;
    return event < o.event;
  }
};

// Sorts one track's ranges on copies of their keys: an index sort reading the columns at random cost more
// than the rest of the tree. A track already in order (most are: profilers write a thread's ranges by
// start) is only checked, and one nearly in order is merged rather than sorted.
void SortRanges(const EventTable& events, std::vector<uint32_t>* order, std::vector<RangeKey>* keys) {
  keys->clear();
  for (const uint32_t e : *order) keys->push_back(RangeKey{events.ts_ns[e], events.dur_ns[e], e});
  if (std::is_sorted(keys->begin(), keys->end())) return;
  SortMostlySorted(keys, std::less<RangeKey>{});
  for (size_t i = 0; i < keys->size(); ++i) (*order)[i] = (*keys)[i].event;
}

}  // namespace

HostOpTree BuildHostOpTree(const Trace& trace) {
  const EventTable& events = trace.events();
  HostOpTree tree;
  tree.parent.assign(events.size(), kNoIndex);
  tree.parent_op.assign(events.size(), kNoIndex);
  tree.outermost_op.assign(events.size(), kNoIndex);
  tree.self_ns.assign(events.size(), 0);
  tree.by_track.resize(trace.tracks().size());
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!IsHostInterval(events, i) || trace.tracks()[events.track[i]].on_device) continue;
    tree.by_track[events.track[i]].push_back(i);
    tree.self_ns[i] = events.dur_ns[i];
  }
  std::vector<RangeKey> keys;
  for (std::vector<uint32_t>& order : tree.by_track) {
    SortRanges(events, &order, &keys);
    NestTrack(events, order, &tree);
  }
  // Children that overlap each other (async ranges written on one thread) could push self time below 0.
  for (int64_t& self : tree.self_ns) self = std::max<int64_t>(self, 0);
  return tree;
}

std::vector<uint32_t> LaunchingOps(const Trace& trace, const HostOpTree& tree) {
  std::vector<uint32_t> op_of(trace.events().size(), kNoIndex);
  for (const Link& link : trace.links()) {
    if (link.kind != LinkKind::kCorrelation || link.from >= tree.parent_op.size() || link.to >= op_of.size()) continue;
    const uint32_t op = tree.parent_op[link.from];
    if (op != kNoIndex && op_of[link.to] == kNoIndex) op_of[link.to] = op;
  }
  return op_of;
}

}  // namespace tuneprof

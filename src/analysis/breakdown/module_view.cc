#include "analysis/breakdown/module_view.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "analysis/breakdown/ascend_step_breakdown.h"
#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/core/device_work.h"

namespace tuneprof {
namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";
constexpr std::string_view kLibraryPrefix = "nccl";
constexpr std::string_view kBackwardFlow = "fwdbwd";
constexpr std::string_view kTorchNpuLaunchFlow = "HostToDevice";  // as device_launches.cc reads it
constexpr std::string_view kTorchNpuFrameworkFlow = "async_npu";  // framework operator -> device task
constexpr uint32_t kNone = kNoIndex;

// The module a range stands for, or nullopt: `nn.Module:` python_function ranges by their module's
// name, user annotations (record_function, NVTX, mstx) by theirs. Steps are left out (they are the step
// split's, and every module would sit under one), and so are NCCL's ranges (its API's NVTX ranges,
// PyTorch's `nccl:*` around each collective): calls into a library, not parts of the model.
std::optional<std::string_view> ModuleName(EventKind kind, std::string_view name) {
  if (kind == EventKind::kPythonFunction && name.starts_with(kModulePrefix)) return name.substr(kModulePrefix.size());
  if (kind != EventKind::kUserAnnotation || name.empty()) return std::nullopt;
  if (name.starts_with(kProfilerStepPrefix) || name.starts_with(kLibraryPrefix)) return std::nullopt;
  return name;
}

// A host range: a module's, a backward operator's or a dequeue's. `track` is whatever the points it is
// matched with are keyed by (a track, or a thread id across processes).
struct Span {
  uint32_t track = 0;
  int64_t start = 0;
  int64_t end = 0;
  uint32_t event = 0;
  uint32_t node = kNone;  // the module it stands for (a backward operator: its forward's; a dequeue: its enqueue)
};

bool SpanOrder(const Span& a, const Span& b) {
  return std::tie(a.track, a.start, b.end, a.event) < std::tie(b.track, b.start, a.end, b.event);
}

struct Point {
  uint32_t track = 0;
  int64_t ts = 0;
  uint32_t id = 0;  // the caller's index
};

// For each point, the innermost span of `spans` (sorted by SpanOrder) open at it on its track: the
// latest in that order with start <= ts < end. One sweep with a stack of open spans; kNone if none.
// Indexed by the points' ids, which are below `id_count`.
std::vector<uint32_t> InnermostOpen(const std::vector<Span>& spans, std::vector<Point> points, size_t id_count) {
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return std::tie(a.track, a.ts, a.id) < std::tie(b.track, b.ts, b.id);
  });
  std::vector<uint32_t> found(id_count, kNone);
  std::vector<uint32_t> open;
  uint32_t open_track = kNone;
  size_t next = 0;
  for (const Point& p : points) {
    while (next < spans.size() &&
           (spans[next].track < p.track || (spans[next].track == p.track && spans[next].start <= p.ts))) {
      if (spans[next].track != open_track) {
        open.clear();
        open_track = spans[next].track;
      }
      open.push_back(static_cast<uint32_t>(next++));
    }
    if (open_track != p.track) continue;
    while (!open.empty() && spans[open.back()].end <= p.ts) open.pop_back();
    if (!open.empty()) found[p.id] = open.back();
  }
  return found;
}

// Where each piece of device work was launched from, on the thread the model's ranges are on: torch_npu's
// `async_npu` flow from the framework operator (its launch runs later on a queue thread), else the
// runtime call's thread and start (a correlation link), else a launch flow's start point (torch_npu's
// HostToDevice, or a flow from a call). Points without a launch keep track kNone.
std::vector<Point> LaunchPoints(const Trace& trace, const std::vector<DeviceWorkEvent>& work) {
  const EventTable& events = trace.events();
  std::vector<uint32_t> work_index(events.size(), kNone);
  for (size_t i = 0; i < work.size(); ++i) work_index[work[i].event] = static_cast<uint32_t>(i);
  std::vector<Point> points(work.size(), Point{kNone, 0, 0});
  std::vector<uint8_t> rank(work.size(), 0);  // how good the point is: 3 framework flow, 2 call, 1 other flow
  const auto offer = [&](uint32_t event, uint32_t track, int64_t ts, uint8_t quality) {
    const uint32_t id = work_index[event];
    if (id == kNone || rank[id] >= quality) return;
    points[id] = Point{track, ts, id};
    rank[id] = quality;
  };
  for (const Link& link : trace.links()) {
    if (link.kind == LinkKind::kCorrelation) offer(link.to, events.track[link.from], events.ts_ns[link.from], 2);
  }
  if (trace.flow_points().empty()) return points;
  StringId npu_launch, framework;
  const bool has_npu_launch = trace.strings().Find(kTorchNpuLaunchFlow, &npu_launch);
  const bool has_framework = trace.strings().Find(kTorchNpuFrameworkFlow, &framework);
  std::unordered_map<FlowKey, Point, FlowKeyHash> starts;
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.phase != FlowPhase::kStart || p.duplicates_correlation) continue;
    const bool from_call = p.event != kNoIndex &&
                           (events.kind[p.event] == EventKind::kRuntime || events.kind[p.event] == EventKind::kDriver);
    const bool launch = (has_npu_launch && p.category == npu_launch) || (has_framework && p.category == framework);
    if (from_call || launch) starts.emplace(FlowKey(p), Point{p.track, p.ts_ns, 0});
  }
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.phase != FlowPhase::kEnd || p.event == kNoIndex) continue;
    auto it = starts.find(FlowKey(p));
    if (it == starts.end()) continue;
    offer(p.event, it->second.track, it->second.ts, has_framework && p.category == framework ? 3 : 1);
  }
  return points;
}

// torch_npu's Db export launches from its task queue's thread: the call sits inside a dequeue range,
// drawn on the Python process, while the call is on the CANN process under the same thread id. The
// queue's `async_task_queue` flow leads from that dequeue back to the enqueue on the framework's
// thread, whose start places the work among the model's ranges. Threads are matched by id, across
// processes; launches inside no dequeue keep their point.
void FollowTaskQueue(const Trace& trace, std::vector<Point>* launches) {
  StringId category;
  if (!trace.strings().Find(kTorchNpuTaskQueueFlow, &category)) return;
  std::unordered_map<uint64_t, uint32_t> thread_of_tid;
  const auto thread = [&](uint32_t track) {
    const ProcessKey& tid = trace.tracks()[track].tid;
    const uint64_t key = static_cast<uint64_t>(tid.value) * 2 + (tid.is_string ? 1 : 0);
    return thread_of_tid.try_emplace(key, static_cast<uint32_t>(thread_of_tid.size())).first->second;
  };
  const EventTable& events = trace.events();
  std::unordered_map<FlowKey, Point, FlowKeyHash> enqueues;
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.category == category && p.phase == FlowPhase::kStart)
      enqueues.emplace(FlowKey(p), Point{p.track, p.ts_ns, 0});
  }
  std::vector<Span> dequeues;
  std::vector<Point> enqueue_of;  // by dequeue, in `dequeues`' final order through Span::node
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.category != category || p.phase != FlowPhase::kEnd || p.event == kNoIndex) continue;
    auto it = enqueues.find(FlowKey(p));
    if (it == enqueues.end()) continue;
    dequeues.push_back(Span{thread(events.track[p.event]), events.ts_ns[p.event], events.end_ns(p.event), p.event,
                            static_cast<uint32_t>(enqueue_of.size())});
    enqueue_of.push_back(it->second);
  }
  if (dequeues.empty()) return;
  std::sort(dequeues.begin(), dequeues.end(), SpanOrder);
  std::vector<Point> queries;
  for (size_t i = 0; i < launches->size(); ++i) {
    const Point& p = (*launches)[i];
    if (p.track != kNone) queries.push_back(Point{thread(p.track), p.ts, static_cast<uint32_t>(i)});
  }
  const std::vector<uint32_t> holder = InnermostOpen(dequeues, std::move(queries), launches->size());
  for (size_t i = 0; i < launches->size(); ++i) {
    if (holder[i] == kNone) continue;
    const Point& enqueue = enqueue_of[dequeues[holder[i]].node];
    (*launches)[i] = Point{enqueue.track, enqueue.ts, (*launches)[i].id};
  }
}

// The module tree: one node per distinct path, parents before children.
// A hostile trace (ranges nested a million deep, or long names under a deep parent) would make paths
// quadratic in its size: a path deeper than kMaxDepth, or one past the budget of all paths' bytes, is
// not made; its range counts as part of its parent's (kNone at the root: in no module).
class ModuleTree {
 public:
  static constexpr uint32_t kMaxDepth = ModuleView::kMaxDepth;
  static constexpr size_t kPathBytesBudget = size_t{16} << 20;

  uint32_t Node(uint32_t parent, std::string_view name) {
    std::string key(reinterpret_cast<const char*>(&parent), sizeof parent);
    key += name;
    if (auto it = index_.find(key); it != index_.end()) return it->second;
    const size_t path_bytes = (parent == kNone ? 0 : rows_[parent].path.size() + 1) + name.size();
    if ((parent != kNone && rows_[parent].depth + 1 >= kMaxDepth) || path_bytes > kPathBytesBudget - path_bytes_) {
      return kNone;
    }
    path_bytes_ += path_bytes;
    auto [it, added] = index_.try_emplace(std::move(key), static_cast<uint32_t>(rows_.size()));
    if (added) {
      ModuleRow row;
      row.name = std::string(name);
      row.path = parent == kNone ? row.name : rows_[parent].path + "." + row.name;
      row.depth = parent == kNone ? 0 : rows_[parent].depth + 1;
      row.first_start_ns = std::numeric_limits<int64_t>::max();
      rows_.push_back(std::move(row));
      parents_.push_back(parent);
    }
    return it->second;
  }
  std::vector<ModuleRow>& rows() { return rows_; }
  const std::vector<uint32_t>& parents() const { return parents_; }

 private:
  std::unordered_map<std::string, uint32_t> index_;
  size_t path_bytes_ = 0;
  std::vector<ModuleRow> rows_;
  std::vector<uint32_t> parents_;
};

// The module ranges sorted by SpanOrder, each given its node; the parent of a range is the innermost
// module range open on its thread when it starts.
std::vector<Span> ModuleSpans(const Trace& trace, ModuleTree* tree, ModuleView* view) {
  const EventTable& events = trace.events();
  std::vector<Span> spans;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kPythonFunction && events.kind[i] != EventKind::kUserAnnotation) continue;
    if (!ModuleName(events.kind[i], trace.str(events.name[i]))) continue;
    if (trace.tracks()[events.track[i]].on_device) continue;
    spans.push_back(Span{events.track[i], events.ts_ns[i], events.end_ns(i), i, kNone});
  }
  std::sort(spans.begin(), spans.end(), SpanOrder);
  std::vector<uint32_t> open;
  uint32_t open_track = kNone;
  for (Span& s : spans) {
    if (s.track != open_track) {
      open.clear();
      open_track = s.track;
    }
    while (!open.empty() && spans[open.back()].end <= s.start) open.pop_back();
    const uint32_t parent = open.empty() ? kNone : spans[open.back()].node;
    const EventKind kind = events.kind[s.event];
    view->has_nn_modules = view->has_nn_modules || kind == EventKind::kPythonFunction;
    s.node = tree->Node(parent, *ModuleName(kind, trace.str(events.name[s.event])));
    open.push_back(static_cast<uint32_t>(&s - spans.data()));
    if (s.node == kNone) {
      ++view->collapsed_ranges;
      s.node = parent;  // part of its parent, which has counted its time already
      continue;
    }
    ModuleRow& row = tree->rows()[s.node];
    ++row.count;
    row.host_ns += s.end - s.start;
    row.first_start_ns = std::min(row.first_start_ns, s.start);
  }
  return spans;
}

// Whether the trace links any backward operator to its forward one; without, backward work cannot be
// told from forward work.
bool HasBackwardLinks(const Trace& trace) {
  StringId category;
  if (!trace.strings().Find(kBackwardFlow, &category)) return false;
  return std::any_of(trace.flow_points().begin(), trace.flow_points().end(),
                     [&](const FlowPoint& p) { return p.category == category; });
}

// Backward operators (ends of fwdbwd flows) as spans standing for the module that holds their forward
// operator, sorted by SpanOrder; those whose forward operator is in no module are left out.
std::vector<Span> BackwardSpans(const Trace& trace, const std::vector<Span>& modules) {
  StringId category;
  if (!trace.strings().Find(kBackwardFlow, &category)) return {};
  const EventTable& events = trace.events();
  std::unordered_map<FlowKey, Point, FlowKeyHash> forward;
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.category == category && p.phase == FlowPhase::kStart) forward.emplace(FlowKey(p), Point{p.track, p.ts_ns, 0});
  }
  std::vector<Span> backward;
  std::vector<Point> queries;
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.category != category || p.phase != FlowPhase::kEnd || p.event == kNoIndex) continue;
    auto it = forward.find(FlowKey(p));
    if (it == forward.end()) continue;
    queries.push_back(Point{it->second.track, it->second.ts, static_cast<uint32_t>(backward.size())});
    backward.push_back(Span{events.track[p.event], events.ts_ns[p.event], events.end_ns(p.event), p.event, kNone});
  }
  const std::vector<uint32_t> holder = InnermostOpen(modules, std::move(queries), backward.size());
  std::vector<Span> kept;
  for (size_t i = 0; i < backward.size(); ++i) {
    if (holder[i] == kNone || modules[holder[i]].node == kNone) continue;
    backward[i].node = modules[holder[i]].node;
    kept.push_back(backward[i]);
  }
  std::sort(kept.begin(), kept.end(), SpanOrder);
  return kept;
}

// Where each piece of device work was placed: its launch among the model's ranges and the module it
// counts for (kNone: none), by index into `work`.
struct WorkPlacement {
  std::vector<DeviceWorkEvent> work;
  std::vector<Point> launches;  // those with a launch point, in no order
  std::vector<uint32_t> module;
  std::vector<Span> ranges;  // the module ranges, sorted by SpanOrder
};

// Each piece of work to the innermost module range around its launch, else to the module of the
// innermost mapped backward operator around it; self times first, then summed up the tree.
WorkPlacement AttributeDeviceWork(const Trace& trace, const std::vector<Span>& modules, ModuleTree* tree,
                                  ModuleView* view) {
  WorkPlacement placed;
  placed.work = ListMeasuredDeviceWork(trace);
  const std::vector<DeviceWorkEvent>& work = placed.work;
  const EventTable& events = trace.events();
  const auto duration = [&](uint32_t id) { return std::max<int64_t>(events.dur_ns[work[id].event], 0); };
  for (uint32_t id = 0; id < work.size(); ++id) view->device_total_ns += duration(id);
  std::vector<Point>& launches = placed.launches;
  launches = LaunchPoints(trace, work);
  std::erase_if(launches, [](const Point& p) { return p.track == kNone; });
  FollowTaskQueue(trace, &launches);
  placed.module.assign(work.size(), kNone);
  const std::vector<uint32_t> forward = InnermostOpen(modules, launches, work.size());
  std::vector<ModuleRow>& rows = tree->rows();
  std::vector<Point> rest;
  for (const Point& p : launches) {
    if (forward[p.id] == kNone) {
      rest.push_back(p);
    } else if (modules[forward[p.id]].node != kNone) {
      placed.module[p.id] = modules[forward[p.id]].node;
      rows[placed.module[p.id]].forward_ns += duration(p.id);
    }
  }
  const std::vector<Span> backward_ops = rest.empty() ? std::vector<Span>() : BackwardSpans(trace, modules);
  if (!backward_ops.empty()) {
    const std::vector<uint32_t> backward = InnermostOpen(backward_ops, rest, work.size());
    for (const Point& p : rest) {
      if (backward[p.id] == kNone) continue;
      placed.module[p.id] = backward_ops[backward[p.id]].node;
      rows[placed.module[p.id]].backward_ns += duration(p.id);
    }
  }
  for (ModuleRow& row : rows) {
    row.self_ns = row.forward_ns + row.backward_ns;
    view->attributed_ns += row.self_ns;
  }
  // Children come after their parents: one pass from the end sums each subtree into its root.
  for (size_t n = rows.size(); n-- > 0;) {
    const uint32_t parent = tree->parents()[n];
    if (parent == kNone) continue;
    rows[parent].forward_ns += rows[n].forward_ns;
    rows[parent].backward_ns += rows[n].backward_ns;
  }
  return placed;
}

// Host self times (a module's ranges less its child modules'), and the roots' host time, which is what
// a view without device work shares out.
void MeasureHostTime(const std::vector<uint32_t>& parents, std::vector<ModuleRow>* rows, ModuleView* view) {
  for (ModuleRow& row : *rows) row.host_self_ns = row.host_ns;
  for (size_t n = 0; n < rows->size(); ++n) {
    if (parents[n] == kNone) {
      view->host_total_ns += (*rows)[n].host_ns;
    } else {
      (*rows)[parents[n]].host_self_ns -= (*rows)[n].host_ns;
    }
  }
  for (ModuleRow& row : *rows) row.host_self_ns = std::max<int64_t>(row.host_self_ns, 0);
}

// `Name_12` -> `Name`; a name without a numeric suffix is its own class (nullopt).
std::optional<std::string_view> ModuleClass(std::string_view name) {
  const size_t underscore = name.rfind('_');
  if (underscore == std::string_view::npos || underscore == 0 || underscore + 1 == name.size()) return std::nullopt;
  for (size_t i = underscore + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
  }
  return name.substr(0, underscore);
}

// Each node's rolled-up path (empty when nothing above or at it repeats), nodes in tree order.
std::vector<std::string> RolledUpPaths(const std::vector<ModuleRow>& rows, const std::vector<uint32_t>& parents) {
  // Same-class children of each parent, counted and numbered in order of first start.
  std::vector<uint32_t> order(rows.size());
  for (uint32_t n = 0; n < rows.size(); ++n) order[n] = n;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(rows[a].first_start_ns, a) < std::tie(rows[b].first_start_ns, b);
  });
  // A module's shape: the classes of its children in order. Siblings of one class are layers only when
  // their shapes match (a model's `features` and `classifier` are both Sequential, not two layers).
  std::vector<std::string> shape(rows.size());
  for (uint32_t n : order) {
    if (parents[n] == kNone) continue;
    shape[parents[n]].append(ModuleClass(rows[n].name).value_or(rows[n].name)).push_back('\n');
  }
  std::unordered_map<std::string, uint32_t> class_count;
  std::vector<uint32_t> ordinal(rows.size(), 0);
  std::vector<std::string> class_key(rows.size());
  for (uint32_t n : order) {
    const std::optional<std::string_view> cls = ModuleClass(rows[n].name);
    if (!cls) continue;
    std::string& key = class_key[n];
    key.assign(reinterpret_cast<const char*>(&parents[n]), sizeof(uint32_t)).append(*cls).push_back('\n');
    key += shape[n];
    ordinal[n] = class_count[key]++;
  }
  std::vector<std::string> rolled(rows.size());
  for (uint32_t n = 0; n < rows.size(); ++n) {  // parents first
    const uint32_t parent = parents[n];
    const std::string above = parent == kNone ? std::string() : rolled[parent];
    const std::optional<std::string_view> cls = ModuleClass(rows[n].name);
    const uint32_t siblings = cls ? class_count[class_key[n]] : 1;
    std::string component;
    if (cls && !above.empty()) {
      component.assign(*cls).append("_*");
      if (siblings > 1) component.append("[").append(std::to_string(ordinal[n])).append("]");
    } else if (cls && siblings > 1) {
      component.assign(*cls).append("_*");
    } else if (!above.empty()) {
      component = rows[n].name;
    } else {
      continue;  // nothing repeats down to here
    }
    const std::string prefix = !above.empty() ? above : (parent == kNone ? std::string() : rows[parent].path);
    rolled[n] = prefix.empty() ? component : prefix + "." + component;
  }
  return rolled;
}

// The groups of two members or more; each member's layer_path set to its group's.
std::vector<LayerGroup> RollUpLayers(const std::vector<uint32_t>& parents, bool by_host,
                                     std::vector<ModuleRow>* mutable_rows) {
  const std::vector<ModuleRow>& rows = *mutable_rows;
  const auto measure = [by_host](const ModuleRow& row) { return by_host ? row.host_ns : row.device_ns(); };
  const std::vector<std::string> rolled = RolledUpPaths(rows, parents);
  std::unordered_map<std::string, std::vector<uint32_t>> members;
  std::vector<std::string> group_order;
  for (uint32_t n = 0; n < rows.size(); ++n) {
    if (rolled[n].empty()) continue;
    std::vector<uint32_t>& list = members[rolled[n]];
    if (list.empty()) group_order.push_back(rolled[n]);
    list.push_back(n);
  }
  std::vector<LayerGroup> groups;
  for (const std::string& path : group_order) {
    std::vector<uint32_t> list = members[path];
    if (list.size() < 2) continue;
    std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(rows[a].first_start_ns, a) < std::tie(rows[b].first_start_ns, b);
    });
    LayerGroup g;
    g.path = path;
    g.members = list.size();
    g.min_ns = std::numeric_limits<int64_t>::max();
    g.max_ns = std::numeric_limits<int64_t>::min();
    for (uint32_t n : list) {
      (*mutable_rows)[n].layer_path = path;
      g.device_ns += measure(rows[n]);
      g.min_ns = std::min(g.min_ns, measure(rows[n]));
      g.max_ns = std::max(g.max_ns, measure(rows[n]));
    }
    g.mean_ns = g.device_ns / static_cast<int64_t>(list.size());
    int64_t furthest = -1;
    for (uint32_t n : list) {
      const int64_t distance = std::abs(measure(rows[n]) - g.mean_ns);
      if (distance <= furthest) continue;
      furthest = distance;
      g.outlier_path = rows[n].path;
      g.outlier_ns = measure(rows[n]);
    }
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end(), [](const LayerGroup& a, const LayerGroup& b) {
    return a.device_ns != b.device_ns ? a.device_ns > b.device_ns : a.path < b.path;
  });
  return groups;
}

}  // namespace

namespace {

// The view, and where `placed` is given, where each piece of work went, with the modules by tree index
// (the view's rows are sorted afterwards).
ModuleView ComputeView(const Trace& trace, WorkPlacement* placed, std::vector<std::string>* names) {
  ModuleView view;
  ModuleTree tree;
  const std::vector<Span> spans = ModuleSpans(trace, &tree, &view);
  if (spans.empty()) return view;
  WorkPlacement work = AttributeDeviceWork(trace, spans, &tree, &view);
  MeasureHostTime(tree.parents(), &tree.rows(), &view);
  view.backward_known = HasBackwardLinks(trace);
  view.by_host = view.device_total_ns == 0;
  view.layers = RollUpLayers(tree.parents(), view.by_host, &tree.rows());
  if (placed != nullptr) {
    *placed = std::move(work);
    placed->ranges = spans;
    for (const ModuleRow& row : tree.rows()) names->push_back(row.layer_path.empty() ? row.path : row.layer_path);
  }
  view.modules = std::move(tree.rows());
  std::stable_sort(view.modules.begin(), view.modules.end(), [](const ModuleRow& a, const ModuleRow& b) {
    return std::tie(a.first_start_ns, a.depth) < std::tie(b.first_start_ns, b.depth);
  });
  return view;
}

}  // namespace

ModuleView ComputeModuleView(const Trace& trace) { return ComputeView(trace, nullptr, nullptr); }

ModuleAttribution::ModuleAttribution(std::vector<std::string> names,
                                     std::vector<std::pair<uint32_t, uint32_t>> module_of_work,
                                     std::vector<Launch> launches, std::vector<Range> ranges)
    : names_(std::move(names)),
      module_of_(std::move(module_of_work)),
      launches_(std::move(launches)),
      ranges_(std::move(ranges)) {
  std::sort(module_of_.begin(), module_of_.end());
  std::sort(launches_.begin(), launches_.end(), [](const Launch& a, const Launch& b) {
    return std::tie(a.track, a.ts, a.event) < std::tie(b.track, b.ts, b.event);
  });
}

std::optional<uint32_t> ModuleAttribution::ModuleOf(uint32_t event) const {
  const auto it = std::lower_bound(module_of_.begin(), module_of_.end(), std::make_pair(event, uint32_t{0}));
  if (it == module_of_.end() || it->first != event) return std::nullopt;
  return it->second;
}

void ModuleAttribution::LaunchedWithin(uint32_t track, int64_t start, int64_t end, std::vector<uint32_t>* out) const {
  const auto at = [](uint32_t t, int64_t ts) { return Launch{t, ts, 0}; };
  const auto before = [](const Launch& a, const Launch& b) {
    return std::tie(a.track, a.ts) < std::tie(b.track, b.ts);
  };
  auto it = std::lower_bound(launches_.begin(), launches_.end(), at(track, start), before);
  for (; it != launches_.end() && it->track == track && it->ts < end; ++it) out->push_back(it->event);
}

std::vector<uint32_t> ModuleAttribution::ModulesAround(std::span<const HostPoint> points) const {
  std::vector<Span> spans;
  spans.reserve(ranges_.size());
  for (const Range& r : ranges_) spans.push_back(Span{r.track, r.start, r.end, 0, r.module});
  std::vector<Point> queries;
  queries.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    queries.push_back(Point{points[i].track, points[i].ts, static_cast<uint32_t>(i)});
  }
  const std::vector<uint32_t> holder = InnermostOpen(spans, std::move(queries), points.size());
  std::vector<uint32_t> modules(points.size(), kNone);
  for (size_t i = 0; i < points.size(); ++i) {
    if (holder[i] != kNone) modules[i] = spans[holder[i]].node;
  }
  return modules;
}

ModuleAttribution AttributeWorkToModules(const Trace& trace) {
  WorkPlacement placed;
  std::vector<std::string> names;
  ComputeView(trace, &placed, &names);
  if (names.empty()) return {};
  std::vector<std::pair<uint32_t, uint32_t>> module_of;
  module_of.reserve(placed.work.size());
  for (size_t id = 0; id < placed.work.size(); ++id) module_of.emplace_back(placed.work[id].event, placed.module[id]);
  std::vector<ModuleAttribution::Launch> launches;
  launches.reserve(placed.launches.size());
  for (const Point& p : placed.launches) launches.push_back({p.track, p.ts, placed.work[p.id].event});
  std::vector<ModuleAttribution::Range> ranges;
  ranges.reserve(placed.ranges.size());
  for (const Span& s : placed.ranges) ranges.push_back({s.track, s.start, s.end, s.node});
  return ModuleAttribution(std::move(names), std::move(module_of), std::move(launches), std::move(ranges));
}

}  // namespace tuneprof

#include "analysis/advisor/call_sites.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <unordered_map>

#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

constexpr size_t kMaxFrameDepth = 256;  // a Python stack deeper than this is not walked further
constexpr std::string_view kModulePrefix = "nn.Module:";
constexpr std::string_view kModuleCallFrame = "nn/modules/module.py(";  // a module's __call__ machinery
constexpr std::array kInstallationDirs = std::to_array<std::string_view>({"/lib/python", "/lib64/python"});
constexpr std::string_view kFrameworkFlow = "async_npu";         // framework operator -> device task
constexpr std::string_view kTaskQueueFlow = "async_task_queue";  // enqueue -> dequeue

// torch_npu's Db export draws the launch call inside a dequeue range of the queue's thread (same thread
// id, another process); the `async_task_queue` flow leads from that dequeue back to the enqueue inside
// the operator. Each launch call found inside a dequeue is replaced by that enqueue.
void FollowTaskQueue(const Trace& trace, std::vector<uint32_t>* launcher) {
  StringId queue;
  if (!trace.strings().Find(kTaskQueueFlow, &queue)) return;
  const EventTable& events = trace.events();
  std::unordered_map<FlowKey, uint32_t, FlowKeyHash> enqueues;
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.category == queue && p.phase == FlowPhase::kStart && p.event != kNoIndex)
      enqueues.emplace(FlowKey(p), p.event);
  }
  struct Dequeue {
    int64_t start = 0, end = 0;
    uint32_t enqueue = 0;
  };
  const auto tid_of = [&](uint32_t event) {
    const ProcessKey& tid = trace.tracks()[events.track[event]].tid;
    return std::pair{tid.value, tid.is_string};
  };
  std::map<std::pair<int64_t, bool>, std::vector<Dequeue>> by_tid;
  for (const FlowPoint& p : trace.flow_points()) {
    if (p.category != queue || p.phase != FlowPhase::kEnd || p.event == kNoIndex) continue;
    if (const auto it = enqueues.find(FlowKey(p)); it != enqueues.end())
      by_tid[tid_of(p.event)].push_back({events.ts_ns[p.event], events.end_ns(p.event), it->second});
  }
  if (by_tid.empty()) return;
  for (auto& [tid, dequeues] : by_tid) {
    std::sort(dequeues.begin(), dequeues.end(), [](const Dequeue& a, const Dequeue& b) { return a.start < b.start; });
  }
  for (uint32_t& from : *launcher) {
    if (from == kNoIndex || events.kind[from] != EventKind::kRuntime) continue;
    const auto it = by_tid.find(tid_of(from));
    if (it == by_tid.end()) continue;
    const int64_t ts = events.ts_ns[from];
    auto after = std::upper_bound(it->second.begin(), it->second.end(), ts,
                                  [](int64_t t, const Dequeue& d) { return t < d.start; });
    if (after != it->second.begin() && std::prev(after)->end >= ts) from = std::prev(after)->enqueue;
  }
}

// ".../lib/python3.9/multiprocessing/queues.py(122): get": a file of a Python installation, the
// runtime's own modules or its packages.
bool InPythonInstallation(std::string_view name) {
  for (const std::string_view dir : kInstallationDirs) {
    for (size_t at = name.find(dir); at != std::string_view::npos; at = name.find(dir, at + 1)) {
      const size_t next = at + dir.size();
      if (next < name.size() && std::isdigit(static_cast<unsigned char>(name[next]))) return true;
    }
  }
  return false;
}

// "/home/u/proj/main.py(366): train" as "main.py(366): train": recorded stacks write absolute paths, the
// Python tracer a script's frames by file name, and a finding names a site the same way from either.
std::string_view ShortFrame(std::string_view frame) {
  const size_t line = frame.rfind('(', frame.find("): "));
  if (frame.empty() || frame.front() != '/' || line == std::string_view::npos) return frame;
  const size_t dir = frame.substr(0, line).rfind('/');
  return dir == std::string_view::npos ? frame : frame.substr(dir + 1);
}

}  // namespace

std::string_view UserFrame(std::string_view frames, bool* module_below) {
  for (size_t depth = 0; !frames.empty() && depth < kMaxFrameDepth; ++depth) {
    const size_t end = std::min(frames.find('\n'), frames.size());
    const std::string_view frame = frames.substr(0, end);
    frames.remove_prefix(std::min(end + 1, frames.size()));
    if (!LibraryFrame(frame)) return frame;
    *module_below = *module_below || frame.find(kModuleCallFrame) != std::string_view::npos;
  }
  return {};
}

bool LibraryFrame(std::string_view name) {
  constexpr std::array kPrefixes = std::to_array<std::string_view>(
      {"torch/", "torch_npu/", "multiprocessing/", "threading.py", "<built-in", "<string>", "<frozen", "runpy.py",
       "contextlib.py", "functools.py", "apex/", kModulePrefix});
  if (name.find("site-packages/") != std::string_view::npos || name.find("dist-packages/") != std::string_view::npos ||
      InPythonInstallation(name))
    return true;
  return std::any_of(kPrefixes.begin(), kPrefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
}

CallSites::CallSites(const Trace& trace, const HostOpTree& tree) : trace_(trace), tree_(tree) {
  for (const CallStackInfo& s : trace.call_stacks()) stacks_.emplace(s.event, s.frames);
}

const std::string& CallSites::Of(uint32_t event) {
  if (event >= tree_.parent.size()) return empty_;
  // The walk starts above the event, unless the event carries its own stack.
  const uint32_t from = stacks_.contains(event) ? event : tree_.parent[event];
  if (from == kNoIndex) return empty_;
  auto [it, inserted] = memo_.try_emplace(from);
  if (inserted) it->second = Find(from);
  return it->second;
}

std::string CallSites::FromStack(StringId stack, uint32_t at, std::string_view module) const {
  bool module_below = false;
  const std::string_view frame = ShortFrame(UserFrame(trace_.str(stack), &module_below));
  if (frame.empty()) return "";
  // The innermost module around the operator is one of those the stack called below the user's frame.
  if (module.empty() && module_below) module = ModuleAround(at);
  return module.empty() ? std::string(frame) : fmt::format("{} in {}", frame, module);
}

std::string_view CallSites::ModuleAround(uint32_t at) const {
  const EventTable& events = trace_.events();
  for (size_t depth = 0; at != kNoIndex && depth < kMaxFrameDepth; ++depth, at = tree_.parent[at]) {
    const std::string_view name = trace_.str(events.name[at]);
    if (events.kind[at] == EventKind::kPythonFunction && name.starts_with(kModulePrefix)) return name;
  }
  return {};
}

std::string CallSites::Find(uint32_t at) const {
  const EventTable& events = trace_.events();
  std::string_view module;
  for (size_t depth = 0; at != kNoIndex && depth < kMaxFrameDepth; ++depth, at = tree_.parent[at]) {
    if (const auto stack = stacks_.find(at); stack != stacks_.end()) {
      std::string site = FromStack(stack->second, at, module);
      if (!site.empty()) return site;
    }
    if (events.kind[at] != EventKind::kPythonFunction) continue;
    const std::string_view name = trace_.str(events.name[at]);
    if (module.empty() && name.starts_with(kModulePrefix)) module = name;
    if (!LibraryFrame(name)) return module.empty() ? std::string(name) : fmt::format("{} in {}", name, module);
  }
  return std::string(module);
}

std::vector<uint32_t> DeviceLaunchers(const Trace& trace) {
  const EventTable& events = trace.events();
  std::vector<uint32_t> launcher(events.size(), kNoIndex);
  for (const Link& link : trace.links()) {
    if (link.kind == LinkKind::kCorrelation) launcher[link.to] = link.from;
  }
  FollowTaskQueue(trace, &launcher);
  StringId framework;
  if (trace.strings().Find(kFrameworkFlow, &framework)) {
    std::map<std::pair<int64_t, bool>, uint32_t> starts;
    for (const FlowPoint& p : trace.flow_points()) {
      if (p.category == framework && p.phase == FlowPhase::kStart && p.event != kNoIndex)
        starts.emplace(std::pair{p.id, p.id_is_string}, p.event);
    }
    for (const FlowPoint& p : trace.flow_points()) {
      if (p.category != framework || p.phase != FlowPhase::kEnd || p.event == kNoIndex) continue;
      if (const auto it = starts.find({p.id, p.id_is_string}); it != starts.end()) launcher[p.event] = it->second;
    }
  }
  return launcher;
}

std::vector<uint32_t> KernelDetailTasks(const Trace& trace, const std::vector<uint32_t>& launchers) {
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  std::vector<uint32_t> out(rows.size(), kNoIndex);
  if (rows.empty()) return out;
  const EventTable& events = trace.events();
  // The timeline draws each task once, at the start kernel_details gives it, under the same name.
  std::unordered_map<uint64_t, uint32_t> by_start;
  const auto key = [](int64_t ts, StringId name) {
    return static_cast<uint64_t>(ts) * 0x9E3779B97F4A7C15ull ^ name.value;
  };
  for (uint32_t e = 0; e < events.size(); ++e) {
    if (IsDeviceKind(events.kind[e]) && launchers[e] != kNoIndex)
      by_start.emplace(key(events.ts_ns[e], events.name[e]), e);
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto it = by_start.find(key(rows[r].start_ns, rows[r].name));
    if (it != by_start.end() && events.ts_ns[it->second] == rows[r].start_ns && events.name[it->second] == rows[r].name)
      out[r] = it->second;
  }
  return out;
}

std::vector<uint32_t> KernelDetailLaunchers(const Trace& trace, const std::vector<uint32_t>& launchers) {
  std::vector<uint32_t> out = KernelDetailTasks(trace, launchers);
  for (uint32_t& e : out) {
    if (e != kNoIndex) e = launchers[e];
  }
  return out;
}

std::string TopCallSites(CallSites* sites, std::span<const uint32_t> events, size_t listed) {
  std::map<std::string, size_t> counts;
  for (const uint32_t e : events) {
    if (e == kNoIndex) continue;
    const std::string& where = sites->Of(e);
    if (!where.empty()) ++counts[where];
  }
  std::vector<std::pair<std::string, size_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < listed; ++i)
    text += fmt::format("{}{} x{}", i ? "; " : "", sorted[i].first, sorted[i].second);
  return text;
}

std::string DetailGroupCallSites(const Trace& trace, const HostOpTree& tree, std::span<const NamedDetailRows> groups,
                                 size_t listed) {
  const std::vector<uint32_t> launched_by = KernelDetailLaunchers(trace, DeviceLaunchers(trace));
  CallSites sites(trace, tree);
  std::string text;
  for (size_t i = 0, named = 0; i < groups.size() && named < listed; ++i) {
    std::vector<uint32_t> ops;
    for (const uint32_t row : groups[i].rows) ops.push_back(launched_by[row]);
    const std::string where = TopCallSites(&sites, ops);
    if (where.empty()) continue;
    text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", groups[i].name, where);
    ++named;
  }
  return text;
}

}  // namespace tuneprof

// fusion.optimizer_foreach: the optimizer updates parameters one at a time (per-parameter aten ops
// inside `Optimizer.step#...`, no _foreach_/_fused_ op). Every parameter then pays each op's fixed
// cost. Gain: for each op name with k calls per step, (k - 1) x its shortest call (the shortest call is
// almost all fixed cost; a multi-tensor op pays it once); op time is device time launched, or on
// CPU-only traces the op's own duration.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/op_sequences.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

struct OpCalls {
  uint64_t count = 0;
  int64_t shortest_ns = INT64_MAX;
  int64_t total_ns = 0;
};

bool IsOptimizerStep(std::string_view name) { return name.starts_with("Optimizer.step#"); }

// The nearest range at or above `at` that is not a Python frame; frames deeper than this are not walked.
constexpr int kMaxPythonFrames = 64;
uint32_t OutsidePythonFrames(const HostOpTree& tree, const EventTable& events, uint32_t at) {
  for (int depth = 0; at != kNoIndex && events.kind[at] == EventKind::kPythonFunction; ++depth) {
    if (depth == kMaxPythonFrames) return kNoIndex;
    at = tree.parent[at];
  }
  return at;
}

// The outermost aten ops the optimizer's steps run, per op name, and the step ranges themselves.
struct OptimizerOps {
  std::map<std::string_view, OpCalls> calls;
  uint64_t steps = 0;
  bool multi_tensor = false;  // a _foreach_ / _fused_ kernel: already multi-tensor
  std::string optimizer;      // the last step's range name
  uint32_t optimizer_event = kNoIndex;
};

OptimizerOps CollectOptimizerOps(const RankEvidence& rank) {
  const Trace& trace = *rank.trace;
  const EventTable& events = trace.events();
  const std::vector<int64_t>& device_time =
      rank.op_sequences.DeviceTime(trace, rank.tree, rank.split.cpu_only, &rank.device_work);
  OptimizerOps ops;
  for (uint32_t i = 0; i < events.size(); ++i) {
    const std::string_view name = trace.str(events.name[i]);
    const uint32_t parent = rank.tree.parent[i];
    if (IsOptimizerStep(name) && events.dur_ns[i] > 0 &&
        (parent == kNoIndex || !IsOptimizerStep(trace.str(events.name[parent])))) {
      ++ops.steps;
      ops.optimizer = std::string(name);
      ops.optimizer_event = i;
    }
    if (events.kind[i] != EventKind::kHostOp || rank.tree.parent_op[i] != kNoIndex || parent == kNoIndex) continue;
    // Outermost aten ops directly under the optimizer's range, or under its Python frames (with_stack).
    const uint32_t owner = OutsidePythonFrames(rank.tree, events, parent);
    if (owner == kNoIndex || !IsOptimizerStep(trace.str(events.name[owner])) || !name.starts_with("aten::")) continue;
    if (name.find("_foreach_") != std::string_view::npos || name.find("_fused_") != std::string_view::npos)
      ops.multi_tensor = true;
    OpCalls& c = ops.calls[name];
    const int64_t time = rank.split.cpu_only ? events.dur_ns[i] : device_time[i];
    ++c.count;
    c.total_ns += time;
    c.shortest_ns = std::min(c.shortest_ns, time);
  }
  return ops;
}

}  // namespace

void RuleOptimizerLoop(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  const OptimizerOps found = CollectOptimizerOps(rank);
  const auto& [calls, steps, multi_tensor, optimizer, optimizer_event] = found;
  if (multi_tensor || steps == 0 || calls.empty()) return;
  if (PlatformOf(rank) == Platform::kNpu &&
      ApiReplacementReportsOptimizer(std::string_view(optimizer).substr(optimizer.find('#') + 1)))
    return;
  double saved = 0, time = 0;
  uint64_t ops = 0;
  for (const auto& [name, c] : calls) {
    ops += c.count;
    time += static_cast<double>(c.total_ns);
    const double per_step_calls = static_cast<double>(c.count) / static_cast<double>(steps);
    if (per_step_calls > 1)
      saved += (per_step_calls - 1) * static_cast<double>(c.shortest_ns) * static_cast<double>(steps);
  }
  const double ops_per_step = static_cast<double>(ops) / static_cast<double>(steps);
  if (ops_per_step < config.Get(threshold::kFusionMinOccurrences) || saved <= 0) return;
  Finding f = NewFinding("fusion.optimizer_foreach", rank, config);
  f.title = fmt::format("the optimizer runs {:.0f} per-parameter ops per step ({} per step)", ops_per_step,
                        FormatDuration(PerStep(rank, time)));
  f.value = ops_per_step;
  f.uncapped_gain_ns = saved / static_cast<double>(steps);
  f.AddText("optimizer", optimizer);
  CallSites sites(trace, rank.tree);
  if (const std::string& where = sites.Of(optimizer_event); !where.empty()) f.AddText("call_site", where);
  f.AddNumber("ops_per_step", ops_per_step, "count");
  f.AddNumber("distinct_ops", static_cast<double>(calls.size()), "count");
  f.AddNumber("optimizer_us_per_step", PerStep(rank, time) / 1e3, "us");
  out->push_back(std::move(f));
}

}  // namespace tuneprof

// fusion.api_replacement (NPU only): operator sequences and optimizer steps that a torch_npu or MindSpeed
// fused API replaces (api_replacements.h), each named at its call site: the innermost Python frame of
// the user's code around it (library frames skipped) and the nn.Module it runs in, where the trace
// has Python frames; else the operator names alone. Each replacement says whether the run's CANN and
// torch_npu reach the versions the API needs, or that the run does not record them.
// Gain per step: a sequence costs about its longest member once fused (sum - max of each occurrence);
// a per-parameter optimizer step pays each op's fixed cost once per call, so per op name with k calls
// per step (k - 1) x its shortest call (a step already on _foreach_ / _fused_ kernels: not measured, 0);
// a single-operator replacement (fast_gelu) is not measured and counts 0.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <unordered_map>
#include <vector>

#include "analysis/advisor/api_replacements.h"
#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/core/device_work.h"

namespace tuneprof {
namespace {

constexpr std::string_view kOptimizerStep = "Optimizer.step#";
constexpr size_t kListedSites = 5;
// Device time launched by each host event and its descendants. torch_npu launches from a task-queue
// thread, so an operator's work is found through its `async_npu` flow (framework operator -> device
// task) on the text export; other work through its launch call's correlation, followed back through
// the task queue on the Db export. Each device event counts once, for the flow's operator where there
// is one.
std::vector<int64_t> InclusiveDeviceTime(const RankEvidence& rank) {
  const Trace& trace = *rank.trace;
  const HostOpTree& tree = rank.tree;
  const EventTable& events = trace.events();
  const std::vector<uint32_t> launcher = DeviceLaunchers(trace);
  std::vector<int64_t> time(events.size(), 0);
  for (const DeviceWorkEvent& work : rank.device_work.List(trace)) {
    if (work.work == WorkClass::kOther || launcher[work.event] == kNoIndex) continue;
    time[launcher[work.event]] += std::max<int64_t>(events.dur_ns[work.event], 0);
  }
  // Parents come before their children in each track's order: walking it backwards sums each subtree.
  for (const std::vector<uint32_t>& track : tree.by_track) {
    for (auto it = track.rbegin(); it != track.rend(); ++it) {
      if (tree.parent[*it] != kNoIndex) time[tree.parent[*it]] += time[*it];
    }
  }
  return time;
}

struct SiteTotals {
  uint64_t count = 0;
  int64_t time_ns = 0;
  double saved_ns = 0;
  std::vector<uint32_t> events;  // the operators replaced, for the modules that hold them
};

using SiteKey = std::pair<size_t, std::string>;  // table row, call site

// An op name as the table spells it: without `aten::` and without the in-place underscore; "" for
// operators outside aten.
std::string_view TableName(std::string_view name) {
  if (!name.starts_with("aten::")) return {};
  name.remove_prefix(6);
  if (name.size() > 1 && name.back() == '_') name.remove_suffix(1);
  return name;
}

bool NameIn(std::string_view name, std::string_view alternatives) {
  while (!alternatives.empty()) {
    const size_t bar = alternatives.find('|');
    if (alternatives.substr(0, bar) == name) return true;
    if (bar == std::string_view::npos) break;
    alternatives.remove_prefix(bar + 1);
  }
  return false;
}

// The end of a match of `steps` starting at `at`, or 0 when none (every match holds one op at least).
size_t MatchAt(std::span<const ReplacementStep> steps, const std::vector<std::string_view>& names, size_t at) {
  if (steps.empty()) return at;
  const ReplacementStep& step = steps.front();
  size_t taken = 0;
  while (taken < step.max && at + taken < names.size() && NameIn(names[at + taken], step.names)) ++taken;
  for (size_t n = taken + 1; n-- > step.min;) {  // longest first, then shorter
    if (const size_t end = MatchAt(steps.subspan(1), names, at + n); end != 0) return end;
  }
  return 0;
}

const ApiReplacement* OptimizerRow(std::string_view optimizer, size_t* row) {
  const std::span<const ApiReplacement> table = ApiReplacementTable();
  for (size_t r = 0; r < table.size(); ++r) {
    if (table[r].match == ReplacementMatch::kOptimizerStep && table[r].pattern == optimizer) {
      *row = r;
      return &table[r];
    }
  }
  return nullptr;
}

// Optimizer steps: the step's device time and, per op name directly inside it, (k - 1) x the shortest.
void MatchOptimizerSteps(const RankEvidence& rank, const std::vector<int64_t>& device_time, CallSites* sites,
                         std::map<SiteKey, SiteTotals>* totals) {
  const Trace& trace = *rank.trace;
  const EventTable& events = trace.events();
  struct Calls {
    uint64_t count = 0;
    int64_t shortest_ns = INT64_MAX;
  };
  std::unordered_map<uint32_t, std::map<std::string_view, Calls>> calls_by_step;
  const auto is_step = [&](uint32_t e) {
    return e != kNoIndex && trace.str(events.name[e]).starts_with(kOptimizerStep);
  };
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kHostOp) continue;
    // The step's own operators, with the optimizer's Python frames (with_stack) between them or not.
    const uint32_t parent = is_step(rank.tree.parent_op[i]) ? rank.tree.parent_op[i] : rank.tree.parent[i];
    if (!is_step(parent)) continue;
    Calls& c = calls_by_step[parent][trace.str(events.name[i])];
    ++c.count;
    c.shortest_ns = std::min(c.shortest_ns, device_time[i]);
  }
  for (uint32_t i = 0; i < events.size(); ++i) {
    const std::string_view name = trace.str(events.name[i]);
    const uint32_t parent = rank.tree.parent[i];
    if (!name.starts_with(kOptimizerStep) || events.dur_ns[i] <= 0) continue;
    if (parent != kNoIndex && trace.str(events.name[parent]).starts_with(kOptimizerStep)) continue;
    size_t row = 0;
    if (!OptimizerRow(name.substr(kOptimizerStep.size()), &row)) continue;
    SiteTotals& t = (*totals)[{row, sites->Of(i)}];
    ++t.count;
    t.time_ns += device_time[i];
    t.events.push_back(i);
    const auto& calls = calls_by_step[i];
    // Multi-tensor kernels already pay each op's fixed cost once; what the fused optimizer saves beyond
    // them (one flattened buffer) is not measured here.
    if (std::any_of(calls.begin(), calls.end(), [](const auto& call) {
          return call.first.find("_foreach_") != std::string_view::npos ||
                 call.first.find("_fused_") != std::string_view::npos;
        }))
      continue;
    for (const auto& [op, c] : calls) {
      if (c.count > 1) t.saved_ns += static_cast<double>(c.count - 1) * static_cast<double>(c.shortest_ns);
    }
  }
}

constexpr size_t kMaxOpDepth = 64;  // aten ops nested deeper than this are not taken as the model's calls

// Whether an aten op is one the model's code called: no aten op encloses it. torch_npu writes its
// ProfilerStep and Optimizer.step ranges as operators too, so the nearest enclosing operator is not enough.
bool CalledByTheModel(const Trace& trace, const HostOpTree& tree, uint32_t op) {
  const EventTable& events = trace.events();
  uint32_t at = tree.parent_op[op];
  for (size_t depth = 0; at != kNoIndex; ++depth, at = tree.parent_op[at]) {
    if (depth == kMaxOpDepth || trace.str(events.name[at]).starts_with("aten::")) return false;
  }
  return true;
}

// Per host thread, the aten operators the model called, in program order, views included (a fused API
// such as npu_confusion_transpose replaces the view ops around a copy too).
std::vector<std::vector<uint32_t>> OutermostAtenOps(const Trace& trace, const HostOpTree& tree) {
  const EventTable& events = trace.events();
  std::vector<std::vector<uint32_t>> threads;
  for (const std::vector<uint32_t>& track : tree.by_track) {
    std::vector<uint32_t> ops;
    for (const uint32_t e : track) {
      if (events.kind[e] == EventKind::kHostOp && trace.str(events.name[e]).starts_with("aten::") &&
          CalledByTheModel(trace, tree, e))
        ops.push_back(e);
    }
    if (!ops.empty()) threads.push_back(std::move(ops));
  }
  return threads;
}

void MatchSequences(const RankEvidence& rank, const std::vector<int64_t>& device_time, CallSites* sites,
                    std::map<SiteKey, SiteTotals>* totals) {
  const Trace& trace = *rank.trace;
  const std::span<const ApiReplacement> table = ApiReplacementTable();
  for (const std::vector<uint32_t>& ops : OutermostAtenOps(trace, rank.tree)) {
    std::vector<std::string_view> names;
    names.reserve(ops.size());
    for (const uint32_t e : ops) names.push_back(TableName(trace.str(trace.events().name[e])));
    for (size_t at = 0; at < names.size();) {
      size_t end = 0, row = 0;
      for (; row < table.size() && end == 0; ++row) {
        if (table[row].match == ReplacementMatch::kOpSequence && !table[row].steps.empty())
          end = MatchAt(table[row].steps, names, at);
      }
      if (end == 0) {
        ++at;
        continue;
      }
      int64_t sum = 0, longest = 0;
      for (size_t k = at; k < end; ++k) {
        sum += device_time[ops[k]];
        longest = std::max(longest, device_time[ops[k]]);
      }
      SiteTotals& t = (*totals)[{row - 1, sites->Of(ops[at])}];
      ++t.count;
      t.time_ns += sum;
      t.events.insert(t.events.end(), ops.begin() + static_cast<std::ptrdiff_t>(at),
                      ops.begin() + static_cast<std::ptrdiff_t>(end));
      t.saved_ns += static_cast<double>(sum - longest);
      at = end;
    }
  }
}

struct Site {
  size_t row = 0;
  std::string where;
  SiteTotals totals;
};

std::string Describe(const RankEvidence& rank, const Site& site, const RunVersions& run) {
  const ApiReplacement& row = ApiReplacementTable()[site.row];
  bool reached = false;
  const std::string state = VersionState(row, run, &reached);
  const std::string gain = site.totals.saved_ns > 0
                               ? fmt::format("saves {}", FormatDuration(PerStep(rank, site.totals.saved_ns)))
                               : std::string("gain not measured");
  return fmt::format("{} for {} at {}: {:.3g} per step, {} per step, {} ({})", row.api, row.pattern,
                     site.where.empty() ? "(no Python frames)" : site.where,
                     PerStep(rank, static_cast<double>(site.totals.count)),
                     FormatDuration(PerStep(rank, static_cast<double>(site.totals.time_ns))), gain, state);
}

// Optimizer steps always (msprof-analyze suggests the fused optimizer for any step); a sequence row
// when it occurs at least `min_count` times over all its call sites. By gain, then time.
std::vector<Site> KeptSites(const std::map<SiteKey, SiteTotals>& totals, double min_count) {
  std::map<size_t, uint64_t> per_row;
  for (const auto& [key, t] : totals) per_row[key.first] += t.count;
  std::vector<Site> kept;
  for (const auto& [key, t] : totals) {
    const bool optimizer = ApiReplacementTable()[key.first].match == ReplacementMatch::kOptimizerStep;
    if (optimizer || static_cast<double>(per_row[key.first]) >= min_count) kept.push_back({key.first, key.second, t});
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Site& a, const Site& b) {
    return a.totals.saved_ns != b.totals.saved_ns ? a.totals.saved_ns > b.totals.saved_ns
                                                  : a.totals.time_ns > b.totals.time_ns;
  });
  return kept;
}

// Each API once, plainly where the run reaches its versions or does not record them, else led by
// what it needs.
std::vector<SharedText> Apis(const std::vector<Site>& kept, const RunVersions& run) {
  std::vector<SharedText> apis;
  std::vector<std::string_view> seen;
  for (const Site& s : kept) {
    const ApiReplacement& row = ApiReplacementTable()[s.row];
    if (std::find(seen.begin(), seen.end(), row.api) != seen.end()) continue;
    seen.push_back(row.api);
    bool reached = false;
    const std::string state = VersionState(row, run, &reached);
    apis.emplace_back(reached ? fmt::format("{} ({})", row.api, state) : fmt::format("{}: {}", state, row.api));
  }
  return apis;
}

Finding Report(const RankEvidence& rank, const AdvisorConfig& config, const std::vector<Site>& kept) {
  const RunVersions run = ReadRunVersions(rank.trace->metadata());
  double saved = 0, time = 0;
  for (const Site& s : kept) saved += s.totals.saved_ns, time += static_cast<double>(s.totals.time_ns);
  const Site& top = kept.front();
  const ApiReplacement& top_row = ApiReplacementTable()[top.row];
  Finding f = NewFinding("fusion.api_replacement", rank, config);
  f.title = fmt::format("{} can replace {} at {} ({} per step){}", top_row.api, top_row.pattern,
                        top.where.empty() ? "its call sites" : top.where,
                        FormatDuration(PerStep(rank, static_cast<double>(top.totals.time_ns))),
                        kept.size() > 1 ? fmt::format("; {} more call sites", kept.size() - 1) : "");
  f.value = static_cast<double>(kept.size());
  f.uncapped_gain_ns = PerStep(rank, saved);
  f.AddNumber("call_sites", static_cast<double>(kept.size()), "count");
  f.AddNumber("replaced_us_per_step", PerStep(rank, time) / 1e3, "us");
  f.AddText("cann_version", run.cann.empty() ? "unknown (not recorded by the run)" : run.cann);
  f.AddText("torch_npu_version", run.torch_npu.empty() ? "unknown (not recorded by the run)" : run.torch_npu);
  std::string listed;
  for (size_t i = 0; i < kept.size() && i < kListedSites; ++i) listed += (i ? "; " : "") + Describe(rank, kept[i], run);
  if (kept.size() > kListedSites) listed += fmt::format("; and {} more", kept.size() - kListedSites);
  f.AddText("replacements", listed);
  f.apis = Apis(kept, run);
  std::vector<uint32_t> replaced;
  for (const Site& s : kept) replaced.insert(replaced.end(), s.totals.events.begin(), s.totals.events.end());
  SayModules(rank, replaced, &f);
  return f;
}

}  // namespace

const ApiReplacement* FusedApiFor(const std::vector<std::string_view>& names) {
  const std::span<const ApiReplacement> table = ApiReplacementTable();
  for (const ApiReplacement& row : table) {
    if (row.match == ReplacementMatch::kOpSequence && !row.steps.empty() &&
        MatchAt(row.steps, names, 0) == names.size())
      return &row;
  }
  return nullptr;
}

bool ApiReplacementReportsOptimizer(std::string_view optimizer) {
  size_t row = 0;
  return OptimizerRow(optimizer, &row) != nullptr;
}

void RuleApiReplacement(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (PlatformOf(rank) != Platform::kNpu || rank.trace == nullptr) return;
  const std::vector<int64_t> device_time = InclusiveDeviceTime(rank);
  CallSites call_sites(*rank.trace, rank.tree);
  std::map<SiteKey, SiteTotals> totals;
  MatchOptimizerSteps(rank, device_time, &call_sites, &totals);
  MatchSequences(rank, device_time, &call_sites, &totals);
  const std::vector<Site> kept = KeptSites(totals, config.Get(threshold::kFusionMinOccurrences));
  if (!kept.empty()) out->push_back(Report(rank, config, kept));
}

}  // namespace tuneprof

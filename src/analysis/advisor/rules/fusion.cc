// fusion.*: fusible operator sequences (fusion_patterns.h) that occur at least 5 times and take at least
// 1 % of the work time (msprof-analyze's Fusible Operator check), at the host-operator level (aten ops,
// timed by the device time they launch) and at the kernel level (each stream's kernels). One finding
// per pattern; where both levels see it, the level with the larger gain is kept (advisor.cc merges by
// id). Gain: fusion_patterns.h's per-match estimate, summed, per step. On NPU a chain of element-wise
// operators inside the step of an optimizer the API-replacement table covers (its _foreach_ kernels) is
// fusion.api_replacement's: the fused optimizer replaces it, and compiling the model does not reach
// optimizer.step, so fusion.elementwise_chain leaves it out.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <vector>

#include "analysis/advisor/api_replacements.h"
#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/fusion_patterns.h"
#include "analysis/advisor/op_sequences.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

struct PatternTotals {
  uint64_t count = 0;
  int64_t time_ns = 0;
  int64_t saved_ns = 0;
  const PatternMatch* example = nullptr;
  std::vector<const PatternMatch*> matches;  // every occurrence counted, for the modules that hold them
};

// Kernel names with their template arguments run to thousands of characters: each is cut in the middle
// (the start names the kernel, the end holds the arguments that tell instances apart), and so is the
// whole chain, so one example stays one readable line; the full names are in the trace.
constexpr size_t kExampleNameChars = 160;
constexpr size_t kExampleChars = 640;

std::string MiddleCut(std::string_view text, size_t width) {
  if (text.size() <= width) return std::string(text);
  const size_t tail = width / 3, head = width - tail - 3;
  return std::string(text.substr(0, head)) + "..." + std::string(text.substr(text.size() - tail));
}

std::string ExampleNames(const Trace& trace, const OpSequence& sequence, const PatternMatch& match) {
  std::string names;
  for (size_t i = match.begin; i < match.end; ++i) {
    names += (names.empty() ? "" : " -> ") +
             MiddleCut(trace.str(trace.events().name[sequence.events[i]]), kExampleNameChars);
  }
  return MiddleCut(names, kExampleChars);
}

// On NPU, the fused API's versions (api_replacements.h) against the run's: this finding is that API's
// one finding per call site.
void SayVersions(const RankEvidence& rank, std::string_view pattern_id, Finding* f) {
  const ApiReplacement* row = PlatformOf(rank) == Platform::kNpu ? RowReportedBy(pattern_id) : nullptr;
  if (row == nullptr) return;
  bool reached = false;
  f->AddText("api_versions", VersionState(*row, ReadRunVersions(rank.trace->metadata()), &reached));
}

// The user's source line of the example occurrence, where the trace has Python frames: host-level
// matches from their first operator, kernel-level ones from the operator that launched their first kernel.
void SayCallSite(const RankEvidence& rank, const OpSequence& sequence, const PatternMatch& example, Finding* f) {
  const Trace& trace = *rank.trace;
  uint32_t op = sequence.events[example.begin];
  if (sequence.level == SequenceLevel::kKernels) {
    const auto& links = trace.links();
    const auto it = std::find_if(links.begin(), links.end(), [&](const Link& link) {
      return link.kind == LinkKind::kCorrelation && link.to == op;
    });
    if (it == links.end()) return;
    op = it->from;
  }
  CallSites sites(trace, rank.tree);
  const std::string& where = sites.Of(op);
  if (!where.empty()) f->AddText("call_site", where);
}

// The operators or kernels of every occurrence counted.
std::vector<uint32_t> MatchedEvents(const std::vector<OpSequence>& sequences, const PatternTotals& totals) {
  std::vector<uint32_t> events;
  for (const PatternMatch* match : totals.matches) {
    const OpSequence& sequence = sequences[match->sequence];
    events.insert(events.end(), sequence.events.begin() + static_cast<std::ptrdiff_t>(match->begin),
                  sequence.events.begin() + static_cast<std::ptrdiff_t>(match->end));
  }
  return events;
}

double WorkTimeNs(const RankEvidence& rank) { return rank.split.step_ns * static_cast<double>(rank.split.steps); }

void Report(const RankEvidence& rank, const AdvisorConfig& config, const std::vector<OpSequence>& sequences,
            size_t pattern, const PatternTotals& totals, std::vector<Finding>* out) {
  const bool generic = pattern == FusionLibrary().size();
  const PatternMatch& example = *totals.example;
  const OpSequence& sequence = sequences[example.sequence];
  Finding f = NewFinding(generic ? kElementwiseChainId : FusionLibrary()[pattern].id, rank, config);
  const std::string shape = generic ? "runs of 3+ element-wise operators" : std::string(FusionLibrary()[pattern].shape);
  f.title = fmt::format("{} unfused {} ({} per step)", totals.count, shape,
                        FormatDuration(PerStep(rank, static_cast<double>(totals.time_ns))));
  f.value = static_cast<double>(totals.count);
  f.uncapped_gain_ns = PerStep(rank, static_cast<double>(totals.saved_ns));
  f.AddNumber("occurrences", static_cast<double>(totals.count), "count");
  f.AddNumber("pattern_us", static_cast<double>(totals.time_ns) / 1e3, "us");
  f.AddNumber("pattern_pct_of_work", 100 * static_cast<double>(totals.time_ns) / WorkTimeNs(rank), "%");
  f.AddText("level", sequence.level == SequenceLevel::kHostOps ? "host operators" : "kernels");
  f.AddText("example", ExampleNames(*rank.trace, sequence, example));
  if (!generic) SayVersions(rank, FusionLibrary()[pattern].id, &f);
  SayCallSite(rank, sequence, example, &f);
  SayModules(rank, MatchedEvents(sequences, totals), &f);
  out->push_back(std::move(f));
}

// Kernels a CUDA graph replayed were captured from code the run already compiles or captures (graph
// capture, torch.compile): a chain among them is what that compiler left, not a missing compiler.
bool ReplayedByGraph(const RankEvidence& rank, const OpSequence& sequence, const PatternMatch& match) {
  if (!rank.compute->graphs.any() || sequence.level != SequenceLevel::kKernels) return false;
  for (size_t i = match.begin; i < match.end; ++i) {
    if (rank.compute->graphs.replayed[sequence.events[i]]) return true;
  }
  return false;
}

constexpr std::string_view kFusionOptimizerStepPrefix = "Optimizer.step#";

// Per event: inside the step of an optimizer fusion.api_replacement reports (host operators below the
// step's range, kernels launched from them). Empty off NPU or without such a step.
std::vector<bool> InsideReplacedOptimizerStep(const RankEvidence& rank) {
  const Trace& trace = *rank.trace;
  const EventTable& events = trace.events();
  std::vector<bool> inside;
  if (PlatformOf(rank) != Platform::kNpu) return inside;
  std::vector<uint32_t> steps;
  for (uint32_t e = 0; e < events.size(); ++e) {
    const std::string_view name = trace.str(events.name[e]);
    if (name.starts_with(kFusionOptimizerStepPrefix) &&
        ApiReplacementReportsOptimizer(name.substr(kFusionOptimizerStepPrefix.size())))
      steps.push_back(e);
  }
  if (steps.empty()) return inside;
  inside.assign(events.size(), false);
  // Each track's ranges are sorted parents first: a range inside a step is marked after the step itself.
  for (const uint32_t step : steps) inside[step] = true;
  for (const std::vector<uint32_t>& track : rank.tree.by_track) {
    for (const uint32_t e : track) {
      const uint32_t parent = rank.tree.parent[e];
      if (parent != kNoIndex && inside[parent]) inside[e] = true;
    }
  }
  // Device work counts for the host event that launched it (through torch_npu's task queue too).
  const std::vector<uint32_t> launchers = DeviceLaunchers(trace);
  for (uint32_t e = 0; e < launchers.size() && e < inside.size(); ++e) {
    if (launchers[e] != kNoIndex && launchers[e] < inside.size() && inside[launchers[e]]) inside[e] = true;
  }
  return inside;
}

bool ChainInReplacedOptimizerStep(const std::vector<bool>& inside, const OpSequence& sequence,
                                  const PatternMatch& match) {
  return !inside.empty() && inside[sequence.events[match.begin]];
}

}  // namespace

void RuleFusionPatterns(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const std::vector<OpSequence>& sequences =
      rank.op_sequences.Sequences(*rank.trace, rank.tree, rank.split.cpu_only, &rank.device_work);
  const std::vector<PatternMatch> matches = MatchFusionPatterns(sequences, RunsBackward(*rank.trace));
  // Per pattern and level: host-level and kernel-level matches of one pattern are separate candidates.
  std::map<std::pair<size_t, SequenceLevel>, PatternTotals> totals;
  const std::vector<bool> in_optimizer = InsideReplacedOptimizerStep(rank);
  for (const PatternMatch& match : matches) {
    if (ReplayedByGraph(rank, sequences[match.sequence], match)) continue;
    if (match.pattern == FusionLibrary().size() &&
        ChainInReplacedOptimizerStep(in_optimizer, sequences[match.sequence], match))
      continue;
    PatternTotals& t = totals[{match.pattern, sequences[match.sequence].level}];
    ++t.count;
    t.time_ns += match.time_ns;
    t.saved_ns += match.saved_ns;
    if (!t.example || match.time_ns > t.example->time_ns) t.example = &match;
    t.matches.push_back(&match);
  }
  const double min_count = config.Get(threshold::kFusionMinOccurrences);
  const double min_time = config.Get(threshold::kFusionMinTimePct) / 100 * WorkTimeNs(rank);
  std::map<size_t, const PatternTotals*> best;  // per pattern, the level that saves more
  for (const auto& [key, t] : totals) {
    if (static_cast<double>(t.count) < min_count || static_cast<double>(t.time_ns) < min_time || t.saved_ns <= 0)
      continue;
    const PatternTotals*& kept = best[key.first];
    if (!kept || t.saved_ns > kept->saved_ns) kept = &t;
  }
  for (const auto& [pattern, t] : best) Report(rank, config, sequences, pattern, *t, out);
}

}  // namespace tuneprof

#include <fmt/format.h>

#include <cstdio>

#include "analysis/compare/advice_check.h"
#include "analysis/compare/compare.h"
#include "analysis/core/hardware_profile.h"
#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/json_output.h"
#include "pipeline/diagnostics.h"
#include "pipeline/hardware_options.h"
#include "pipeline/run_analyses.h"
#include "report/console/compare_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

namespace {

// The advisor's view of a side comes from the analyses `analyze` runs (run_analyses.h), so that compare
// and analyze never disagree on a utilization or a verdict.
CompareSide SideOf(const AnalyzedRun& run, std::span<const size_t> selected) {
  CompareSide side = BuildCompareSide(run.traces, run.breakdowns, selected);
  side.verdict = SummarizeVerdict(run.advice, run.compute, selected);
  return side;
}

AdviceSide AdviceSideOf(const AnalyzedRun& run, std::span<const size_t> selected) {
  const Trace* first =
      selected.empty() || selected.front() >= run.traces.size() ? nullptr : &run.traces[selected.front()];
  return AdviceSide{first, &run.advice};
}

// The chips and kinds of device of the compared ranks only, so that a rank left out cannot make the sides
// look different.
SideHardware HardwareOf(const AnalyzedRun& run, std::span<const size_t> selected) {
  SideHardware side;
  for (size_t index : selected) {
    if (index < run.traces.size()) side.platforms.push_back(TracePlatform(run.traces[index]));
  }
  if (run.hardware.size() != run.traces.size()) {
    side.chips = run.hardware;
    return side;
  }
  for (size_t index : selected) side.chips.push_back(run.hardware[index]);
  return side;
}

Result<std::vector<PredictedFinding>> LoadAdvice(const std::string& path) {
  TP_ASSIGN_OR_RETURN(std::string text, ReadFlagFile(path, "--advice"));
  return ParseAdviceJson(text, path);
}

std::string Render(const CompareOptions& options, const CompareResult& result, std::span<const GateOutcome> gates,
                   std::span<const AdviceCheck> advice, const std::vector<std::string>& warnings) {
  if (options.json || options.format == "json") {
    return WithWarnings(RenderCompareJson(result, gates, advice, !options.advice.empty()), warnings);
  }
  if (options.format == "md") return RenderCompareMarkdown(result, gates, advice);
  return RenderCompareText(result, gates, advice);
}

Result<std::vector<GateCondition>> GateConditions(const CompareOptions& options) {
  std::vector<GateCondition> conditions;
  std::vector<std::string> expressions = options.fail_if;
  if (options.fail_if_slower) expressions.push_back(fmt::format("step_time>+{}%", *options.fail_if_slower));
  for (const std::string& expression : expressions) {
    auto condition = ParseGateCondition(expression);
    if (!condition.ok()) return Status(StatusCode::kUsage, condition.status().message());
    conditions.push_back(std::move(condition.value()));
  }
  return conditions;
}

}  // namespace

Result<CompareResult> CompareRuns(const AnalyzedRun& before, const AnalyzedRun& after,
                                  const tuneprof::CompareOptions& compare, std::optional<int64_t> rank,
                                  std::vector<std::string>* warnings) {
  TP_ASSIGN_OR_RETURN(RankPopulation population, MatchRanks(before.traces, after.traces, rank));
  CompareResult result = CompareSides(SideOf(before, population.before), SideOf(after, population.after), compare);
  if (const std::string left_out = LeftOutRanksWarning(population); !left_out.empty()) {
    PrintWarning(left_out);
    warnings->push_back(left_out);
  }
  result.population = std::move(population);
  const std::string differ =
      HardwareDifference(HardwareOf(before, result.population.before), HardwareOf(after, result.population.after));
  if (!differ.empty()) {
    PrintWarning(differ);
    warnings->push_back(differ);
  }
  return result;
}

Result<CompareOutcome> CompareOutput(const AnalyzedRun& before, const AnalyzedRun& after,
                                     const CompareOptions& options) {
  TP_ASSIGN_OR_RETURN(std::vector<GateCondition> conditions, GateConditions(options));
  std::vector<PredictedFinding> predicted;
  if (!options.advice.empty()) {
    TP_ASSIGN_OR_RETURN(predicted, LoadAdvice(options.advice));
  }
  tuneprof::CompareOptions compare;
  compare.tokens_per_step = options.tokens_per_step;
  compare.samples_per_step = options.samples_per_step;
  compare.alpha = options.alpha;
  std::vector<std::string> warnings = before.warnings;
  warnings.insert(warnings.end(), after.warnings.begin(), after.warnings.end());
  TP_ASSIGN_OR_RETURN(CompareResult result, CompareRuns(before, after, compare, options.rank, &warnings));
  std::vector<AdviceCheck> advice;
  if (!options.advice.empty()) {
    advice = CheckAdvice(predicted, AdviceSideOf(before, result.population.before),
                         AdviceSideOf(after, result.population.after));
  }

  CompareOutcome outcome;
  for (const GateCondition& condition : conditions) outcome.gates.push_back(EvaluateGate(result, condition));
  outcome.text = Render(options, result, outcome.gates, advice, warnings);
  return outcome;
}

int RunCompare(const CompareOptions& options) {
  // Flags are checked before the (long) imports.
  if (auto conditions = GateConditions(options); !conditions.ok()) return ReportError(conditions.status());
  if (!options.advice.empty()) {
    if (auto loaded = LoadAdvice(options.advice); !loaded.ok()) return ReportError(loaded.status());
  }
  if (Status refused = RefuseSummaries({options.before, options.after}, "compare"); !refused.ok()) {
    return ReportError(refused);
  }
  auto before = AnalyzeRun({options.before}, AnalysisFlags());
  if (!before.ok()) return ReportError(before.status());
  auto after = AnalyzeRun({options.after}, AnalysisFlags());
  if (!after.ok()) return ReportError(after.status());
  auto outcome = CompareOutput(*before, *after, options);
  if (!outcome.ok()) return ReportError(outcome.status());
  PrintOutput(outcome->text);

  int exit_code = kExitOk;
  for (const GateOutcome& gate : outcome->gates) {
    if (!gate.evaluated) {
      PrintWarning(fmt::format("--fail-if {}: {} is unknown for these traces; not evaluated", gate.condition.text,
                               gate.metric_key.empty() ? gate.condition.metric : gate.metric_key));
    } else if (gate.fired) {
      fmt::print(stderr, "tuneprof: gate failed: {} ({} {:+.2f}%, significant)\n", gate.condition.text, gate.metric_key,
                 *gate.delta_pct);
      exit_code = kExitGateFailed;
    }
  }
  return exit_code;
}

}  // namespace tuneprof::cli

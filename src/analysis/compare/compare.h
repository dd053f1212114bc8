#pragma once
// Before vs after: did an optimization help? Each side is one or more traces (ranks) of the same
// workload. Per side the existing analyses run (time_breakdown.h, generation_metrics.h, operator_diff.h)
// and give per-step samples; each metric is then compared with statistics.h, so that a change inside
// the run-to-run noise is reported as no significant change, never as a win.
//
// Samples: a step's time is its wall (time_breakdown.h; CPU-only traces measure host work instead),
// the slowest rank's when several ranks ran the step. A trace without ProfilerStep ranges is one sample
// (too few to test). Generation traces add TTFT (one sample per request) and TPOT (one per decode step).
// Peak memory is one exact reading per side (max total_allocated / total_reserved of the allocator's
// events over all ranks): any difference is real, so it counts as significant when the values differ.
// Operators are compared over all steps, per step, as the mean over the compared ranks of a rank's step
// (operator_diff.h), like the breakdown figures; so are operator categories, which match work across
// platforms when names differ.
// Population: every figure is over the same ranks, those both sides hold (matched by rank id,
// MatchRanks); ranks on one side only are left out and named in a warning. `--rank N` compares rank N
// alone. One trace a side is compared whatever the ranks they name (a rank 3 against a rank 1 of another
// job), and says nothing of a population.
// The advisor's view (advisor.h, as `analyze` runs it: pipeline/run_analyses.h) adds the three
// utilizations and MFU of the slowest rank, and the job's dominant bottleneck. They are one reading a
// side (no per-step samples), so their change is shown but not tested: never significant, never a gate.
// They are listed (unknown as unknown) when a side's verdict was filled (SideVerdict::analyzed).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/compare/operator_diff.h"
#include "analysis/compare/statistics.h"
#include "analysis/compute/compute_units.h"
#include "analysis/compute/generation_metrics.h"
#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

struct CompareOptions {
  std::optional<double> tokens_per_step;   // --tokens-per-step: throughput in tokens/s
  std::optional<double> samples_per_step;  // --samples-per-step: throughput in samples/s
  double alpha = kDefaultAlpha;
};

// Peak of the allocator's running totals, over every memory event of the traces; nullopt when no event
// carries the figure.
struct MemoryPeaks {
  std::optional<int64_t> allocated_bytes;
  std::optional<int64_t> reserved_bytes;
};
MemoryPeaks FindMemoryPeaks(std::span<const Trace> traces);

// Per-step samples of one breakdown figure, keyed by what it measures.
struct StepSeries {
  std::string key;             // "computing_us"
  std::vector<double> values;  // ns, one per step
};

// What the advisor concluded on a side (see above); unknown until SummarizeVerdict fills it.
struct SideVerdict {
  bool analyzed = false;
  std::optional<double> compute_units_pct;            // advisor.h CheckComputeUnits
  std::optional<double> memory_bandwidth_pct;         // CheckMemoryBandwidth
  std::optional<double> communication_bandwidth_pct;  // CheckCommunicationBandwidth
  // Where each utilization comes from (UtilizationCheck::source).
  std::string compute_units_source, memory_bandwidth_source, communication_bandwidth_source;
  std::optional<double> mfu;         // achieved / peak FLOP/s (op_flops.h), a fraction
  std::string dominant = "unknown";  // BottleneckName, or "unknown"
  std::optional<TimeSplit> split;    // the slowest rank's step split (time_split.h)
};

// What one side of a comparison ran on: the chip of each compared rank, and the kind of device each ran
// on (TracePlatform), which the trace's format tells even where no chip is named or inferred.
struct SideHardware {
  std::vector<HardwareSelection> chips;
  std::vector<DeviceType> platforms;
};

// "" when both runs ran on the same chips; else one warning line naming them: a change across hardware
// mixes the code's effect with the chip's, and peak-relative figures (MFU, utilizations) use different
// peaks. Where both sides name their chips, the names tell; where a side's chip is unknown, runs on
// different kinds of device (GPU, NPU, the CPU alone) still differ, and the line names the kinds.
std::string HardwareDifference(const SideHardware& before, const SideHardware& after);

// `compute` in the order of `advice.ranks` (the order of the inputs). `selected`: the indices of the ranks
// compared (all when empty); on a strict subset the dominant bottleneck is the slowest selected rank's own,
// since the job's speaks of ranks left out.
SideVerdict SummarizeVerdict(const AdvisorResult& advice, std::span<const RankComputeUnits> compute,
                             std::span<const size_t> selected = {});

// The ranks a comparison reads: indices into each side's traces, in the order of the inputs.
struct RankPopulation {
  std::vector<int64_t> ranks;  // the compared rank ids, ascending (a rank two files carry, twice)
  std::vector<size_t> before;  // the traces compared, by index into the before side's
  std::vector<size_t> after;
  std::vector<int64_t> only_before;  // left out: held by one side only
  std::vector<int64_t> only_after;
  std::optional<int64_t> requested;  // --rank
  // Named in the outputs: a side holds several ranks or one was requested. A pair of single traces is not.
  bool named = false;
};

// Matches the sides' traces by rank id (a rank id a side holds twice matches in the order of the inputs).
// `rank`: that rank only; a side without it is an error naming the side's path. Sides sharing no rank are
// an error naming both sides' ranks.
Result<RankPopulation> MatchRanks(std::span<const Trace> before, std::span<const Trace> after,
                                  std::optional<int64_t> rank);

// The warning naming the ranks left out; "" when none is.
std::string LeftOutRanksWarning(const RankPopulation& population);

// How the figures of a named population combine its ranks, in words: "mean over ranks", "one rank".
std::string_view PopulationAggregate(const RankPopulation& population);

// Which ranks every figure is over and how each kind of figure combines them, in words, for every rendering
// (text, Markdown, HTML); "" where a side has one rank and none was asked for.
std::string PopulationDescription(const RankPopulation& population);

struct CompareSide {
  std::vector<std::string> paths;
  size_t ranks = 0;
  WorkSource work_on = WorkSource::kDevice;
  bool has_steps = false;             // ProfilerStep ranges seen; without them step_ns is one window
  std::vector<double> step_ns;        // one per step number: the slowest rank's wall
  std::vector<StepSeries> breakdown;  // computing, communication exposed/hidden, memcpy, other, free
  MemoryPeaks memory;
  GenerationMetrics generation;  // of the first rank
  OperatorTotals ops;            // summed over the ranks (OperatorTotals::ranks)
  OperatorScope op_scope = OperatorScope::kDevice;
  CategoryTotals categories;  // summed over the ranks, in op_scope
  SideVerdict verdict;
};

// `breakdowns`: the traces' time breakdowns when already computed (else computed here). `selected`: the
// indices of the traces compared (RankPopulation), all when empty.
CompareSide BuildCompareSide(std::span<const Trace> traces, std::span<const RankBreakdown> breakdowns = {},
                             std::span<const size_t> selected = {});

// kNone: a figure without a direction (communication hidden under compute grows when communication
// grows or when more of it is hidden): it changes, but is neither better nor worse.
enum class Better : uint8_t { kLower, kHigher, kNone };

struct MetricComparison {
  std::string key;   // "step_time_us", "peak_allocated_bytes", ...
  std::string unit;  // "us", "bytes", "tokens/s", "samples/s"
  Better better = Better::kLower;
  std::optional<double> before;  // nullopt: unknown on that side
  std::optional<double> after;
  std::optional<double> delta;      // after - before
  std::optional<double> delta_pct;  // 100 * delta / before; nullopt when before is unknown or 0
  // How `significant` was decided: "sampled" (statistics.h), "exact" (one exact reading a side),
  // "too_few_samples", "not_tested", "not_comparable" (the sides measured it differently: an estimate
  // against a counter, copies against kernels), "unknown" (a side lacks the metric).
  std::string test;
  std::string sources;  // not_comparable: "operator_shapes vs copies"
  bool significant = false;
  std::optional<SampleComparison> samples;  // when test is "sampled" or "too_few_samples"
};

// The one judgement of a metric's change that every rendering shows, worded by MetricVerdictText.
enum class MetricVerdict : uint8_t {
  kUnknown,              // a side lacks the metric
  kNotTested,            // a figure compare reports without a test
  kNotComparable,        // the sides measured it differently
  kTooFewSamples,        // a side has too few samples to test
  kUnchanged,            // exact readings, equal
  kNoSignificantChange,  // inside the run-to-run noise
  kChanged,              // significant, for a metric without a better direction
  kBetter,
  kWorse,
};
MetricVerdict JudgeMetric(const MetricComparison& metric);

// The verdict in words with the test's detail: "better (p=0.003)", "worse (exact)",
// "sample too small (n=2/3)", "no significant change (small n)", ...
std::string MetricVerdictText(const MetricComparison& metric);

struct CompareResult {
  CompareSide before;
  CompareSide after;
  std::vector<MetricComparison> metrics;  // in a fixed order; metrics neither side has are left out
  OperatorDiff ops;
  std::vector<CategoryDelta> categories;  // each side in its own operator scope
  CompareOptions options;
  RankPopulation population;  // set by the caller that matched the ranks

  const MetricComparison* Find(std::string_view key) const;
};

CompareResult CompareSides(CompareSide before, CompareSide after, const CompareOptions& options);

// CI gate: `METRIC>+PCT%` or `METRIC<-PCT%`, e.g. "step_time>+3%", "peak_memory>+5%", "throughput<-2%".
// METRIC is a metric key or one of the short names step_time, throughput, ttft, tpot, peak_memory,
// peak_reserved. It fires when the relative change passes PCT in that direction and is significant.
struct GateCondition {
  std::string text;    // as given
  std::string metric;  // resolved short name or key
  bool above = true;   // '>' (fires when delta_pct > pct) or '<' (delta_pct < pct)
  double pct = 0;
};

// A METRIC that is neither a short name nor a metric key compare can produce is a usage error naming
// the valid ones: a typo must never turn the gate into a silent pass.
Result<GateCondition> ParseGateCondition(std::string_view text);

// Every name a gate accepts: the short names, then every metric key CompareSides can produce.
const std::vector<std::string_view>& GateMetricNames();

struct GateOutcome {
  GateCondition condition;
  std::string metric_key;  // the metric it resolved to; "" when the result has none
  std::optional<double> delta_pct;
  bool significant = false;
  bool fired = false;
  bool evaluated = false;  // false when the metric or its change is unknown
};

GateOutcome EvaluateGate(const CompareResult& result, const GateCondition& condition);

}  // namespace tuneprof

#include "analysis/compare/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace tuneprof {

namespace {

constexpr double kNsPerUs = 1000;

// One breakdown figure of a step, as the series' key names it.
struct BreakdownField {
  const char* key;
  int64_t StepBreakdown::*field;
  Better better = Better::kLower;
};

constexpr BreakdownField kBreakdownFields[] = {
    {"computing_us", &StepBreakdown::computing_ns},
    {"communication_exposed_us", &StepBreakdown::communication_not_overlapped_ns},
    {"communication_hidden_us", &StepBreakdown::overlapped_ns, Better::kNone},
    {"memcpy_us", &StepBreakdown::memcpy_ns},
    {"other_us", &StepBreakdown::other_ns},
    {"free_us", &StepBreakdown::free_ns},
    // Its own row, never inside communication_exposed_us: a pipeline stage's wait for its neighbours,
    // which only moving layers or the schedule changes.
    {"pipeline_bubble_us", &StepBreakdown::bubble_ns},
};

// Steps of all ranks grouped by step number (a trace without steps is one group keyed 0), each with the
// time its rank's definitions give it (StepTimeNs).
struct RankStep {
  const StepBreakdown* step;
  int64_t time_ns;
};

std::map<int64_t, std::vector<RankStep>> StepsByNumber(const std::vector<RankBreakdown>& ranks) {
  std::map<int64_t, std::vector<RankStep>> groups;
  for (const RankBreakdown& rank : ranks) {
    for (const StepBreakdown& step : rank.steps) {
      groups[step.step.value_or(0)].push_back(RankStep{&step, StepTimeNs(step, rank.definitions)});
    }
  }
  return groups;
}

void FillStepSeries(const std::vector<RankBreakdown>& ranks, CompareSide* side) {
  for (const BreakdownField& field : kBreakdownFields) side->breakdown.push_back({field.key, {}});
  for (const auto& [number, steps] : StepsByNumber(ranks)) {
    int64_t slowest = 0;
    for (const RankStep& step : steps) slowest = std::max(slowest, step.time_ns);
    side->step_ns.push_back(static_cast<double>(slowest));
    for (size_t f = 0; f < std::size(kBreakdownFields); ++f) {
      double sum = 0;
      for (const RankStep& step : steps) sum += static_cast<double>(step.step->*kBreakdownFields[f].field);
      side->breakdown[f].values.push_back(sum / static_cast<double>(steps.size()));
    }
  }
}

std::vector<double> ToUnit(const std::vector<double>& ns, double per_unit) {
  std::vector<double> values;
  values.reserve(ns.size());
  for (double v : ns) values.push_back(v / per_unit);
  return values;
}

MetricComparison NewMetric(std::string key, std::string unit, Better better = Better::kLower) {
  MetricComparison metric;
  metric.key = std::move(key);
  metric.unit = std::move(unit);
  metric.better = better;
  return metric;
}

void SetDelta(MetricComparison* metric) {
  if (!metric->before || !metric->after) return;
  metric->delta = *metric->after - *metric->before;
  if (*metric->before != 0) metric->delta_pct = 100 * *metric->delta / *metric->before;
}

MetricComparison Sampled(std::string key, std::string unit, const std::vector<double>& before,
                         const std::vector<double>& after, double alpha,
                         CenterStatistic center = CenterStatistic::kMean) {
  MetricComparison metric = NewMetric(std::move(key), std::move(unit));
  SampleComparison samples = CompareSamples(before, after, alpha);
  if (samples.before) metric.before = center == CenterStatistic::kMean ? samples.before->mean : samples.before->median;
  if (samples.after) metric.after = center == CenterStatistic::kMean ? samples.after->mean : samples.after->median;
  SetDelta(&metric);
  if (!metric.before || !metric.after) {
    metric.test = "unknown";
  } else if (samples.verdict == ChangeVerdict::kTooFewSamples) {
    metric.test = "too_few_samples";
  } else {
    metric.test = "sampled";
    if (center == CenterStatistic::kMean) {
      metric.significant = samples.verdict == ChangeVerdict::kIncrease || samples.verdict == ChangeVerdict::kDecrease;
    } else {  // the median's own interval, with the same rank test
      const ConfidenceInterval& ci = *samples.median_change;
      metric.significant = (ci.low > 0 || ci.high < 0) && samples.rank_test->p_value < alpha;
    }
  }
  metric.samples = std::move(samples);
  return metric;
}

// A figure that follows from another's samples (throughput from step time): significant when that is.
MetricComparison Derived(std::string key, std::string unit, Better better, std::optional<double> before,
                         std::optional<double> after, const MetricComparison& source) {
  MetricComparison metric = NewMetric(std::move(key), std::move(unit), better);
  metric.before = before;
  metric.after = after;
  SetDelta(&metric);
  metric.test = metric.before && metric.after ? source.test : "unknown";
  metric.significant = metric.before && metric.after && source.significant;
  return metric;
}

MetricComparison Exact(std::string key, std::string unit, std::optional<int64_t> before, std::optional<int64_t> after) {
  MetricComparison metric = NewMetric(std::move(key), std::move(unit));
  if (before) metric.before = static_cast<double>(*before);
  if (after) metric.after = static_cast<double>(*after);
  SetDelta(&metric);
  metric.test = metric.before && metric.after ? "exact" : "unknown";
  metric.significant = metric.before && metric.after && *before != *after;
  return metric;
}

std::optional<double> PerSecond(double count_per_step, const std::optional<double>& step_us) {
  if (!step_us || *step_us <= 0) return std::nullopt;
  return count_per_step / (*step_us / 1e6);
}

// A breakdown part neither side has (communication in a single-process run) only adds noise to the table.
bool AllZero(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return v == 0; });
}

void AddStepMetrics(const CompareSide& before, const CompareSide& after, const CompareOptions& options,
                    std::vector<MetricComparison>* metrics) {
  const std::vector<double> before_us = ToUnit(before.step_ns, kNsPerUs);
  const std::vector<double> after_us = ToUnit(after.step_ns, kNsPerUs);
  MetricComparison step = Sampled("step_time_us", "us", before_us, after_us, options.alpha);
  MetricComparison median =
      Sampled("step_time_median_us", "us", before_us, after_us, options.alpha, CenterStatistic::kMedian);
  MetricComparison p95 = NewMetric("step_time_p95_us", "us");
  p95.test = "not_tested";
  if (step.samples && step.samples->before) p95.before = step.samples->before->p95;
  if (step.samples && step.samples->after) p95.after = step.samples->after->p95;
  SetDelta(&p95);
  metrics->push_back(step);
  metrics->push_back(median);
  metrics->push_back(p95);
  if (options.tokens_per_step) {
    metrics->push_back(Derived("throughput_tokens_per_s", "tokens/s", Better::kHigher,
                               PerSecond(*options.tokens_per_step, step.before),
                               PerSecond(*options.tokens_per_step, step.after), step));
  }
  if (options.samples_per_step) {
    metrics->push_back(Derived("throughput_samples_per_s", "samples/s", Better::kHigher,
                               PerSecond(*options.samples_per_step, step.before),
                               PerSecond(*options.samples_per_step, step.after), step));
  }
}

void AddGenerationMetrics(const CompareSide& before, const CompareSide& after, const CompareOptions& options,
                          std::vector<MetricComparison>* metrics) {
  if (before.generation.empty() && after.generation.empty()) return;
  metrics->push_back(Sampled("ttft_us", "us", ToUnit(before.generation.ttft_ns, kNsPerUs),
                             ToUnit(after.generation.ttft_ns, kNsPerUs), options.alpha));
  MetricComparison tpot = Sampled("tpot_us", "us", ToUnit(before.generation.tpot_ns, kNsPerUs),
                                  ToUnit(after.generation.tpot_ns, kNsPerUs), options.alpha);
  metrics->push_back(tpot);
  metrics->push_back(Derived("decode_tokens_per_s", "tokens/s", Better::kHigher, before.generation.decode_tokens_per_s,
                             after.generation.decode_tokens_per_s, tpot));
}

// One reading a side, no samples: the change is shown, never tested (compare.h).
MetricComparison Reading(std::string key, std::string unit, Better better, std::optional<double> before,
                         std::optional<double> after) {
  MetricComparison metric = NewMetric(std::move(key), std::move(unit), better);
  metric.before = before;
  metric.after = after;
  SetDelta(&metric);
  metric.test = metric.before && metric.after ? "not_tested" : "unknown";
  return metric;
}

// Listed whenever the advisor ran, even when both sides are unknown: an unknown utilization is an answer (the trace
// cannot tell), not a missing feature.
// A utilization measured differently on the two sides (an estimate from shapes against copies, launch
// configurations against sampled counters) shows both readings and no change: the difference would be the
// method's, not the run's.
MetricComparison Utilization(std::string key, std::optional<double> before, std::optional<double> after,
                             const std::string& before_source, const std::string& after_source) {
  MetricComparison metric = Reading(std::move(key), "%", Better::kHigher, before, after);
  if (before && after && before_source != after_source) {
    metric.delta.reset();
    metric.delta_pct.reset();
    metric.test = "not_comparable";
    metric.sources = before_source + " vs " + after_source;
  }
  return metric;
}

void AddVerdictMetrics(const SideVerdict& before, const SideVerdict& after, std::vector<MetricComparison>* metrics) {
  metrics->push_back(Utilization("compute_units_utilization_pct", before.compute_units_pct, after.compute_units_pct,
                                 before.compute_units_source, after.compute_units_source));
  metrics->push_back(Utilization("memory_bandwidth_utilization_pct", before.memory_bandwidth_pct,
                                 after.memory_bandwidth_pct, before.memory_bandwidth_source,
                                 after.memory_bandwidth_source));
  metrics->push_back(Utilization("communication_bandwidth_utilization_pct", before.communication_bandwidth_pct,
                                 after.communication_bandwidth_pct, before.communication_bandwidth_source,
                                 after.communication_bandwidth_source));
  metrics->push_back(Reading("mfu", "fraction", Better::kHigher, before.mfu, after.mfu));
}

}  // namespace

namespace {

void AddPeak(int64_t bytes, std::optional<int64_t>* peak) {
  if (bytes != kNoId) *peak = std::max(peak->value_or(bytes), bytes);
}

// torch_npu writes no allocator events on its timeline; its allocator's (PTA's) running totals are the
// rows of memory_record.csv (or the db's MEMORY_RECORD), from which `memory` takes the device's peak too.
void AddPtaPeaks(const Trace& trace, MemoryPeaks* peaks) {
  for (const NpuMemoryRecord& record : trace.npu_memory_records()) {
    if (trace.str(record.component) != "PTA") continue;
    AddPeak(record.total_allocated_bytes, &peaks->allocated_bytes);
    AddPeak(record.total_reserved_bytes, &peaks->reserved_bytes);
  }
}

void AddMemoryPeaks(const Trace& trace, MemoryPeaks* peaks_out) {
  MemoryPeaks& peaks = *peaks_out;
  bool allocator_events = false;
  for (const MemoryEvent& event : trace.memory_events()) {
    allocator_events |= event.total_allocated != kNoId;
    AddPeak(event.total_allocated, &peaks.allocated_bytes);
    AddPeak(event.total_reserved, &peaks.reserved_bytes);
  }
  if (!allocator_events) AddPtaPeaks(trace, peaks_out);
}

// A caching allocator holding allocations has reserved at least as much; a reserved total of 0 beside
// allocations (the CPU allocator in Kineto's [memory] events) means the trace does not track it.
void DropUntrackedReserved(MemoryPeaks* peaks) {
  if (peaks->reserved_bytes == 0 && peaks->allocated_bytes.value_or(0) > 0) peaks->reserved_bytes.reset();
}

}  // namespace

MemoryPeaks FindMemoryPeaks(std::span<const Trace> traces) {
  MemoryPeaks peaks;
  for (const Trace& trace : traces) AddMemoryPeaks(trace, &peaks);
  DropUntrackedReserved(&peaks);
  return peaks;
}

namespace {

// "NVIDIA A100-PG509-200, Tesla V100-SXM2-16GB": the distinct chips of one side, as the traces name them.
std::string ChipsOf(std::span<const HardwareSelection> side) {
  std::set<std::string> chips;
  for (const HardwareSelection& h : side) {
    // The name only: a selection's profile pointer need not outlive the analysis that chose it.
    const std::string& chip = !h.device_name.empty() ? h.device_name : h.label;
    if (!chip.empty()) chips.insert(chip);
  }
  std::string out;
  for (const std::string& chip : chips) out += (out.empty() ? "" : ", ") + chip;
  return out;
}

// What tells one chip from another in the names a side gives it: letters and digits in lower case, the
// words in parentheses after the name left out, so that an inferred "Ascend 910B (variant unknown) (assumed
// from ...)" and a trace's "Ascend910B" are one chip. `family`: the name is a family's, variant unknown.
struct ChipName {
  std::string key;
  bool family = false;
};

ChipName ChipNameOf(const HardwareSelection& h) {
  const std::string_view name = !h.device_name.empty() ? std::string_view(h.device_name) : std::string_view(h.label);
  ChipName chip;
  chip.family = name.find("(variant unknown)") != std::string_view::npos;
  for (char c : name.substr(0, name.find(" ("))) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) chip.key += static_cast<char>(std::tolower(u));
  }
  return chip;
}

// One chip, or a family and one of its variants ("ascend910b" and "ascend910b3").
bool SameChip(const ChipName& a, const ChipName& b) {
  if (a.key == b.key) return true;
  const auto within = [](const ChipName& family, const ChipName& other) {
    return family.family && other.key.starts_with(family.key);
  };
  return within(a, b) || within(b, a);
}

// The distinct named chips of one side (a run's ranks mostly share one).
std::vector<ChipName> ChipNamesOf(std::span<const HardwareSelection> side) {
  std::set<std::pair<std::string, bool>> seen;
  for (const HardwareSelection& h : side) {
    ChipName chip = ChipNameOf(h);
    if (!chip.key.empty()) seen.emplace(std::move(chip.key), chip.family);
  }
  std::vector<ChipName> chips;
  for (const auto& [key, family] : seen) chips.push_back(ChipName{key, family});
  return chips;
}

// Whether every named chip of each side can be one of the other side's.
bool SameChips(std::span<const HardwareSelection> before, std::span<const HardwareSelection> after) {
  const std::vector<ChipName> b = ChipNamesOf(before), a = ChipNamesOf(after);
  const auto covered = [](const std::vector<ChipName>& side, const std::vector<ChipName>& other) {
    return std::all_of(side.begin(), side.end(), [&](const ChipName& chip) {
      return std::any_of(other.begin(), other.end(), [&](const ChipName& o) { return SameChip(chip, o); });
    });
  };
  return covered(b, a) && covered(a, b);
}

}  // namespace

namespace {

constexpr std::string_view kHardwareMixesEffects =
    ": the change mixes the hardware's effect with the code's, and MFU and utilizations use different peaks";

std::set<DeviceType> DistinctPlatforms(std::span<const DeviceType> platforms) {
  return std::set<DeviceType>(platforms.begin(), platforms.end());
}

// "a GPU (NVIDIA A100-PG509-200)", "an NPU (chip unknown)", "the CPU alone": a side's kinds of device,
// each with the chips it names.
std::string PlatformWords(const std::set<DeviceType>& platforms, const std::string& chips) {
  std::string kinds;
  bool accelerator = false;
  for (DeviceType platform : platforms) {
    if (!kinds.empty()) kinds += " and ";
    kinds += platform == DeviceType::kGpu ? "a GPU" : platform == DeviceType::kNpu ? "an NPU" : "the CPU alone";
    accelerator |= platform != DeviceType::kCpu;
  }
  if (!chips.empty()) return kinds + " (" + chips + ")";
  return accelerator ? kinds + " (chip unknown)" : kinds;
}

}  // namespace

std::string HardwareDifference(const SideHardware& before, const SideHardware& after) {
  const std::string b = ChipsOf(before.chips), a = ChipsOf(after.chips);
  if (!b.empty() && !a.empty()) {
    if (a == b || SameChips(before.chips, after.chips)) return "";
    return "before ran on " + b + ", after on " + a + std::string(kHardwareMixesEffects);
  }
  // A chip unknown on either side: the kinds of device still tell a GPU run from an NPU or a CPU one.
  const std::set<DeviceType> pb = DistinctPlatforms(before.platforms), pa = DistinctPlatforms(after.platforms);
  if (pb.empty() || pa.empty() || pb == pa) return "";
  return "before ran on " + PlatformWords(pb, b) + ", after on " + PlatformWords(pa, a) +
         std::string(kHardwareMixesEffects);
}

namespace {

std::vector<size_t> SelectedOrAll(std::span<const size_t> selected, size_t count) {
  std::vector<size_t> picked(selected.begin(), selected.end());
  if (selected.empty()) {
    for (size_t i = 0; i < count; ++i) picked.push_back(i);
  }
  return picked;
}

}  // namespace

SideVerdict SummarizeVerdict(const AdvisorResult& advice, std::span<const RankComputeUnits> compute,
                             std::span<const size_t> selected) {
  SideVerdict verdict;
  const std::vector<size_t> picked = SelectedOrAll(selected, advice.ranks.size());
  size_t slowest = advice.ranks.size();
  for (size_t r : picked) {
    if (r >= advice.ranks.size()) continue;
    if (slowest == advice.ranks.size() || advice.ranks[r].split.step_ns > advice.ranks[slowest].split.step_ns)
      slowest = r;
  }
  if (slowest == advice.ranks.size()) return verdict;
  verdict.analyzed = true;
  const bool whole_job = picked.size() == advice.ranks.size();
  verdict.dominant = std::string(BottleneckName(whole_job ? advice.dominant : advice.ranks[slowest].dominant));
  const RankAdvice& rank = advice.ranks[slowest];
  verdict.split = rank.split;
  for (const UtilizationCheck& check : rank.utilizations) {
    if (check.name == "compute_units") {
      verdict.compute_units_pct = check.value_pct;
      verdict.compute_units_source = check.source;
    }
    if (check.name == "memory_bandwidth") {
      verdict.memory_bandwidth_pct = check.value_pct;
      verdict.memory_bandwidth_source = check.source;
    }
    if (check.name == "communication_bandwidth") {
      verdict.communication_bandwidth_pct = check.value_pct;
      verdict.communication_bandwidth_source = check.source;
    }
  }
  if (slowest < compute.size()) verdict.mfu = compute[slowest].mfu;
  return verdict;
}

CompareSide BuildCompareSide(std::span<const Trace> traces, std::span<const RankBreakdown> breakdowns,
                             std::span<const size_t> selected) {
  CompareSide side;
  const std::vector<size_t> picked = SelectedOrAll(selected, traces.size());
  side.ranks = picked.size();
  std::vector<RankBreakdown> ranks;
  bool any_device = false;
  for (size_t t : picked) {
    const Trace& trace = traces[t];
    side.paths.push_back(trace.metadata().path);
    ranks.push_back(t < breakdowns.size() ? breakdowns[t] : ComputeTimeBreakdown(trace));
    any_device = any_device || ranks.back().work_on == WorkSource::kDevice;
  }
  side.work_on = any_device ? WorkSource::kDevice : WorkSource::kCpu;
  FillStepSeries(ranks, &side);
  for (const RankBreakdown& rank : ranks) {
    for (const StepBreakdown& step : rank.steps) side.has_steps = side.has_steps || step.step.has_value();
  }
  for (size_t t : picked) AddMemoryPeaks(traces[t], &side.memory);
  DropUntrackedReserved(&side.memory);
  if (picked.empty()) return side;
  side.generation = ComputeGenerationMetrics(traces[picked.front()]);
  side.op_scope = any_device ? OperatorScope::kDevice : OperatorScope::kHostOperators;
  side.ops = CollectOperators(traces[picked.front()], side.op_scope, StepSelection::kAll);
  side.categories = CollectCategories(traces[picked.front()], side.op_scope, StepSelection::kAll);
  for (size_t k = 1; k < picked.size(); ++k) {
    const Trace& trace = traces[picked[k]];
    AddRankTotals(CollectOperators(trace, side.op_scope, StepSelection::kAll), &side.ops);
    AddRankTotals(CollectCategories(trace, side.op_scope, StepSelection::kAll), &side.categories);
  }
  return side;
}

MetricVerdict JudgeMetric(const MetricComparison& metric) {
  if (metric.test == "unknown") return MetricVerdict::kUnknown;
  if (metric.test == "not_tested") return MetricVerdict::kNotTested;
  if (metric.test == "not_comparable") return MetricVerdict::kNotComparable;
  if (metric.test == "too_few_samples") return MetricVerdict::kTooFewSamples;
  if (!metric.significant || !metric.delta || *metric.delta == 0) {
    return metric.test == "exact" ? MetricVerdict::kUnchanged : MetricVerdict::kNoSignificantChange;
  }
  if (metric.better == Better::kNone) return MetricVerdict::kChanged;
  return (*metric.delta < 0) == (metric.better == Better::kLower) ? MetricVerdict::kBetter : MetricVerdict::kWorse;
}

std::string MetricVerdictText(const MetricComparison& metric) {
  const MetricVerdict verdict = JudgeMetric(metric);
  const bool small_sample = metric.samples && metric.samples->small_sample;
  switch (verdict) {
    case MetricVerdict::kUnknown:
      return "unknown";
    case MetricVerdict::kNotTested:
      return "not tested";
    case MetricVerdict::kNotComparable:
      return "not comparable (" + metric.sources + ")";
    case MetricVerdict::kTooFewSamples: {
      const auto count = [](const std::optional<SampleSummary>& side) { return side ? side->count : 0; };
      return metric.samples ? fmt::format("sample too small (n={}/{})", count(metric.samples->before),
                                          count(metric.samples->after))
                            : std::string("sample too small");
    }
    case MetricVerdict::kUnchanged:
      return "unchanged (exact)";
    case MetricVerdict::kNoSignificantChange:
      return small_sample ? "no significant change (small n)" : "no significant change";
    case MetricVerdict::kChanged:
    case MetricVerdict::kBetter:
    case MetricVerdict::kWorse:
      break;
  }
  std::string text = verdict == MetricVerdict::kChanged  ? "changed"
                     : verdict == MetricVerdict::kBetter ? "better"
                                                         : "worse";
  if (metric.test == "exact") return text + " (exact)";
  if (metric.samples && metric.samples->rank_test) {
    text += fmt::format(" (p={:.2g}{})", metric.samples->rank_test->p_value, small_sample ? ", small n" : "");
  }
  return text;
}

const MetricComparison* CompareResult::Find(std::string_view key) const {
  for (const MetricComparison& metric : metrics) {
    if (metric.key == key) return &metric;
  }
  return nullptr;
}

CompareResult CompareSides(CompareSide before, CompareSide after, const CompareOptions& options) {
  CompareResult result;
  result.options = options;
  AddStepMetrics(before, after, options, &result.metrics);
  AddGenerationMetrics(before, after, options, &result.metrics);
  result.metrics.push_back(
      Exact("peak_allocated_bytes", "bytes", before.memory.allocated_bytes, after.memory.allocated_bytes));
  result.metrics.push_back(
      Exact("peak_reserved_bytes", "bytes", before.memory.reserved_bytes, after.memory.reserved_bytes));
  for (size_t f = 0; f < before.breakdown.size() && f < after.breakdown.size(); ++f) {
    MetricComparison metric = Sampled(before.breakdown[f].key, "us", ToUnit(before.breakdown[f].values, kNsPerUs),
                                      ToUnit(after.breakdown[f].values, kNsPerUs), options.alpha);
    metric.better = kBreakdownFields[f].better;
    if (!AllZero(before.breakdown[f].values) || !AllZero(after.breakdown[f].values)) {
      result.metrics.push_back(std::move(metric));
    }
  }
  // Operators compare only like with like; a side that measured host work cannot match kernels.
  const OperatorScope scope = before.op_scope == after.op_scope ? before.op_scope : OperatorScope::kHostOperators;
  if (before.op_scope == after.op_scope) result.ops = DiffOperators(before.ops, after.ops, scope);
  result.ops.scope = scope;
  result.categories = DiffCategories(before.categories, after.categories);
  if (before.verdict.analyzed || after.verdict.analyzed) {  // callers without the advisor list none
    AddVerdictMetrics(before.verdict, after.verdict, &result.metrics);
  }
  result.before = std::move(before);
  result.after = std::move(after);
  return result;
}

const std::vector<std::string_view>& GateMetricNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> all = {"step_time",
                                         "throughput",
                                         "ttft",
                                         "tpot",
                                         "peak_memory",
                                         "peak_reserved",
                                         "step_time_us",
                                         "step_time_median_us",
                                         "step_time_p95_us",
                                         "throughput_tokens_per_s",
                                         "throughput_samples_per_s",
                                         "ttft_us",
                                         "tpot_us",
                                         "decode_tokens_per_s",
                                         "compute_units_utilization_pct",
                                         "memory_bandwidth_utilization_pct",
                                         "communication_bandwidth_utilization_pct",
                                         "mfu",
                                         "peak_allocated_bytes",
                                         "peak_reserved_bytes"};
    for (const BreakdownField& field : kBreakdownFields) all.push_back(field.key);
    return all;
  }();
  return names;
}

}  // namespace tuneprof

#include "analysis/compare/compare.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// `steps` steps of device work; step i's kernel lasts base_us + (i % 3) µs and the step's host range
// ends with it (20 µs after the step starts), so a step lasts base_us + (i % 3) + 20 µs.
Trace StepTrace(int steps, int64_t base_us, int64_t peak_allocated) {
  HandBuiltTrace t;
  for (int i = 0; i < steps; ++i) {
    const int64_t start = Us(1000.0 * i);
    t.Step(i + 1, start, Us(static_cast<double>(20 + base_us + i % 3)));
    t.LaunchedKernel("gemm", start + Us(10), start + Us(20), Us(static_cast<double>(base_us + i % 3)), i + 1);
  }
  MemoryEvent memory;
  memory.total_allocated = peak_allocated;
  memory.total_reserved = 2 * peak_allocated;
  t.mutable_builder()->AddMemoryEvent(memory);
  return t.Finish();
}

CompareResult CompareTraces(Trace before, Trace after, CompareOptions options = {}) {
  std::vector<Trace> b, a;
  b.push_back(std::move(before));
  a.push_back(std::move(after));
  return CompareSides(BuildCompareSide(b), BuildCompareSide(a), options);
}

TEST(CompareTest, FasterStepsAreASignificantDecrease) {
  CompareOptions options;
  options.samples_per_step = 8;
  const CompareResult result = CompareTraces(StepTrace(12, 500, 1000), StepTrace(12, 300, 1200), options);
  const MetricComparison* step = result.Find("step_time_us");
  ASSERT_NE(step, nullptr);
  EXPECT_NEAR(*step->before, 521, 1e-9);  // kernels of 500, 501, 502 µs in turn, 20 µs after the step starts
  EXPECT_NEAR(*step->after, 321, 1e-9);
  EXPECT_TRUE(step->significant);
  EXPECT_EQ(step->test, "sampled");
  const MetricComparison* throughput = result.Find("throughput_samples_per_s");
  ASSERT_NE(throughput, nullptr);
  EXPECT_NEAR(*throughput->before, 8 / 521e-6, 1e-6);
  const MetricComparison* memory = result.Find("peak_allocated_bytes");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(*memory->before, 1000);
  EXPECT_EQ(*memory->after, 1200);
  EXPECT_NEAR(*memory->delta_pct, 20, 1e-9);
  EXPECT_TRUE(memory->significant);
  EXPECT_EQ(*result.Find("peak_reserved_bytes")->after, 2400);
}

TEST(CompareTest, ReservedZeroBesideAllocationsIsUntracked) {
  // Kineto's CPU [memory] events carry Total Reserved 0: unknown, not an exact 0.
  HandBuiltTrace t;
  MemoryEvent memory;
  memory.total_allocated = 4096;
  memory.total_reserved = 0;
  t.mutable_builder()->AddMemoryEvent(memory);
  std::vector<Trace> traces;
  traces.push_back(t.Finish());
  const MemoryPeaks peaks = FindMemoryPeaks(traces);
  EXPECT_EQ(peaks.allocated_bytes, 4096);
  EXPECT_FALSE(peaks.reserved_bytes.has_value());
}

TEST(CompareTest, TorchNpuPeakIsItsAllocatorsRecords) {
  // torch_npu writes no allocator events on its timeline: the peak is that of memory_record's PTA rows,
  // as `memory` reads it; the other components (GE, APP) hold other memory and are not the allocator's.
  HandBuiltTrace t;
  Trace trace = t.Finish();
  SideTableBuilder side(&trace);
  NpuMemoryRecord record;
  record.component = side.Intern("PTA");
  record.total_allocated_bytes = 1000;
  record.total_reserved_bytes = 1500;
  side.AddNpuMemoryRecord(record);
  record.total_allocated_bytes = 800;
  record.total_reserved_bytes = 1600;
  side.AddNpuMemoryRecord(record);
  record.component = side.Intern("APP");
  record.total_allocated_bytes = 9000;
  side.AddNpuMemoryRecord(record);
  std::vector<Trace> traces;
  traces.push_back(std::move(trace));
  const MemoryPeaks peaks = FindMemoryPeaks(traces);
  EXPECT_EQ(peaks.allocated_bytes, 1000);
  EXPECT_EQ(peaks.reserved_bytes, 1600);
}

TEST(CompareTest, SameRunTwiceIsNoSignificantChange) {
  const CompareResult result = CompareTraces(StepTrace(12, 500, 1000), StepTrace(12, 500, 1000));
  const MetricComparison* step = result.Find("step_time_us");
  EXPECT_FALSE(step->significant);
  EXPECT_EQ(step->samples->verdict, ChangeVerdict::kNoSignificantChange);
  EXPECT_FALSE(result.Find("peak_allocated_bytes")->significant);
}

TEST(CompareTest, OneStepIsTooFewSamples) {
  const CompareResult result = CompareTraces(StepTrace(1, 500, 1000), StepTrace(1, 100, 1000));
  const MetricComparison* step = result.Find("step_time_us");
  EXPECT_EQ(step->test, "too_few_samples");
  EXPECT_FALSE(step->significant);
}

GateCondition Gate(std::string_view text) {
  auto condition = ParseGateCondition(text);
  EXPECT_TRUE(condition.ok()) << text;
  return condition.ok() ? condition.value() : GateCondition{};
}

// A limit that no change can cross, or whose unit is a guess, would make a gate that always passes.
TEST(CompareTest, GateLimitIsAFinitePercentage) {
  for (const char* text :
       {"free_us<nan%", "free_us<-inf%", "step_time>+inf%", "step_time>+3", "step_time>3 ms", "step_time>%",
        "step_time>+3%%", "step_time>+1e999%", "step_time>+-3%", "step_time>=3%", "step_time<=-3%"}) {
    auto condition = ParseGateCondition(text);
    ASSERT_FALSE(condition.ok()) << text;
    EXPECT_EQ(condition.status().code(), StatusCode::kUsage) << text;
    EXPECT_NE(condition.status().message().find(std::string("\"") + text + "\""), std::string::npos)
        << condition.status().message();
  }
}

TEST(CompareTest, GateParsesAndFiresOnlyWhenSignificant) {
  auto slower = ParseGateCondition("step_time>+3%");
  ASSERT_TRUE(slower.ok());
  EXPECT_TRUE(slower->above);
  EXPECT_DOUBLE_EQ(slower->pct, 3);
  auto throughput = ParseGateCondition("throughput<-2%");
  ASSERT_TRUE(throughput.ok());
  EXPECT_FALSE(throughput->above);
  EXPECT_DOUBLE_EQ(throughput->pct, -2);
  EXPECT_FALSE(ParseGateCondition("step_time").ok());
  EXPECT_FALSE(ParseGateCondition("step_time>fast").ok());
  EXPECT_FALSE(ParseGateCondition(">3%").ok());
  auto typo = ParseGateCondition("steptime>+3%");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kUsage);
  EXPECT_NE(typo.status().message().find("unknown metric \"steptime\"; one of step_time,"), std::string::npos);

  // Blanks around the parts are no part of a name or a number.
  auto spaced = ParseGateCondition(" free_us < -5 % ");
  ASSERT_TRUE(spaced.ok()) << spaced.status().message();
  EXPECT_EQ(spaced->metric, "free_us");
  EXPECT_DOUBLE_EQ(spaced->pct, -5);

  CompareOptions options;
  options.samples_per_step = 8;
  const CompareResult regression = CompareTraces(StepTrace(12, 300, 1000), StepTrace(12, 500, 1000), options);
  EXPECT_TRUE(EvaluateGate(regression, *slower).fired);
  EXPECT_TRUE(EvaluateGate(regression, *throughput).fired);
  EXPECT_FALSE(EvaluateGate(regression, Gate("step_time>+80%")).fired);  // +66 %
  const GateOutcome memory = EvaluateGate(regression, Gate("peak_memory>+5%"));
  EXPECT_TRUE(memory.evaluated);
  EXPECT_FALSE(memory.fired);

  const CompareResult same = CompareTraces(StepTrace(12, 500, 1000), StepTrace(12, 500, 1000));
  EXPECT_FALSE(EvaluateGate(same, Gate("step_time>-50%")).fired);  // holds, not significant
  const GateOutcome unknown = EvaluateGate(same, Gate("ttft>+1%"));
  EXPECT_FALSE(unknown.evaluated);
  EXPECT_FALSE(unknown.fired);
}

TEST(CompareTest, EveryMetricCompareProducesIsAGateName) {
  CompareOptions options;
  options.samples_per_step = 8;
  options.tokens_per_step = 1024;
  const CompareResult result = CompareTraces(StepTrace(12, 300, 1000), StepTrace(12, 500, 1000), options);
  ASSERT_FALSE(result.metrics.empty());
  const std::vector<std::string_view>& known = GateMetricNames();
  for (const MetricComparison& metric : result.metrics) {
    EXPECT_NE(std::find(known.begin(), known.end(), metric.key), known.end()) << metric.key;
  }
}

TEST(CompareTest, VerdictOfTheSlowestRankAndUnknownKeptUnknown) {
  AdvisorResult advice;
  advice.dominant = Bottleneck::kMemory;
  for (double step_ns : {100.0, 300.0}) {
    RankAdvice rank;
    rank.split.step_ns = step_ns;
    rank.utilizations = {UtilizationCheck{
                             "compute_units",
                             step_ns / 10,
                             70,
                             "",
                         },
                         UtilizationCheck{"memory_bandwidth", std::nullopt, 60, "unknown"},
                         UtilizationCheck{"communication_bandwidth", 12.5, 50, ""}};
    advice.ranks.push_back(rank);
  }
  std::vector<RankComputeUnits> compute(2);
  compute[1].mfu = 0.25;
  const SideVerdict verdict = SummarizeVerdict(advice, compute);
  EXPECT_TRUE(verdict.analyzed);
  EXPECT_EQ(verdict.dominant, "memory");
  EXPECT_DOUBLE_EQ(*verdict.compute_units_pct, 30);  // the slower rank's
  EXPECT_FALSE(verdict.memory_bandwidth_pct.has_value());
  EXPECT_DOUBLE_EQ(*verdict.communication_bandwidth_pct, 12.5);
  EXPECT_DOUBLE_EQ(*verdict.mfu, 0.25);
  EXPECT_EQ(SummarizeVerdict(AdvisorResult{}, {}).dominant, "unknown");

  std::vector<Trace> b, a;
  b.push_back(StepTrace(6, 500, 1000));
  a.push_back(StepTrace(6, 300, 1000));
  CompareSide before = BuildCompareSide(b);
  CompareSide after = BuildCompareSide(a);
  before.verdict = verdict;
  SideVerdict faster = verdict;
  faster.compute_units_pct = 45;
  faster.dominant = "compute";
  after.verdict = faster;
  const CompareResult result = CompareSides(std::move(before), std::move(after), {});
  const MetricComparison* units = result.Find("compute_units_utilization_pct");
  ASSERT_NE(units, nullptr);
  EXPECT_DOUBLE_EQ(*units->delta_pct, 50);
  EXPECT_EQ(units->test, "not_tested");
  EXPECT_FALSE(units->significant);  // one reading a side: never a win
  const MetricComparison* memory = result.Find("memory_bandwidth_utilization_pct");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->test, "unknown");
  EXPECT_FALSE(memory->before.has_value());  // unknown stays unknown, never 0
  ASSERT_NE(result.Find("mfu"), nullptr);
  EXPECT_EQ(result.after.verdict.dominant, "compute");
  ASSERT_EQ(result.categories.size(), 1u);  // the gemm kernels
  EXPECT_EQ(result.categories[0].category, OperatorCategory::kMatmul);
  EXPECT_DOUBLE_EQ(result.categories[0].before_count, 1);
}

// An estimate from operator shapes against copies' bandwidth: both readings, no change, no verdict.
TEST(CompareTest, UtilizationsMeasuredDifferentlyAreNotCompared) {
  std::vector<Trace> b, a;
  b.push_back(StepTrace(6, 500, 1000));
  a.push_back(StepTrace(6, 300, 1000));
  CompareSide before = BuildCompareSide(b);
  CompareSide after = BuildCompareSide(a);
  before.verdict.analyzed = after.verdict.analyzed = true;
  before.verdict.memory_bandwidth_pct = 6.1;
  before.verdict.memory_bandwidth_source = "operator_shapes";
  after.verdict.memory_bandwidth_pct = 0.5;
  after.verdict.memory_bandwidth_source = "copies";
  before.verdict.compute_units_pct = 10;
  after.verdict.compute_units_pct = 20;
  before.verdict.compute_units_source = after.verdict.compute_units_source = "launch_config";
  const CompareResult result = CompareSides(std::move(before), std::move(after), {});
  const MetricComparison* memory = result.Find("memory_bandwidth_utilization_pct");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->test, "not_comparable");
  EXPECT_DOUBLE_EQ(*memory->before, 6.1);
  EXPECT_DOUBLE_EQ(*memory->after, 0.5);
  EXPECT_FALSE(memory->delta.has_value());
  EXPECT_EQ(MetricVerdictText(*memory), "not comparable (operator_shapes vs copies)");
  const MetricComparison* units = result.Find("compute_units_utilization_pct");
  ASSERT_NE(units, nullptr);
  EXPECT_EQ(units->test, "not_tested");
  EXPECT_DOUBLE_EQ(*units->delta, 10);
}

}  // namespace
}  // namespace tuneprof

namespace tuneprof {
namespace {

TEST(CompareTest, RunsOnDifferentChipsAreNamed) {
  HardwareSelection a100, v100, unnamed;
  a100.device_name = "NVIDIA A100-PG509-200";
  v100.device_name = "Tesla V100-SXM2-16GB";
  const SideHardware before{{a100, a100}}, after{{v100}}, same{{a100}}, none{{unnamed}};
  EXPECT_EQ(HardwareDifference(before, same), "");
  EXPECT_EQ(HardwareDifference(before, none), "");  // a side that names no chip cannot differ
  const std::string differ = HardwareDifference(before, after);
  EXPECT_NE(differ.find("before ran on NVIDIA A100-PG509-200, after on Tesla V100-SXM2-16GB"), std::string::npos);
}

// A GPU run against a torch_npu run whose chip is unknown, or against a CPU-only run: the chip of a side is
// unknown, yet the kinds of device differ, and one line says so. Two runs of one kind, a chip unknown on
// one side, cannot be told apart.
TEST(CompareTest, RunsOnDifferentKindsOfDeviceAreNamedWhereAChipIsUnknown) {
  HardwareSelection a100, unknown;
  a100.device_name = "NVIDIA A100-PG509-200";
  const SideHardware gpu{{a100}, {DeviceType::kGpu}};
  const SideHardware npu{{unknown, unknown}, {DeviceType::kNpu, DeviceType::kNpu}};
  const SideHardware cpu{{unknown}, {DeviceType::kCpu}};
  const SideHardware gpu_unknown{{unknown}, {DeviceType::kGpu}};
  EXPECT_EQ(HardwareDifference(gpu, npu),
            "before ran on a GPU (NVIDIA A100-PG509-200), after on an NPU (chip unknown): the change mixes the "
            "hardware's effect with the code's, and MFU and utilizations use different peaks");
  EXPECT_NE(HardwareDifference(npu, gpu).find("before ran on an NPU (chip unknown), after on a GPU (NVIDIA"),
            std::string::npos);
  EXPECT_NE(HardwareDifference(cpu, gpu).find("before ran on the CPU alone, after on a GPU"), std::string::npos);
  EXPECT_NE(HardwareDifference(npu, cpu).find("an NPU (chip unknown), after on the CPU alone"), std::string::npos);
  EXPECT_EQ(HardwareDifference(gpu, gpu_unknown), "");
  EXPECT_EQ(HardwareDifference(npu, npu), "");
  EXPECT_EQ(HardwareDifference(cpu, cpu), "");
  EXPECT_EQ(HardwareDifference(SideHardware{{unknown}}, npu), "");  // kinds unknown: nothing to tell
}

// The text and Db exports of one torch_npu run: a chip inferred as the family, variant unknown, and the same
// family named by the trace are one chip; a named variant is of its family; another chip still differs.
TEST(CompareTest, AFamilyInferredAndNamedIsOneChip) {
  HardwareSelection inferred, named, variant, other;
  inferred.label =
      "Ascend 910B (variant unknown) (assumed from operators on AI Vector cores; pass --hardware to override)";
  inferred.inferred = true;
  named.device_name = "Ascend910B";
  variant.device_name = "Ascend910B3";
  other.device_name = "Ascend910A";
  const SideHardware text{{inferred}}, db{{named}}, b3{{variant}}, a{{other}};
  EXPECT_EQ(HardwareDifference(text, db), "");
  EXPECT_EQ(HardwareDifference(text, b3), "");
  EXPECT_NE(HardwareDifference(text, a), "");
  EXPECT_NE(HardwareDifference(db, a), "");
  EXPECT_NE(HardwareDifference(db, b3), "");  // a named family is not read as any variant of it
}

// One rank of a two-rank run: `steps` steps, each a 100 µs "gemm" and a "nccl_send" of send_us.
Trace RankTrace(int64_t rank, int steps, double send_us) {
  HandBuiltTrace t;
  t.mutable_metadata()->rank = rank;
  t.mutable_metadata()->path = "rank" + std::to_string(rank) + ".json";
  for (int i = 0; i < steps; ++i) {
    const int64_t start = Us(1000.0 * i);
    t.Step(i + 1, start, Us(500));
    t.LaunchedKernel("gemm", start + Us(10), start + Us(20), Us(100), 2 * i + 1);
    t.LaunchedKernel("nccl_send", start + Us(15), start + Us(130), Us(send_us), 2 * i + 2);
  }
  return t.Finish();
}

const OperatorDelta* FindOp(const CompareResult& result, std::string_view name) {
  for (const OperatorDelta& op : result.ops.ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// The change of the device's busy time per step, in µs, as the breakdown metrics give it.
double BusyDelta(const CompareResult& result) {
  double delta = 0;
  for (const char* key : {"computing_us", "communication_exposed_us", "communication_hidden_us"}) {
    if (const MetricComparison* metric = result.Find(key)) delta += metric->delta.value_or(0);
  }
  return delta;
}

struct TwoRankPair {
  std::vector<Trace> before, after;
};

// Rank 0's send gets faster (100 -> 50 µs), rank 1's slower (40 -> 160 µs): over the ranks, slower.
TwoRankPair FasterRankZeroSlowerRankOne() {
  TwoRankPair pair;
  pair.before.push_back(RankTrace(0, 6, 100));
  pair.before.push_back(RankTrace(1, 6, 40));
  pair.after.push_back(RankTrace(0, 6, 50));
  pair.after.push_back(RankTrace(1, 6, 160));
  return pair;
}

CompareResult ComparePopulation(const TwoRankPair& pair, std::optional<int64_t> rank) {
  auto population = MatchRanks(pair.before, pair.after, rank);
  EXPECT_TRUE(population.ok());
  CompareResult result = CompareSides(BuildCompareSide(pair.before, {}, population->before),
                                      BuildCompareSide(pair.after, {}, population->after), {});
  result.population = *population;
  return result;
}

TEST(CompareTest, OperatorsAndMetricsSpeakOfTheSameRanks) {
  const CompareResult result = ComparePopulation(FasterRankZeroSlowerRankOne(), std::nullopt);
  EXPECT_TRUE(result.population.named);
  EXPECT_EQ(result.population.ranks, (std::vector<int64_t>{0, 1}));
  const OperatorDelta* send = FindOp(result, "nccl_send");
  ASSERT_NE(send, nullptr);
  EXPECT_DOUBLE_EQ(send->before_ns, Us(70));  // (100 + 40) / 2 per step
  EXPECT_DOUBLE_EQ(send->after_ns, Us(105));  // (50 + 160) / 2
  EXPECT_DOUBLE_EQ(send->before_count, 1);    // one call per rank and step
  // The breakdown is the mean over ranks too: the busy time it adds up grows by the same amount.
  const double busy_delta = BusyDelta(result);
  EXPECT_NEAR(busy_delta, send->delta_ns() / 1000, 1e-9);
  EXPECT_GT(busy_delta, 0);
  ASSERT_FALSE(result.categories.empty());
  double category_delta = 0;
  for (const CategoryDelta& c : result.categories) category_delta += c.after_ns - c.before_ns;
  EXPECT_NEAR(category_delta, send->delta_ns(), 1e-6);
}

TEST(CompareTest, RankOptionComparesThatRankAlone) {
  const TwoRankPair pair = FasterRankZeroSlowerRankOne();
  const CompareResult one = ComparePopulation(pair, 1);
  EXPECT_EQ(one.population.ranks, (std::vector<int64_t>{1}));
  EXPECT_EQ(one.before.paths, (std::vector<std::string>{"rank1.json"}));
  const OperatorDelta* send = FindOp(one, "nccl_send");
  ASSERT_NE(send, nullptr);
  EXPECT_DOUBLE_EQ(send->before_ns, Us(40));
  EXPECT_DOUBLE_EQ(send->after_ns, Us(160));
  const CompareResult zero = ComparePopulation(pair, 0);
  EXPECT_DOUBLE_EQ(FindOp(zero, "nccl_send")->delta_ns(), -Us(50));
  EXPECT_NEAR(BusyDelta(zero), -50, 1e-9);  // rank 0 alone got faster, and its breakdown says so
}

TEST(CompareTest, RankMissingOnASideIsAnErrorNamingIt) {
  const TwoRankPair pair = FasterRankZeroSlowerRankOne();
  auto missing = MatchRanks(pair.before, pair.after, 7);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUsage);
  EXPECT_NE(missing.status().message().find("no rank 7"), std::string::npos) << missing.status().message();
  EXPECT_EQ(missing.status().message().find('\n'), std::string::npos);
}

TEST(CompareTest, RanksOfOneSideOnlyAreLeftOutAndNamed) {
  TwoRankPair pair = FasterRankZeroSlowerRankOne();
  pair.after.push_back(RankTrace(2, 6, 10));
  auto population = MatchRanks(pair.before, pair.after, std::nullopt);
  ASSERT_TRUE(population.ok());
  EXPECT_EQ(population->ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(population->after, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(population->only_after, (std::vector<int64_t>{2}));
  EXPECT_NE(LeftOutRanksWarning(*population).find("after only 2"), std::string::npos);
  std::vector<Trace> other;
  other.push_back(RankTrace(5, 2, 10));
  other.push_back(RankTrace(6, 2, 10));
  EXPECT_FALSE(MatchRanks(pair.before, other, std::nullopt).ok());
}

TEST(CompareTest, OneTraceASideIsComparedWhateverItsRank) {
  std::vector<Trace> before, after;
  before.push_back(RankTrace(3, 2, 10));
  after.push_back(RankTrace(1, 2, 10));
  auto population = MatchRanks(before, after, std::nullopt);
  ASSERT_TRUE(population.ok());
  EXPECT_FALSE(population->named);
  EXPECT_EQ(population->before, (std::vector<size_t>{0}));
  EXPECT_TRUE(LeftOutRanksWarning(*population).empty());
  EXPECT_FALSE(MatchRanks(before, after, 3).ok());  // --rank asks both sides for that rank
}

}  // namespace
}  // namespace tuneprof

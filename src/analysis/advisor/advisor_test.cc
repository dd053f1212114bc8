// advisor.h: gain capping per TimePart, merging a finding across ranks, the verdict averaged over ranks
// and the "none" verdict, on hand-built findings and traces.
#include "analysis/advisor/advisor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <string>
#include <vector>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

Finding Candidate(std::string id, TimePart part, double uncapped_ns) {
  Finding f;
  f.id = std::move(id);
  f.saves_from = part;
  f.uncapped_gain_ns = uncapped_ns;
  return f;
}

TimeSplit Split(double memory_bound_ns, double host_ns) {
  TimeSplit split;
  split.steps = 1;
  split.part_ns[static_cast<size_t>(TimePart::kMemoryBound)] = memory_bound_ns;
  split.part_ns[static_cast<size_t>(TimePart::kHostWait)] = host_ns;
  split.step_ns = memory_bound_ns + host_ns;
  return split;
}

TEST(CapGains, FindingsOfOnePartNeverExceedIt) {
  std::vector<Finding> findings = {Candidate("d", TimePart::kMemoryBound, 10),
                                   Candidate("b", TimePart::kMemoryBound, 50), Candidate("c", TimePart::kHostWait, 30),
                                   Candidate("a", TimePart::kMemoryBound, 60)};
  CapGains(Split(100, 20), &findings);
  ASSERT_EQ(findings.size(), 4u);
  // Largest uncapped first; each gets what the ones before it left of its part.
  EXPECT_EQ(findings[0].id, "a");
  EXPECT_EQ(findings[0].estimated_gain_ns, 60);
  EXPECT_EQ(findings[1].id, "b");
  EXPECT_EQ(findings[1].estimated_gain_ns, 40);  // 100 - 60
  EXPECT_EQ(findings[2].id, "c");
  EXPECT_EQ(findings[2].estimated_gain_ns, 20);  // the host part is 20
  EXPECT_EQ(findings[3].id, "d");
  EXPECT_EQ(findings[3].estimated_gain_ns, 0);  // nothing left of the memory-bound part
  double memory = 0, host = 0;
  for (const Finding& f : findings) (f.saves_from == TimePart::kMemoryBound ? memory : host) += f.estimated_gain_ns;
  EXPECT_LE(memory, 100);
  EXPECT_LE(host, 20);
  for (const Finding& f : findings)
    EXPECT_EQ(f.uncapped_gain_ns, f.id == "a" ? 60 : f.id == "b" ? 50 : f.id == "c" ? 30 : 10);
}

// On a pipeline rank the communication part is the exposed communication outside the bubble: the cut says so.
TEST(CapGains, CommunicationCapOfAPipelineRankNamesTheBubble) {
  TimeSplit split;
  split.steps = 1;
  split.part_ns[static_cast<size_t>(TimePart::kCommunication)] = 5;
  split.part_ns[static_cast<size_t>(TimePart::kPipelineBubble)] = 200;
  split.step_ns = 205;
  std::vector<Finding> findings = {Candidate("wait", TimePart::kCommunication, 200)};
  CapGains(split, &findings);
  EXPECT_EQ(findings[0].estimated_gain_ns, 5);
  EXPECT_EQ(findings[0].gain_cut, "capped at the step's exposed communication (outside the pipeline bubble) time");
  split.part_ns[static_cast<size_t>(TimePart::kPipelineBubble)] = 0;
  findings = {Candidate("wait", TimePart::kCommunication, 200)};
  CapGains(split, &findings);
  EXPECT_EQ(findings[0].gain_cut, "capped at the step's communication time");
}

TEST(CapGains, NegativeEstimatesBecomeZeroAndLeaveThePartWhole) {
  std::vector<Finding> findings = {Candidate("neg", TimePart::kMemoryBound, -5),
                                   Candidate("pos", TimePart::kMemoryBound, 70)};
  CapGains(Split(100, 0), &findings);
  EXPECT_EQ(findings[0].id, "pos");
  EXPECT_EQ(findings[0].estimated_gain_ns, 70);
  EXPECT_EQ(findings[1].estimated_gain_ns, 0);
}

TEST(CapGains, EqualEstimatesKeepTheRulesOrder) {
  // 20 findings of 10 ns each from a 100 ns part: the first ten listed get 10 ns, the rest nothing, on
  // every standard library (an unstable sort would pick an arbitrary ten).
  std::vector<Finding> findings;
  for (int i = 0; i < 20; ++i) findings.push_back(Candidate("f" + std::to_string(i), TimePart::kMemoryBound, 10));
  CapGains(Split(100, 0), &findings);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(findings[i].id, "f" + std::to_string(i));
    EXPECT_EQ(findings[i].estimated_gain_ns, i < 10 ? 10 : 0) << i;
  }
}

TEST(CapGains, AnEmptyPartCapsToZero) {
  std::vector<Finding> findings = {Candidate("idle", TimePart::kIdle, 1000)};
  CapGains(Split(100, 20), &findings);
  EXPECT_EQ(findings[0].estimated_gain_ns, 0);
}

// One rank: a 1000 us ProfilerStep#1 on the host, the given device kernels and host ranges.
struct RankSpec {
  int64_t rank = 0;
  std::vector<std::pair<std::string, std::pair<double, double>>> kernels;  // name, [start us, end us)
  std::vector<std::pair<std::string, std::pair<double, double>>> host_ranges;
};

Trace BuildRank(const RankSpec& spec) {
  HandBuiltTrace t;
  t.mutable_metadata()->rank = spec.rank;
  t.Step(1, 0, Us(1000));
  for (const auto& [name, span] : spec.host_ranges) {
    t.Host(EventKind::kUserAnnotation, name, Us(span.first), Us(span.second - span.first));
  }
  for (const auto& [name, span] : spec.kernels) t.Kernel(name, Us(span.first), Us(span.second - span.first));
  return t.Finish();
}

// Runs the advisor on the ranks; `computes` (optional, parallel) replaces the measured compute units.
class Job {
 public:
  explicit Job(const std::vector<RankSpec>& specs, std::vector<RankComputeUnits> computes = {}) {
    for (const RankSpec& spec : specs) traces_.push_back(BuildRank(spec));
    for (size_t i = 0; i < traces_.size(); ++i) {
      breakdowns_.push_back(ComputeTimeBreakdown(traces_[i]));
      hardware_.push_back(SelectHardware(traces_[i], profiles_, nullptr));
      computes_.push_back(i < computes.size() ? computes[i]
                                              : ComputeRankComputeUnits(traces_[i], breakdowns_[i], hardware_[i]));
    }
    std::vector<RankInputs> inputs;
    for (size_t i = 0; i < traces_.size(); ++i) {
      inputs.push_back(RankInputs{&traces_[i], &breakdowns_[i], &computes_[i], &hardware_[i]});
    }
    result_ = RunAdvisor(inputs, AdvisorConfig());
  }
  const AdvisorResult& result() const { return result_; }
  const Finding* Find(std::string_view id) const {
    auto it =
        std::find_if(result_.findings.begin(), result_.findings.end(), [&](const Finding& f) { return f.id == id; });
    return it == result_.findings.end() ? nullptr : &*it;
  }

 private:
  HardwareProfiles profiles_;
  std::deque<Trace> traces_;
  std::deque<RankBreakdown> breakdowns_;
  std::deque<HardwareSelection> hardware_;
  std::deque<RankComputeUnits> computes_;
  AdvisorResult result_;
};

double Number(const Finding& f, std::string_view label) {
  for (const Evidence& e : f.evidence) {
    if (e.label == label && e.number) return *e.number;
  }
  return -1;
}

constexpr char kLoader[] = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

TEST(RunAdvisor, AFindingOnTwoRanksKeepsTheLargerGainAndBothRanks) {
  // The DataLoader holds rank 0 for 100 us and rank 3 for 200 us, before any device work.
  const Job job({RankSpec{0, {{"gemm", {200, 1000}}}, {{kLoader, {0, 100}}}},
                 RankSpec{3, {{"gemm", {200, 1000}}}, {{kLoader, {0, 200}}}}});
  for (const RankAdvice& rank : job.result().ranks) {
    SCOPED_TRACE(rank.rank);
    EXPECT_DOUBLE_EQ(rank.split.step_ns, Us(1000));
    EXPECT_DOUBLE_EQ(rank.split.part(TimePart::kData), rank.rank == 0 ? Us(100) : Us(200));
  }
  const Finding* loader = job.Find("data.slow_dataloader");
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->ranks, (std::vector<int64_t>{0, 3}));
  EXPECT_DOUBLE_EQ(loader->estimated_gain_ns, Us(200));
  EXPECT_DOUBLE_EQ(Number(*loader, "dataloader_us_per_step"), 200);  // rank 3's evidence came with its gain
  EXPECT_EQ(std::count_if(job.result().findings.begin(), job.result().findings.end(),
                          [](const Finding& f) { return f.id == "data.slow_dataloader"; }),
            1);
}

// A cost one rank alone has is quoted with the others' median beside it, so that it reads as that rank's.
TEST(RunAdvisor, AGainThatOneRankStandsOutInCarriesTheOthersMedian) {
  const Job outlier({RankSpec{0, {{"gemm", {400, 1000}}}, {{kLoader, {0, 100}}}},
                     RankSpec{1, {{"gemm", {400, 1000}}}, {{kLoader, {0, 100}}}},
                     RankSpec{2, {{"gemm", {400, 1000}}}, {{kLoader, {0, 400}}}}});
  const Finding* loader = outlier.Find("data.slow_dataloader");
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->evidence_rank, 2);
  ASSERT_TRUE(loader->others_median_gain_ns.has_value());
  EXPECT_DOUBLE_EQ(*loader->others_median_gain_ns, Us(100));
  // Alike enough (150 < 2 x 100): the quoted gain reads as the job's.
  const Job alike({RankSpec{0, {{"gemm", {400, 1000}}}, {{kLoader, {0, 100}}}},
                   RankSpec{1, {{"gemm", {400, 1000}}}, {{kLoader, {0, 100}}}},
                   RankSpec{2, {{"gemm", {400, 1000}}}, {{kLoader, {0, 150}}}}});
  ASSERT_NE(alike.Find("data.slow_dataloader"), nullptr);
  EXPECT_FALSE(alike.Find("data.slow_dataloader")->others_median_gain_ns.has_value());
}

// A rank cut off before its first step ended has no split to average: the mean and the verdict are over
// the others, as its warning says.
TEST(CombineAdvice, TheMeanLeavesOutRanksWithoutACompleteStep) {
  std::vector<RankAdviceDraft> drafts(3);
  for (size_t i = 0; i < drafts.size(); ++i) {
    drafts[i].advice.rank = static_cast<int64_t>(i);
    if (i == 1) continue;  // cut off: no step, every part 0
    drafts[i].advice.split.steps = 4;
    drafts[i].advice.split.step_ns = Us(1000);
    drafts[i].advice.split.part_ns[static_cast<size_t>(TimePart::kIdle)] = Us(1000);
  }
  const AdvisorResult result = CombineAdvice(std::move(drafts), {}, AdvisorConfig(), nullptr);
  EXPECT_EQ(result.mean_ranks, 2u);
  EXPECT_DOUBLE_EQ(result.mean_split.step_ns, Us(1000));
  EXPECT_DOUBLE_EQ(result.mean_split.part(TimePart::kIdle), Us(1000));
  EXPECT_EQ(result.mean_split.steps, 8u);
  EXPECT_NE(result.dominant_reason.find("mean over 2 ranks"), std::string::npos) << result.dominant_reason;
}

// Communication holds most of the step, and the other ranks spend 3/4 of their collective time waiting for
// rank 2: the verdict says who they wait for, not only that communication dominates.
TEST(CombineAdvice, ACommunicationVerdictNamesTheRankTheOthersWaitFor) {
  std::vector<RankAdviceDraft> drafts(3);
  CrossRankCommunication cross;
  cross.straggler_rank = 2;
  cross.straggler_stands_out = true;
  for (size_t i = 0; i < drafts.size(); ++i) {
    drafts[i].advice.rank = static_cast<int64_t>(i);
    drafts[i].advice.split.steps = 1;
    drafts[i].advice.split.step_ns = Us(1000);
    drafts[i].advice.split.part_ns[static_cast<size_t>(TimePart::kCommunication)] = Us(800);
    drafts[i].advice.split.part_ns[static_cast<size_t>(TimePart::kIdle)] = Us(200);
    RankWait wait;
    wait.rank = static_cast<int64_t>(i);
    wait.matched = 4;
    wait.communication_ns = Us(800);
    wait.wait_ns = i == 2 ? 0 : Us(700);
    wait.wait_for_straggler_ns = i == 2 ? 0 : Us(600);  // 100 us of it for another late rank
    cross.ranks.push_back(wait);
  }
  const AdvisorResult result = CombineAdvice(drafts, {}, AdvisorConfig(), &cross);
  EXPECT_EQ(result.dominant, Bottleneck::kCommunication);
  EXPECT_NE(result.dominant_reason.find("; 75.0 % of the other ranks' collective time is waiting for rank 2 to arrive"),
            std::string::npos)
      << result.dominant_reason;
  cross.straggler_stands_out = false;  // the ranks take turns: no one to name
  EXPECT_EQ(CombineAdvice(drafts, {}, AdvisorConfig(), &cross).dominant_reason.find("waiting for rank"),
            std::string::npos);
}

TEST(RunAdvisor, FindingsAreSortedByGainLargestFirst) {
  const Job job({RankSpec{0, {{"gemm", {200, 1000}}}, {{kLoader, {0, 100}}}},
                 RankSpec{1, {{"gemm", {200, 1000}}}, {{kLoader, {0, 200}}}}});
  const std::vector<Finding>& findings = job.result().findings;
  for (size_t i = 1; i < findings.size(); ++i)
    EXPECT_GE(findings[i - 1].estimated_gain_ns, findings[i].estimated_gain_ns);
}

TEST(RunAdvisor, VerdictAveragesTheRanksRatherThanVoting) {
  // Ranks 0 and 1: 500 us element-wise (memory-bound), 400 us GEMM; rank 2: 1000 us GEMM.
  // Mean per rank: compute (400 + 400 + 1000) / 3 = 600 us, memory 500 * 2 / 3 = 333.3 us: compute,
  // although two of three ranks are memory-bound.
  const RankSpec mixed{0, {{"vectorized_elementwise_kernel", {0, 500}}, {"gemm", {500, 900}}}, {}};
  RankSpec mixed1 = mixed;
  mixed1.rank = 1;
  const Job job({mixed, mixed1, RankSpec{2, {{"gemm", {0, 1000}}}, {}}});
  ASSERT_EQ(job.result().ranks.size(), 3u);
  EXPECT_EQ(job.result().ranks[0].dominant, Bottleneck::kMemory);
  EXPECT_EQ(job.result().ranks[1].dominant, Bottleneck::kMemory);
  EXPECT_EQ(job.result().ranks[2].dominant, Bottleneck::kCompute);
  EXPECT_DOUBLE_EQ(job.result().ranks[0].split.part(TimePart::kComputeBound), Us(400));
  EXPECT_DOUBLE_EQ(job.result().ranks[0].split.part(TimePart::kMemoryBound), Us(500));
  EXPECT_EQ(job.result().dominant, Bottleneck::kCompute);
  EXPECT_DOUBLE_EQ(job.result().step_ns, Us(1000));
  // Shares of the averaged times: 600 / (600 + 333.3 + 66.7 idle) = 60 %.
  EXPECT_EQ(job.result().dominant_reason,
            "compute holds 60.0 % of the step time (0.600 ms of a 1.000 ms mean step, mean over 3 ranks)");
}

// An Ascend rank whose operators ran mostly on the Cube engine, at `cube_ratio`.
RankComputeUnits Units(double cube_ratio) {
  RankComputeUnits units;
  units.cube_ratio = cube_ratio;
  units.ascend.present = true;
  units.verdict.unit = "cube";
  units.verdict.utilization = cube_ratio;
  return units;
}

TEST(RunAdvisor, NoneWhenComputeDominatesHealthyUnitsAndNoBigFinding) {
  // 990 us of GEMM in a 1000 us step, the compute units at 80 % (>= 70 %): nothing worth 5 % of the step.
  const Job job({RankSpec{0, {{"gemm", {0, 990}}}, {}}}, {Units(0.8)});
  ASSERT_EQ(job.result().ranks.size(), 1u);
  EXPECT_EQ(job.result().ranks[0].dominant, Bottleneck::kCompute);
  for (const Finding& f : job.result().findings) EXPECT_LT(f.estimated_gain_ns, 0.05 * Us(1000)) << f.id.view();
  EXPECT_EQ(job.result().dominant, Bottleneck::kNone);
}

TEST(RunAdvisor, ComputeWhenTheUnitsAreBelowTheThreshold) {
  const Job job({RankSpec{0, {{"gemm", {0, 990}}}, {}}}, {Units(0.5)});
  EXPECT_EQ(job.result().dominant, Bottleneck::kCompute);
  EXPECT_EQ(job.result().ranks[0].utilizations[0].value_pct, 50);
}

TEST(RunAdvisor, ComputeWhenTheUnitsAreUnknown) {
  const Job job({RankSpec{0, {{"gemm", {0, 990}}}, {}}}, {RankComputeUnits{}});
  EXPECT_FALSE(job.result().ranks[0].utilizations[0].value_pct.has_value());
  EXPECT_EQ(job.result().dominant, Bottleneck::kCompute);
}

TEST(RunAdvisor, ComputeWhenOneRankHasUnhealthyUnits) {
  const Job job({RankSpec{0, {{"gemm", {0, 990}}}, {}}, RankSpec{1, {{"gemm", {0, 990}}}, {}}},
                {Units(0.8), Units(0.6)});
  EXPECT_EQ(job.result().dominant, Bottleneck::kCompute);
}

TEST(RunAdvisor, ComputeWhenAFindingWouldSaveFivePercent) {
  // The same healthy GEMM, but the DataLoader holds the first 60 us of the step: data.slow_dataloader saves 60 us.
  const Job job({RankSpec{0, {{"gemm", {60, 1000}}}, {{kLoader, {0, 60}}}}}, {Units(0.8)});
  const Finding* loader = job.Find("data.slow_dataloader");
  ASSERT_NE(loader, nullptr);
  EXPECT_DOUBLE_EQ(loader->estimated_gain_ns, Us(60));
  EXPECT_EQ(job.result().dominant, Bottleneck::kCompute);
}

TEST(RunAdvisor, GainsOfDifferentRanksNeverAddUpToMoreThanTheStep) {
  // Rank 0 waits 700 us for its DataLoader; rank 1 runs 1000 us of GEMM at 10 % of its compute units
  // (gain 1000 x (1 - 10/70) = 857.1 us). Each fits its own rank's step, but not both together.
  const Job job({RankSpec{0, {{"gemm", {700, 1000}}}, {{kLoader, {0, 700}}}}, RankSpec{1, {{"gemm", {0, 1000}}}, {}}},
                {Units(0.8), Units(0.1)});
  const Finding* units = job.Find("compute.unit_utilization");
  const Finding* loader = job.Find("data.slow_dataloader");
  ASSERT_NE(units, nullptr);
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(units->ranks, (std::vector<int64_t>{1}));
  EXPECT_EQ(loader->ranks, (std::vector<int64_t>{0}));
  EXPECT_NEAR(units->estimated_gain_ns, 1000e3 * 60 / 70, 1e-6);
  double sum = 0;
  for (const Finding& f : job.result().findings) sum += f.estimated_gain_ns;
  EXPECT_DOUBLE_EQ(job.result().step_ns, Us(1000));
  EXPECT_LE(sum, job.result().step_ns + 1e-6);
  // The smaller gain keeps what the larger left of the step: 1000 - 857.1 = 142.9 us.
  EXPECT_NEAR(loader->estimated_gain_ns, 1000e3 - 1000e3 * 60 / 70, 1e-6);
}

bool Has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A GPU trace whose kernels carry no launch configuration and that has no copies: compute units and
// memory bandwidth are unknown, say why, and name the capture option that would measure them.
// (Communication is not analysed by this harness.)
TEST(Utilizations, UnknownGpuValuesSayHowToMeasureThem) {
  const Job job({RankSpec{0, {{"gemm", {0, 990}}}, {}}});
  const std::vector<UtilizationCheck>& checks = job.result().ranks[0].utilizations;
  ASSERT_EQ(checks.size(), 3u);
  for (const UtilizationCheck& check : checks) {
    EXPECT_FALSE(check.value_pct.has_value()) << check.name;
    EXPECT_TRUE(Has(check.measured_as, "unknown: ")) << check.name << ": " << check.measured_as;
  }
  EXPECT_EQ(checks[0].measured_as, "unknown: the kernels carry no launch configuration (grid, block)");
  EXPECT_TRUE(Has(checks[0].how_to_measure, "ProfilerActivity.CUDA")) << checks[0].how_to_measure.view();
  EXPECT_TRUE(Has(checks[0].how_to_measure, "nsys profile --gpu-metrics-devices=all"))
      << checks[0].how_to_measure.view();
  EXPECT_EQ(checks[1].measured_as, "unknown: no DRAM counters, no operator shapes and no copies against a known peak");
  EXPECT_TRUE(Has(checks[1].how_to_measure, "--gpu-metrics-devices=all")) << checks[1].how_to_measure.view();
  EXPECT_TRUE(Has(checks[1].how_to_measure, "record_shapes=True")) << checks[1].how_to_measure.view();
}

// A known GPU value says what it is and over which kernels; it needs no capture hint.
TEST(Utilizations, KnownGpuValuesSayWhatAndOverWhat) {
  RankComputeUnits units;
  units.gpu_ids = {0};
  units.gpu_kernels = 4;
  units.total.gpu.wall_ns = 1000;
  units.total.gpu.kernels = 4;
  units.total.gpu.kernels_with_blocks = 4;
  units.total.gpu.sm_active_ns = 500;
  const Job job({RankSpec{0, {{"gemm", {0, 990}}}, {}}}, {units});
  const UtilizationCheck& check = job.result().ranks[0].utilizations[0];
  ASSERT_TRUE(check.value_pct.has_value());
  EXPECT_DOUBLE_EQ(*check.value_pct, 50);
  EXPECT_TRUE(Has(check.measured_as, "SM efficiency (TensorBoard plugin definition)")) << check.measured_as;
  EXPECT_TRUE(Has(check.measured_as, "time-weighted over 4 kernels on GPU 0")) << check.measured_as;
  EXPECT_TRUE(check.how_to_measure.empty()) << check.how_to_measure.view();
}

// An Ascend value names the engine most operator time ran on, as the guide reads it ("Cube 50 % < 70 %"), and the other
// engine's ratio; a known value needs no capture hint.
TEST(Utilizations, AscendValuesNameTheirEngine) {
  const Job job({RankSpec{0, {{"gemm", {0, 990}}}, {}}}, {Units(0.5)});
  const UtilizationCheck& check = job.result().ranks[0].utilizations[0];
  EXPECT_EQ(check.label, "Cube");
  EXPECT_TRUE(Has(check.measured_as, "Ascend Cube ratio (aic_mac_ratio x aicore_time")) << check.measured_as;
  EXPECT_TRUE(Has(check.measured_as, "the engine most operator time ran on")) << check.measured_as;
  EXPECT_TRUE(check.how_to_measure.empty());
}

// Two ranks, each with a 1000 us step split into `part` (`part_us` of it) and host wait, and the given
// findings.
std::vector<RankAdviceDraft> TwoRankDrafts(TimePart part, std::array<double, 2> part_us,
                                           std::array<std::vector<Finding>, 2> findings) {
  std::vector<RankAdviceDraft> drafts(2);
  for (size_t i = 0; i < drafts.size(); ++i) {
    drafts[i].advice.rank = static_cast<int64_t>(i);
    drafts[i].advice.split.steps = 1;
    drafts[i].advice.split.step_ns = Us(1000);
    drafts[i].advice.split.part_ns[static_cast<size_t>(part)] = Us(part_us[i]);
    drafts[i].advice.split.part_ns[static_cast<size_t>(TimePart::kHostWait)] = Us(1000 - part_us[i]);
    for (Finding& f : findings[i]) drafts[i].findings.push_back(RuleFinding{0, std::move(f)});
  }
  return drafts;
}

const Finding* FindIn(const AdvisorResult& result, std::string_view id) {
  for (const Finding& f : result.findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// Each rank's first catch-all idle finding takes its idle time; across the run the two share the largest
// rank's idle once rather than each keeping a full gain.
TEST(CombineAdvice, CatchAllFindingsOfOnePartShareItAcrossRanks) {
  const auto catch_all = [](std::string id, double us) {
    Finding f = Candidate(std::move(id), TimePart::kIdle, Us(us));
    f.catch_all = true;
    return f;
  };
  auto drafts = TwoRankDrafts(TimePart::kIdle, {200, 180},
                              {std::vector<Finding>{catch_all("idle.a", 300), catch_all("idle.b", 250)},
                               std::vector<Finding>{catch_all("idle.a", 150), catch_all("idle.b", 260)}});
  const AdvisorResult result = CombineAdvice(std::move(drafts), {}, AdvisorConfig(), nullptr);
  const Finding* a = FindIn(result, "idle.a");
  const Finding* b = FindIn(result, "idle.b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // Rank 0's first takes its 200 us, rank 1's first (idle.b) its 180 us: together they would claim 380.
  EXPECT_DOUBLE_EQ(a->estimated_gain_ns, Us(200));
  EXPECT_EQ(b->estimated_gain_ns, 0);
  EXPECT_FALSE(b->gain_cut.empty());
}

// A stage that computes 100 ms against the bounding stage's 200 waits for it: its compute finding gains
// nothing of the step and says why; the bounding stage's own finding keeps its gain and is the one quoted.
TEST(CombineAdvice, ComputeOnAWaitingStageSavesNoStepTime) {
  CrossRankCommunication cross;
  PipelineAnalysis p;
  PipelineStage waiting, bounding;
  waiting.stage = 0;
  waiting.ranks = {0};
  waiting.work_ns_per_step = waiting.computing_ns_per_step = Us(100);
  bounding.stage = 1;
  bounding.ranks = {1};
  bounding.work_ns_per_step = bounding.computing_ns_per_step = Us(200);
  p.stages = {waiting, bounding};
  p.slowest_stage = 1;
  p.mean_work_ns_per_step = Us(150);
  cross.pipeline = p;
  auto drafts = TwoRankDrafts(
      TimePart::kComputeBound, {100, 200},
      {std::vector<Finding>{Candidate("compute.x", TimePart::kComputeBound, Us(50))}, std::vector<Finding>{}});
  const AdvisorResult alone = CombineAdvice(drafts, {}, AdvisorConfig(), &cross);
  const Finding* f = FindIn(alone, "compute.x");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->estimated_gain_ns, 0);
  EXPECT_TRUE(f->gain_cut.starts_with("no step gain: stage 0 computes")) << f->gain_cut;
  drafts[1].findings.push_back(RuleFinding{0, Candidate("compute.x", TimePart::kComputeBound, Us(30))});
  const AdvisorResult both = CombineAdvice(std::move(drafts), {}, AdvisorConfig(), &cross);
  f = FindIn(both, "compute.x");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(30));
  EXPECT_EQ(f->evidence_rank, 1);
}

// Merged across ranks, host.launch_bound quotes one rank's figures: its title names the rank's step (once), and
// that the others wait for it where it is the straggler.
TEST(CombineAdvice, HostLaunchBoundNamesTheRankItsFiguresAreOf) {
  CrossRankCommunication cross;
  cross.ranks.resize(2);
  cross.ranks[0].rank = 0;
  cross.ranks[1].rank = 1;
  cross.straggler_rank = 1;
  cross.straggler_stands_out = true;
  Finding host = Candidate("host.launch_bound", TimePart::kHostWait, Us(500));
  host.title = "the device waits for the host 50.0 % of the step (500.0 us per step): mostly in gaps >= 1 ms";
  auto drafts =
      TwoRankDrafts(TimePart::kComputeBound, {400, 100}, {std::vector<Finding>{}, std::vector<Finding>{host}});
  const AdvisorResult result = CombineAdvice(std::move(drafts), {}, AdvisorConfig(), &cross);
  const Finding* f = FindIn(result, "host.launch_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->title.starts_with("the device waits for the host 50.0 % of rank 1's step")) << f->title;
  EXPECT_NE(f->title.find("the other ranks wait for this rank at the collectives"), std::string::npos) << f->title;
}

}  // namespace
}  // namespace tuneprof

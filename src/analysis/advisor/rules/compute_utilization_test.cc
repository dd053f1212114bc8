// compute.unit_utilization on hand-built traces, and the utilization figures it reads (a figure above
// its peak is unknown).
#include <gtest/gtest.h>

#include <optional>
#include <string_view>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

// One step of 1000 us holding one 800 us kernel, `kernel`.
Trace OneKernelStep(std::string_view kernel) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel(kernel, 0, Us(800));
  return t.Finish();
}

TEST(RuleFamilies, ComputeUnitsBelowThreshold) {
  const Trace trace = OneKernelStep("gemm");
  RankComputeUnits units;
  units.cube_ratio = 0.5;
  const AdvisorResult result = AdviseWith(trace, &units);
  const Finding* f = Find(result, "compute.unit_utilization");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kCompute);
  EXPECT_DOUBLE_EQ(*f->value, 50);
  EXPECT_DOUBLE_EQ(*f->threshold, 70);
  EXPECT_DOUBLE_EQ(Number(*f, "compute_bound_us_per_step"), 800);
  // 800 us of compute-bound work at 70 % instead of 50 %: 800 x (1 - 50/70) = 228.571 us.
  EXPECT_NEAR(f->uncapped_gain_ns, 800e3 * 20 / 70, 1e-6);
  EXPECT_NEAR(f->estimated_gain_ns, 800e3 * 20 / 70, 1e-6);

  units.cube_ratio = 0.7;  // at the threshold: quiet
  EXPECT_EQ(Find(AdviseWith(trace, &units), "compute.unit_utilization"), nullptr);
}

AscendOpTypeUnits VectorOpTypeForUnitTest(double dur_us, double vec, double mte2) {
  AscendOpTypeUnits type;
  type.type = "ForeachAddList";
  type.unit = "vector";
  type.sums.rows = 1;
  type.sums.dur_ns = static_cast<int64_t>(dur_us * 1e3);
  const std::pair<AscendRatio, double> ratios[] = {{AscendRatio::kAivVec, vec}, {AscendRatio::kAivMte2, mte2}};
  for (const auto& [ratio, value] : ratios) {
    const auto i = static_cast<size_t>(ratio);
    type.sums.weighted[i] = value * dur_us;
    type.sums.weight[i] = dur_us;
    type.sums.seen[i] = true;
  }
  return type;
}

// The compute.unit_utilization finding of the advice on `trace` with `units`, expected to name `unit` short
// at `pct` % over its own `unit_us` per step, its gain that work brought up to the 70 % threshold; nullopt
// (a failure) where the advice has no such finding.
std::optional<Finding> ShortUnitFinding(const Trace& trace, const RankComputeUnits& units, std::string_view unit,
                                        double pct, double unit_us) {
  std::optional<Finding> f = FindRaised(AdviseWith(trace, &units), "compute.unit_utilization");
  if (!f) return std::nullopt;
  EXPECT_EQ(Text(*f, "short_unit"), unit);
  EXPECT_DOUBLE_EQ(*f->value, pct);
  EXPECT_NEAR(f->uncapped_gain_ns, unit_us * 1e3 * (1 - pct / 70), 1e-3);
  return *f;
}

// Ascend: each unit is judged against its own work. The Vector ratio (11.4 %) over the vector operators'
// 600 us, not over the cube work; its operators wait on MTE2, so the advice is fusion and the fused
// optimizer, not the Cube's alignment (which the Cube, 46.9 % over its own 800 us, gets as well).
TEST(RuleFamilies, AscendUnitsJudgedEachOnItsOwnWork) {
  const Trace trace = OneKernelStep("gemm");
  RankComputeUnits units;
  units.cube_ratio = 0.469;
  units.vector_ratio = 0.114;
  units.ascend.present = true;
  units.ascend.op_types = {VectorOpTypeForUnitTest(600, 0.114, 0.98)};
  const std::optional<Finding> f = ShortUnitFinding(trace, units, "Vector", 11.4, 600);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->saves_from, TimePart::kMemoryBound);
  EXPECT_NEAR(Number(*f, "vector_us_per_step"), 600, 1e-9);
  EXPECT_NEAR(Number(*f, "cube_us_per_step"), 800, 1e-9);
  EXPECT_NEAR(Number(*f, "vector_mte_pct"), 98, 1e-9);
  EXPECT_EQ(f->strategy.rfind("The vector operators wait on their memory transfers", 0), 0u) << f->strategy;
  EXPECT_NE(f->strategy.find("fused optimizer"), std::string::npos) << f->strategy;
  EXPECT_NE(f->strategy.find("The Cube unit is short too (Cube 46.9 % over 800.0 us"), std::string::npos)
      << f->strategy;

  // The Vector unit above the threshold: the Cube alone is short, judged over its own 800 us.
  units.vector_ratio = 0.8;
  units.ascend.op_types = {VectorOpTypeForUnitTest(600, 0.8, 0.1)};
  const std::optional<Finding> cube = ShortUnitFinding(trace, units, "Cube", 46.9, 800);
  ASSERT_TRUE(cube.has_value());
  EXPECT_EQ(cube->strategy.rfind("Keep the Cube unit fed", 0), 0u) << cube->strategy;
  EXPECT_EQ(cube->strategy.find("Vector"), std::string::npos) << cube->strategy;
}

// Only memory-bound kernels: the units' utilization saves no compute-bound time, so no finding claims it
// (it printed "gain unknown" with a gain of 0 by its own model).
TEST(RuleFamilies, ComputeUnitsSayNothingWithoutComputeBoundWork) {
  RankComputeUnits units;
  units.cube_ratio = 0.3;
  const AdvisorResult result = AdviseWith(OneKernelStep("vectorized_elementwise_kernel"), &units);
  EXPECT_DOUBLE_EQ(result.ranks[0].split.part(TimePart::kComputeBound), 0);
  EXPECT_EQ(Find(result, "compute.unit_utilization"), nullptr);
}

// A figure above 100 % of its peak cannot be right: unknown and inconsistent with both numbers, never
// "ok" and never a lower bound; the same for a collective bandwidth above the link's peak.
TEST(RuleFamilies, UtilizationAbovePeakIsInconsistentNotOk) {
  const Trace trace = OneKernelStep("gemm");
  RankComputeUnits units;
  units.memory_traffic.source = "record_shapes";
  units.memory_traffic.ops = 20;
  units.memory_traffic.achieved_gb_per_s = 1735.8;
  units.memory_traffic.peak_gb_per_s = 1420;
  units.memory_traffic.utilization = 1735.8 / 1420;
  RankCommunication comm;
  comm.link.transport = "nvlink";
  comm.total.utilization = 1.3;
  comm.total.count_with_bytes = 40;
  const AdvisorResult result = AdviseWith(trace, &units, &comm);
  const UtilizationCheck& memory = result.ranks[0].utilizations[1];
  EXPECT_FALSE(memory.value_pct.has_value());
  EXPECT_FALSE(memory.Below());
  EXPECT_TRUE(memory.source.empty());
  EXPECT_EQ(memory.measured_as.rfind("unknown: inconsistent: the figure comes to 122.2 % of the peak", 0), 0u)
      << memory.measured_as;
  EXPECT_NE(memory.measured_as.find("1735.8 GB/s"), std::string::npos) << memory.measured_as;
  EXPECT_NE(memory.measured_as.find("1420 GB/s"), std::string::npos) << memory.measured_as;
  EXPECT_EQ(memory.measured_as.find("lower bound"), std::string::npos) << memory.measured_as;
  EXPECT_NE(memory.how_to_measure.view().find("--hardware"), std::string::npos) << memory.how_to_measure.view();
  const UtilizationCheck& communication = result.ranks[0].utilizations[2];
  EXPECT_FALSE(communication.value_pct.has_value());
  EXPECT_NE(communication.measured_as.find("130.0 % of the peak"), std::string::npos) << communication.measured_as;

  units.memory_traffic.utilization = 0.9;  // within the peak: a figure as before
  EXPECT_DOUBLE_EQ(*AdviseWith(trace, &units, &comm).ranks[0].utilizations[1].value_pct, 90);
}

}  // namespace
}  // namespace tuneprof::rule_test

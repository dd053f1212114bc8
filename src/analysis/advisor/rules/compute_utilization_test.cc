// compute.unit_utilization on hand-built traces, and the utilization figures it reads (a figure above
// its peak is unknown).
#include <gtest/gtest.h>

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

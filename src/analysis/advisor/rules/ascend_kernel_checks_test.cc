// compute.operator_no_bound, compute.block_dim and config.dynamic_shape on hand-built kernel_details
// rows, with the numbers computed by hand.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(PeerRules, OperatorNoBound) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  const uint32_t mac = side.KernelMetricColumn("aic_mac_ratio");
  const uint32_t vec = side.KernelMetricColumn("aiv_vec_ratio");
  const uint32_t mte2 = side.KernelMetricColumn("aiv_mte2_ratio");
  const uint32_t fixpipe = side.KernelMetricColumn("aic_fixpipe_ratio");
  // 30 us, highest ratio 0.8 (not above the bound) -> unbound.
  uint32_t r = side.AddKernelDetail(Row(side, "TransData", "AI_VECTOR_CORE", 0, 30));
  side.SetKernelMetric(vec, r, 0.2);
  side.SetKernelMetric(mte2, r, 0.8);
  side.SetKernelMetric(fixpipe, r, 0.5);
  // 30 us, mac 0.5 but fixpipe 0.82: bound by the fixpipe, which is a pipeline too.
  r = side.AddKernelDetail(Row(side, "MatMulV3", "AI_CORE", 35, 30));
  side.SetKernelMetric(mac, r, 0.5);
  side.SetKernelMetric(fixpipe, r, 0.82);
  // 30 us, mac 0.9 -> bound.
  r = side.AddKernelDetail(Row(side, "Conv2D", "AI_CORE", 40, 30));
  side.SetKernelMetric(mac, r, 0.9);
  // 20 us (not above 20 us) -> not checked.
  r = side.AddKernelDetail(Row(side, "Add", "AI_VECTOR_CORE", 80, 20));
  side.SetKernelMetric(vec, r, 0.1);
  // No counters (communication) -> not checked.
  side.AddKernelDetail(Row(side, "hcom_allReduce_", "HCCL", 100, 400));
  const AdvisorResult result = AdviseOnChip(trace);
  const Finding* f = Find(result, "compute.operator_no_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kCompute);
  ExpectFinding(*f, 1, {{"bound_ratio_pct", 80}, {"unbound_ops", 1}, {"unbound_us", 30}, {"checked_ops", 3}});
  ExpectNumbers(*f, {{"unbound_time_pct", 100.0 / 3}});
  EXPECT_EQ(Text(*f, "top_types"), "TransData x1 (30.0 us)");
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, 0);  // unknown

  side.SetKernelMetric(mte2, 0, 0.81);  // now bound: quiet
  EXPECT_EQ(Find(AdviseOnChip(trace), "compute.operator_no_bound"), nullptr);
}

TEST(PeerRules, BlockDimNotAMultipleOfTheCores) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  side.AddKernelDetail(Row(side, "MatMulV2", "AI_CORE", 0, 50, 24));                // full waves
  side.AddKernelDetail(Row(side, "Conv2D", "AI_CORE", 50, 100, 16));                // 16 of 24: 1/3 idle
  side.AddKernelDetail(Row(side, "Add", "AI_VECTOR_CORE", 150, 60, 50));            // 2 waves of 48: 46/96 idle
  side.AddKernelDetail(Row(side, "Mul", "AI_VECTOR_CORE", 210, 70, 1, "dynamic"));  // dynamic: skipped
  NpuOpRow mix = Row(side, "FlashAttentionScore", "MIX_AIC", 280, 90, 10);
  mix.mix_block_dim = 48;  // fills the vector cores
  side.AddKernelDetail(mix);
  const HardwareProfile chip = Ascend910B2();
  const AdvisorResult result = AdviseOnChip(trace, &chip);
  const Finding* f = Find(result, "compute.block_dim");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 2, {{"ops", 2}, {"ops_us", 160}, {"cube_cores", 24}, {"vector_cores", 48}});
  const double idle_us = 100.0 * (1 - 16.0 / 24) + 60.0 * (1 - 50.0 / 96);
  EXPECT_NEAR(Number(*f, "idle_core_us"), idle_us, 1e-9);
  EXPECT_NEAR(f->uncapped_gain_ns, idle_us * 1e3, 1e-6);
  EXPECT_LE(f->estimated_gain_ns, result.ranks[0].split.part(TimePart::kComputeBound));

  EXPECT_EQ(Find(AdviseOnChip(trace), "compute.block_dim"), nullptr);  // unknown chip: core counts unknown
}

TEST(PeerRules, DynamicShapeWhenEveryOperatorIsDynamic) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  side.AddKernelDetail(Row(side, "Add", "AI_VECTOR_CORE", 0, 10, 8, "dynamic"));
  side.AddKernelDetail(Row(side, "Mul", "AI_VECTOR_CORE", 10, 10, 8, "dynamic"));
  side.AddKernelDetail(Row(side, "hcom_allReduce_", "HCCL", 20, 10, 0, "N/A"));
  const AdvisorResult result = AdviseOnChip(trace);
  const Finding* f = Find(result, "config.dynamic_shape");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kConfig);
  ExpectNumbers(*f, {{"dynamic_ops", 2}, {"ops_with_state", 2}});
  EXPECT_NE(std::find(f->apis.begin(), f->apis.end(), "torch_npu.npu.set_compile_mode(jit_compile=False)"),
            f->apis.end());

  side.AddKernelDetail(Row(side, "Sub", "AI_VECTOR_CORE", 30, 10, 8, "static"));
  EXPECT_EQ(Find(AdviseOnChip(trace), "config.dynamic_shape"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

// compute.operator_efficiency on hand-built kernel_details: bound types, optimization space and its gain
// computed by hand, the shape-affinity paddings, and silence where the run has no PipeUtilization counters.
#include <gtest/gtest.h>

#include <string>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

constexpr std::string_view kOperatorEfficiencyId = "compute.operator_efficiency";

Trace OneStep() {
  HandBuiltTrace t;
  StepWithKernel(&t, 10000, 5000, "k");
  return t.Finish();
}

// kernel_details with every PipeUtilization column the rule reads.
class Details {
 public:
  explicit Details(Trace* trace) : side_(trace) {
    side_.StartKernelDetails();
    for (std::string_view name : {"aic_mac_ratio", "aic_mte2_ratio", "aic_scalar_ratio", "aic_fixpipe_ratio",
                                  "aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio", "aiv_scalar_ratio"}) {
      columns_.push_back(side_.KernelMetricColumn(name));
      names_.emplace_back(name);
    }
  }

  uint32_t Add(std::string_view name, std::string_view type, std::string_view core, double dur_us,
               std::string_view inputs, std::string_view outputs, std::string_view dtypes = "FLOAT16") {
    NpuOpRow row = npu_step::DetailRow(&side_, name, type, core, next_us_, dur_us);
    row.input_shapes = side_.Intern(inputs);
    row.output_shapes = side_.Intern(outputs);
    row.input_data_types = side_.Intern(dtypes);
    row.input_formats = side_.Intern("ND");
    next_us_ += dur_us + 1;
    const uint32_t r = side_.AddKernelDetail(row);
    for (uint32_t column : columns_) side_.SetKernelMetric(column, r, 0);
    return r;
  }

  void Set(uint32_t row, std::string_view column, double value) {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == column) side_.SetKernelMetric(columns_[i], row, value);
    }
  }

 private:
  SideTableBuilder side_;
  std::vector<uint32_t> columns_;
  std::vector<std::string> names_;
  double next_us_ = 0;
};

TEST(OperatorEfficiency, VectorSpaceAndBoundAsMsprofAnalyze) {
  Trace trace = OneStep();
  Details d(&trace);
  // Two rows of one shape: ratios averaged (vec 0.2, mte2 0.1, mte3 0.05): space max(0.5, 0.6, 0.65) = 65 %;
  // gain 200 us x (1 - 0.2 / 0.7).
  for (int i = 0; i < 2; ++i) {
    const uint32_t r = d.Add("trans_TransData_1", "TransData", "AI_VECTOR_CORE", 100, "64,3,11,11", "121,4,16,8");
    d.Set(r, "aiv_vec_ratio", i == 0 ? 0.1 : 0.3);
    d.Set(r, "aiv_mte2_ratio", 0.1);
    d.Set(r, "aiv_mte3_ratio", 0.05);
  }
  // vec + mte2 + mte3 = 0.95 >= 0.9: vec_mte2_mte3-bound although no single pipeline reaches 0.7.
  uint32_t r = d.Add("aclnnForeachAddList", "ForeachAddList", "AI_VECTOR_CORE", 300, "64;64", "64");
  d.Set(r, "aiv_vec_ratio", 0.1);
  d.Set(r, "aiv_mte2_ratio", 0.65);
  d.Set(r, "aiv_mte3_ratio", 0.2);
  // A type under 1 % of the operator time is not looked at.
  r = d.Add("add_1", "Add", "AI_VECTOR_CORE", 2, "8", "8");
  // HCCL rows count in the total only.
  d.Add("hcom_allReduce_", "hcom_allReduce_", "HCCL", 400, "", "");

  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kOperatorEfficiencyId);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kCompute);
  EXPECT_NEAR(Number(*f, "max_space_pct"), 65, 1e-9);
  ExpectNumbers(*f, {{"space_shapes", 1}, {"space_us", 200}, {"bound_shapes", 1}, {"bound_us", 300}});
  ExpectNumbers(*f, {{"analysed_us", 500}});
  EXPECT_NEAR(f->uncapped_gain_ns, Us(200) * (1 - 0.2 / 0.7), 1);
  EXPECT_EQ(f->saves_from, TimePart::kMemoryBound);
  EXPECT_NE(Text(*f, "top_bound").find("aclnnForeachAddList (ForeachAddList) [64;64] FLOAT16: vec_mte2_mte3-bound"),
            std::string::npos);
  EXPECT_NE(Text(*f, "top_space").find("trans_TransData_1 (TransData) [64,3,11,11] FLOAT16: space 65.0 %"),
            std::string::npos);
  EXPECT_EQ(Text(*f, "by_type").find("Add "), std::string::npos);

  // MTE2 alone at its limit (the three summing to 0.75): mte2-bound; nothing with space is left.
  for (uint32_t row : {0u, 1u}) {
    d.Set(row, "aiv_mte2_ratio", 0.7);
    d.Set(row, "aiv_vec_ratio", 0);
  }
  const AdvisorResult again = finding_lookup::AdviseOneRank(trace);
  const Finding* bound = Find(again, kOperatorEfficiencyId);
  ASSERT_NE(bound, nullptr);
  EXPECT_DOUBLE_EQ(Number(*bound, "space_shapes"), 0);
  EXPECT_NE(Text(*bound, "top_bound").find("[64,3,11,11] FLOAT16: mte2-bound (200.0 us)"), std::string::npos);
}

TEST(OperatorEfficiency, CubeBoundAndInnerAxisAlignment) {
  Trace trace = OneStep();
  Details d(&trace);
  // 8192x1000 @ 1000x8192 in FP16: 159 MiB moved; input 0's inner axis 1000 elements = 2000 B misses 512 B.
  uint32_t r = d.Add("mm_1", "MatMulV2", "AI_CORE", 500, "8192,1000;1000,8192", "8192,8192");
  d.Set(r, "aic_mac_ratio", 0.3);
  // 8192x1024 @ 1024x8192: aligned, mac 0.85 and mte2 0.96: both limits, "mac_and_mte2".
  r = d.Add("mm_2", "MatMulV2", "AI_CORE", 400, "8192,1024;1024,8192", "8192,8192");
  d.Set(r, "aic_mac_ratio", 0.85);
  d.Set(r, "aic_mte2_ratio", 0.96);
  // Aligned but small (under 100 MiB): not looked at.
  r = d.Add("mm_3", "BatchMatMul", "AI_CORE", 50, "4,64,1000;4,1000,64", "4,64,64");
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kOperatorEfficiencyId);
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"misaligned_shapes", 1}, {"misaligned_us", 500}});
  EXPECT_NE(
      Text(*f, "misaligned").find("mm_1 (MatMulV2) [8192,1000;1000,8192] FLOAT16: pad input 0 inner axis 1000 -> 1024"),
      std::string::npos);
  EXPECT_NE(Text(*f, "top_bound").find("mac_and_mte2-bound"), std::string::npos);
  EXPECT_DOUBLE_EQ(Number(*f, "analysed_us"), 900);
  EXPECT_EQ(Text(*f, "by_type").find("BatchMatMul"), std::string::npos);
}

TEST(OperatorEfficiency, FlashAttentionHeadDimAndSequence) {
  Trace trace = OneStep();
  Details d(&trace);
  // BSH query 2 x 1000 x 768 with 8 heads (softmax_max [2, 8, 1000, 8]): D = 96, S = 1000, both padded to 128.
  d.Add("fa_fwd", "FlashAttentionScore", "MIX_AIC", 300, "2,1000,768;2,1000,768;2,1000,768",
        "2,8,1000,8;2,8,1000,8;1;2,1000,768");
  // BNSD 1 x 8 x 2048 x 128 grad, fixpipe 0.8: fixpipe-bound.
  const uint32_t r = d.Add("fa_bwd", "FlashAttentionScoreGrad", "MIX_AIC", 600,
                           "1,8,2048,128;1,8,2048,128;1,8,2048,128;1,8,2048,128;1,8,2048,8;1,8,2048,8",
                           "1,8,2048,128;1,8,2048,128;1,8,2048,128");
  d.Set(r, "aic_fixpipe_ratio", 0.8);
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kOperatorEfficiencyId);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(Text(*f, "misaligned")
                .find("fa_fwd (FlashAttentionScore) [2,1000,768;2,1000,768;2,1000,768] FLOAT16: pad "
                      "head dim D 96 -> 128, sequence S 1000 -> 1024"),
            std::string::npos);
  EXPECT_NE(Text(*f, "top_bound").find("fa_bwd (FlashAttentionScoreGrad)"), std::string::npos);
  EXPECT_NE(Text(*f, "top_bound").find("fixpipe-bound"), std::string::npos);
}

TEST(OperatorEfficiency, DamagedShapesPadNothingAndNeverOverflow) {
  Trace trace = OneStep();
  Details d(&trace);
  // An inner axis no padding fits in int64, an unreadable dimension, a head count of 0: no padding named.
  d.Add("mm_huge", "MatMulV2", "AI_CORE", 100, "2,9223372036854775807;9223372036854775807,256", "2,256");
  d.Add("mm_text", "MatMulV2", "AI_CORE", 100, "8192,abc;1000,8192", "8192,8192");
  d.Add("fa_zero", "FlashAttentionScore", "MIX_AIC", 100, "2,1000,768", "2,0,1000,8");
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kOperatorEfficiencyId);
  ASSERT_NE(f, nullptr);  // mm_huge is looked at (its size is vast) and has space
  EXPECT_DOUBLE_EQ(Number(*f, "misaligned_shapes"), 0);
}

TEST(OperatorEfficiency, QuietWithoutPipeUtilizationOrKernelDetails) {
  Trace plain = OneStep();
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(plain), kOperatorEfficiencyId),
            nullptr);  // a GPU / CPU trace: no kernel_details

  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  side.KernelMetricColumn("aic_l0a_read_bw(GB/s)");  // a MemoryL0 run: no pipeline ratios
  NpuOpRow row;
  row.name = row.type = side.Intern("TransData");
  row.accelerator_core = side.Intern("AI_VECTOR_CORE");
  row.start_ns = 0;
  row.dur_ns = Us(100);
  side.AddKernelDetail(row);
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(trace), kOperatorEfficiencyId), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

#include "analysis/compare/operator_diff.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "analysis/core/hand_built_trace_for_test.h"
#include "text_cases.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

const OperatorDelta* FindOp(const OperatorDiff& diff, std::string_view name) {
  for (const OperatorDelta& op : diff.ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// Two steps; a kernel launched in step 1 but running after step 1's host range still belongs to step 1.
Trace TwoStepGpuTrace(std::string_view attention_kernel, int64_t attention_us) {
  HandBuiltTrace t;
  t.Step(1, Us(0), Us(100));
  t.Step(2, Us(100), Us(100));
  t.Launch(Us(10), 1);
  t.Kernel("gemm", Us(150), Us(20), 1);  // runs during step 2's host range, launched in step 1
  t.LaunchedKernel(attention_kernel, Us(20), Us(175), Us(attention_us), 2);
  t.LaunchedKernel("gemm", Us(110), Us(210), Us(30), 3);
  t.LaunchedKernel(attention_kernel, Us(120), Us(245), Us(attention_us), 4);
  t.Kernel("orphan", Us(300), Us(5));  // no launch: in no step
  return t.Finish();
}

TEST(OperatorDiffTest, DeviceWorkFollowsItsLaunchIntoSteps) {
  const Trace trace = TwoStepGpuTrace("softmax", 8);
  const OperatorTotals first = CollectOperators(trace, OperatorScope::kDevice, StepSelection::kFirst);
  EXPECT_EQ(first.steps, 1u);
  ASSERT_EQ(first.entries.size(), 2u);
  EXPECT_EQ(first.entries[0].name, "gemm");
  EXPECT_EQ(first.entries[0].count, 1u);
  EXPECT_EQ(first.entries[0].total_ns, Us(20));
  const OperatorTotals all = CollectOperators(trace, OperatorScope::kDevice, StepSelection::kAll);
  EXPECT_EQ(all.steps, 2u);
  EXPECT_EQ(all.entries[0].count, 2u);
  EXPECT_EQ(all.entries[0].total_ns, Us(50));
}

TEST(OperatorDiffTest, AddedRemovedAndPerStepFigures) {
  const OperatorTotals before =
      CollectOperators(TwoStepGpuTrace("softmax", 8), OperatorScope::kDevice, StepSelection::kAll);
  const OperatorTotals after =
      CollectOperators(TwoStepGpuTrace("flash_fwd", 3), OperatorScope::kDevice, StepSelection::kAll);
  const OperatorDiff diff = DiffOperators(before, after, OperatorScope::kDevice);
  ASSERT_EQ(diff.ops.size(), 3u);
  const OperatorDelta* softmax = FindOp(diff, "softmax");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->change, OperatorChange::kRemoved);
  EXPECT_DOUBLE_EQ(softmax->before_count, 1);  // 2 launches over 2 steps
  EXPECT_DOUBLE_EQ(softmax->before_ns, static_cast<double>(Us(8)));
  EXPECT_EQ(FindOp(diff, "flash_fwd")->change, OperatorChange::kAdded);
  EXPECT_EQ(FindOp(diff, "gemm")->change, OperatorChange::kUnchanged);
  // Sorted by |time change|: softmax (-8 us) before flash_fwd (+3 us) before gemm (0).
  EXPECT_EQ(diff.ops[0].name, "softmax");
  EXPECT_EQ(diff.ops[1].name, "flash_fwd");
  ASSERT_TRUE(diff.replaced.has_value());
  EXPECT_EQ(diff.replaced->removed, std::vector<std::string>{"softmax"});
  EXPECT_EQ(diff.replaced->added, std::vector<std::string>{"flash_fwd"});
}

TEST(OperatorDiffTest, HostOperatorsSkipStepRangesAndAnnotations) {
  HandBuiltTrace t;
  t.Step(1, Us(0), Us(100));
  t.Host(EventKind::kHostOp, "aten::bmm", Us(10), Us(5));
  t.Host(EventKind::kHostOp, "ProfilerStep#1", Us(0), Us(100));  // legacy exports write steps as ops
  t.Host(EventKind::kUserAnnotation, "forward", Us(5), Us(50));
  const Trace trace = t.Finish();
  const OperatorTotals operators = CollectOperators(trace, OperatorScope::kHostOperators, StepSelection::kAll);
  ASSERT_EQ(operators.entries.size(), 1u);
  EXPECT_EQ(operators.entries[0].name, "aten::bmm");
  const OperatorTotals host_all = CollectOperators(trace, OperatorScope::kHostAll, StepSelection::kAll);
  EXPECT_EQ(host_all.entries.size(), 3u);  // aten::bmm, ProfilerStep#1 (both the range and the op), forward
}

TEST(OperatorDiffTest, NoReplacementWhenNothingWasAdded) {
  OperatorTotals before, after;
  before.entries = {{"a", 2, 10}, {"b", 1, 5}};
  after.entries = {{"a", 3, 12}};
  const OperatorDiff diff = DiffOperators(before, after, OperatorScope::kHostOperators);
  EXPECT_FALSE(diff.replaced.has_value());
  EXPECT_EQ(FindOp(diff, "a")->change, OperatorChange::kIncreased);
  EXPECT_EQ(FindOp(diff, "b")->change, OperatorChange::kRemoved);
}

TEST(OperatorDiffTest, CategoriesFromNamesOnEveryPlatform) {
  EXPECT_EQ(CategoryOf("aten::matmul"), OperatorCategory::kMatmul);
  EXPECT_EQ(CategoryOf("ampere_sgemm_128x64_nn"), OperatorCategory::kMatmul);
  EXPECT_EQ(CategoryOf("MatMulV2"), OperatorCategory::kMatmul);  // Ascend op type
  EXPECT_EQ(CategoryOf("aten::conv2d"), OperatorCategory::kConv);
  EXPECT_EQ(CategoryOf("flash_fwd_kernel"), OperatorCategory::kAttention);
  EXPECT_EQ(CategoryOf("aten::scaled_dot_product_attention"), OperatorCategory::kAttention);
  EXPECT_EQ(CategoryOf("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), OperatorCategory::kCommunication);
  EXPECT_EQ(CategoryOf("Memcpy HtoD (Pageable -> Device)"), OperatorCategory::kMemcpy);
  EXPECT_EQ(CategoryOf("aten::softmax"), OperatorCategory::kVector);
  EXPECT_EQ(CategoryOf("aten::relu_"), OperatorCategory::kVector);
  EXPECT_EQ(CategoryOf("aten::view"), OperatorCategory::kOther);
  EXPECT_EQ(CategoryOf("my_custom_kernel"), OperatorCategory::kOther);
  EXPECT_EQ(OperatorCategoryName(OperatorCategory::kMemcpy), "memcpy");
}

// Attention kernels of other vendors and compilers fall in attention, as FlashAttention's do, so that a
// compare across vendors puts them beside each other.
TEST(OperatorDiffTest, AttentionKernelsOfEveryVendorAreAttention) {
  EXPECT_EQ(CategoryOf("attn_fwd"), OperatorCategory::kAttention);  // Triton, on ROCm
  EXPECT_EQ(CategoryOf("_attn_bwd"), OperatorCategory::kAttention);
  EXPECT_EQ(CategoryOf("fmha_cutlassF_f16_aligned_64x64_rf_sm80"), OperatorCategory::kAttention);
  EXPECT_EQ(CategoryOf("void ck_tile::kentry<ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVS>>"),
            OperatorCategory::kAttention);
  EXPECT_EQ(CategoryOf("aiter::mha_fwd_kernel"), OperatorCategory::kAttention);
  EXPECT_EQ(CategoryOf("aten::view"), OperatorCategory::kOther);
}

// One step: matmul (holding its bmm), then softmax; a second thread runs a relu.
Trace NestedHostTrace() {
  HandBuiltTrace t;
  t.Step(1, Us(0), Us(100));
  t.Host(EventKind::kHostOp, "aten::matmul", Us(10), Us(50));
  t.Host(EventKind::kHostOp, "aten::bmm", Us(15), Us(40));
  t.Host(EventKind::kHostOp, "aten::softmax", Us(70), Us(10));
  t.Host(EventKind::kHostOp, "aten::softmax", Us(200), Us(10));  // outside the step
  return t.Finish();
}

TEST(OperatorDiffTest, CategoriesCountOutermostOperatorsOnce) {
  const Trace trace = NestedHostTrace();
  const CategoryTotals totals = CollectCategories(trace, OperatorScope::kHostOperators, StepSelection::kAll);
  EXPECT_EQ(totals.steps, 1u);
  const size_t matmul = static_cast<size_t>(OperatorCategory::kMatmul);
  const size_t vector = static_cast<size_t>(OperatorCategory::kVector);
  EXPECT_EQ(totals.count[matmul], 1u);  // the bmm is inside the matmul
  EXPECT_EQ(totals.total_ns[matmul], Us(50));
  EXPECT_EQ(totals.count[vector], 1u);
  EXPECT_EQ(totals.total_ns[vector], Us(10));

  CategoryTotals after = totals;
  after.count[matmul] = 0;
  after.total_ns[matmul] = 0;
  const size_t attention = static_cast<size_t>(OperatorCategory::kAttention);
  after.count[attention] = 2;
  after.total_ns[attention] = Us(30);
  const std::vector<CategoryDelta> diff = DiffCategories(totals, after);
  ASSERT_EQ(diff.size(), 3u);  // matmul, attention, vector: the enum's order
  EXPECT_EQ(diff[0].category, OperatorCategory::kMatmul);
  EXPECT_DOUBLE_EQ(diff[0].after_ns, 0);
  EXPECT_EQ(diff[1].category, OperatorCategory::kAttention);
  EXPECT_DOUBLE_EQ(diff[1].after_count, 2);
  EXPECT_EQ(diff[2].category, OperatorCategory::kVector);
}

TEST(OperatorDiffTest, OutermostAmongTheSelectedOnly) {
  const Trace trace = NestedHostTrace();
  // The bmm alone is selected: nothing selected holds it, so it counts.
  const auto bmm = OutermostOperators(trace, OperatorScope::kHostOperators, StepSelection::kAll,
                                      [](std::string_view name) { return name == "aten::bmm"; });
  ASSERT_EQ(bmm.size(), 1u);
  EXPECT_EQ(trace.events().dur_ns[bmm[0]], Us(40));
  const auto both = OutermostOperators(trace, OperatorScope::kHostOperators, StepSelection::kAll,
                                       [](std::string_view name) { return name != "aten::softmax"; });
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(trace.events().dur_ns[both[0]], Us(50));
}

TEST(OperatorDiffTest, HcclOperatorsCompareWithoutTheirRunIds) {
  const test_support::TextCase<std::string_view> kCases[] = {
      {"hcom_allReduce__586_0_1", "hcom_allReduce"},
      {" hcom_broadcast__210_3_1 ", "hcom_broadcast"},
      {"hcom_send", "hcom_send"},
      {"aten::mm", "aten::mm"},
      {"my__op", "my__op"},
  };
  test_support::ExpectEachCase(ComparableName, kCases);
}

}  // namespace
}  // namespace tuneprof

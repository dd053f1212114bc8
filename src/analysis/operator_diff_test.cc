#include "analysis/operator_diff.h"

#include <gtest/gtest.h>

#include "analysis/hand_built_trace_for_test.h"

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
  t.Launch(Us(20), 2);
  t.Kernel(attention_kernel, Us(175), Us(attention_us), 2);
  t.Launch(Us(110), 3);
  t.Kernel("gemm", Us(210), Us(30), 3);
  t.Launch(Us(120), 4);
  t.Kernel(attention_kernel, Us(245), Us(attention_us), 4);
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

}  // namespace
}  // namespace tuneprof

// What a rank ran over its steps: host APIs with calls, time and self time, device operators by name.
#include "analysis/comm/step_work.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

const NamedWork* Named(const std::vector<NamedWork>& list, std::string_view name) {
  for (const NamedWork& w : list) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

// Two steps; work before the first step is left out. aten::linear holds aten::mm (self time outside it).
TEST(StepWorkTest, HostApisAndDeviceOperatorsOfTheSteps) {
  HandBuiltTrace hand;
  hand.Host(EventKind::kHostOp, "aten::zero_", Us(10), Us(5));  // before the steps
  hand.Kernel("early_kernel", Us(12), Us(5), kNoId);
  for (int step = 0; step < 2; ++step) {
    const int64_t at = Us(100 + 1000 * step);
    hand.Step(step + 1, at, Us(900));
    hand.Host(EventKind::kHostOp, "ProfilerStep#" + std::to_string(step + 1), at, Us(900));  // as torch_npu writes it
    hand.Host(EventKind::kHostOp, "aten::linear", at + Us(10), Us(100));
    hand.Host(EventKind::kHostOp, "aten::mm", at + Us(20), Us(60));
    hand.LaunchedKernel("sgemm", at + Us(30), at + Us(200), Us(300), 10 + step);
  }
  const Trace trace = hand.Finish();
  const RankStepWork work = MeasureStepWork(trace, ComputeTimeBreakdown(trace), BuildHostOpTree(trace));

  const NamedWork* linear = Named(work.host_apis, "aten::linear");
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ(linear->calls, 2u);
  EXPECT_EQ(linear->total_ns, Us(200));
  EXPECT_EQ(linear->self_ns, Us(80));  // (100 - the 60 of aten::mm) per step
  const NamedWork* mm = Named(work.host_apis, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->calls, 2u);
  EXPECT_EQ(Named(work.host_apis, "aten::zero_"), nullptr);
  EXPECT_EQ(Named(work.host_apis, "ProfilerStep#1"), nullptr);  // the step, not an API
  ASSERT_EQ(work.device_ops.size(), 1u);
  EXPECT_EQ(work.device_ops[0].name, "sgemm");
  EXPECT_EQ(work.device_ops[0].calls, 2u);
  EXPECT_EQ(work.device_ops[0].total_ns, Us(600));
}

TEST(StepWorkTest, ListedMostTimeFirstAndCapped) {
  HandBuiltTrace hand;
  hand.Step(1, 0, Us(100000));
  for (size_t i = 0; i < kMaxStepWorkNames + 10; ++i) {
    hand.Host(EventKind::kHostOp, "op" + std::to_string(i), Us(10 + 20 * static_cast<double>(i)), Us(1 + i % 7));
  }
  const Trace trace = hand.Finish();
  const RankStepWork work = MeasureStepWork(trace, ComputeTimeBreakdown(trace), BuildHostOpTree(trace));
  ASSERT_EQ(work.host_apis.size(), kMaxStepWorkNames);
  for (size_t i = 1; i < work.host_apis.size(); ++i) {
    const NamedWork& a = work.host_apis[i - 1];
    const NamedWork& b = work.host_apis[i];
    EXPECT_TRUE(a.total_ns > b.total_ns || (a.total_ns == b.total_ns && a.name < b.name));
  }
}

}  // namespace
}  // namespace tuneprof

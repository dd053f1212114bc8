#include "analysis/breakdown/ascend_step_breakdown.h"

#include <gtest/gtest.h>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

HandBuiltTrace TorchNpuTrace() {
  HandBuiltTrace hand;
  hand.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  return hand;
}

// Two steps. Step 1 launches compute, an all-reduce partly under it, more compute, and an unlinked copy;
// step 2 compute, a pipeline receive (bubble) and compute. Launches stand in for CANN calls.
Trace TwoSteps() {
  HandBuiltTrace hand = TorchNpuTrace();
  hand.Step(1, Us(0), Us(100));
  hand.Step(2, Us(100), Us(100));
  hand.LaunchedKernel("a", Us(10), Us(20), Us(20), 1);
  hand.Launch(Us(20), 2);
  hand.Device(EventKind::kCollective, "hcom_allReduce__1_0_1", Us(30), Us(30), 2);
  hand.LaunchedKernel("b", Us(50), Us(70), Us(10), 3);
  hand.Device(EventKind::kMemcpy, "MEMCPY_ASYNC", Us(85), Us(5));
  hand.LaunchedKernel("d", Us(110), Us(130), Us(20), 4);
  hand.Launch(Us(120), 5);
  hand.Device(EventKind::kCollective, "hcom_receive__2_0_1", Us(150), Us(20), 5);
  hand.LaunchedKernel("e", Us(130), Us(180), Us(10), 6);
  return hand.Finish();
}

TEST(AscendStepBreakdownTest, StepRangesRunFromFirstLaunchToLastEndOrHostEnd) {
  const Trace trace = TwoSteps();
  const std::vector<TorchNpuStepRange> ranges = TorchNpuStepRanges(trace, FindLaunchTimes(trace));
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].start_ns, Us(20));
  EXPECT_EQ(ranges[0].end_ns, Us(100));  // host end outlasts b's end (80)
  EXPECT_EQ(ranges[1].start_ns, Us(130));
  EXPECT_EQ(ranges[1].end_ns, Us(200));
}

TEST(AscendStepBreakdownTest, SplitFollowsTorchNpuDefinitions) {
  const RankBreakdown rank = ComputeTimeBreakdown(TwoSteps());
  EXPECT_EQ(rank.definitions, StepDefinitions::kTorchNpu);
  ASSERT_EQ(rank.steps.size(), 2u);

  const StepBreakdown& first = rank.steps[0];
  EXPECT_EQ(first.step, 1);
  EXPECT_EQ(first.device_events, 4u);
  EXPECT_EQ(first.computing_ns, Us(30));
  EXPECT_EQ(first.communication_ns, Us(30));
  EXPECT_EQ(first.communication_not_overlapped_ns, Us(20));
  EXPECT_EQ(first.overlapped_ns, Us(10));
  // Free: [60, 70) and the gap [80, 130) after the step's last busy period, which starts inside it.
  EXPECT_EQ(first.free_ns, Us(60));
  EXPECT_EQ(first.wall_ns, Us(110));  // Stage: [20, 130)
  EXPECT_EQ(first.wall_ns, first.computing_ns + first.communication_not_overlapped_ns + first.free_ns);
  EXPECT_EQ(first.memcpy_ns, Us(5));  // inside Free, as torch_npu counts it
  EXPECT_EQ(first.bubble_ns, 0);
  EXPECT_EQ(first.preparing_ns, Us(20));

  const StepBreakdown& second = rank.steps[1];
  EXPECT_EQ(second.step, 2);
  EXPECT_EQ(second.device_events, 3u);
  EXPECT_EQ(second.computing_ns, Us(30));
  EXPECT_EQ(second.communication_ns, Us(20));
  EXPECT_EQ(second.communication_not_overlapped_ns, 0);  // torch_npu's 20, less the bubble (its own part)
  EXPECT_EQ(second.overlapped_ns, 0);
  EXPECT_EQ(second.free_ns, Us(10));
  EXPECT_EQ(second.bubble_ns, Us(20));
  EXPECT_EQ(second.wall_ns, Us(60));  // the step, Stage + Bubble: E2E [130, 190)
  EXPECT_EQ(second.wall_ns,
            second.computing_ns + second.communication_not_overlapped_ns + second.free_ns + second.bubble_ns);
  EXPECT_EQ(second.preparing_ns, Us(30));

  EXPECT_EQ(rank.total.free_ns, Us(70));
  EXPECT_EQ(rank.total.bubble_ns, Us(20));
}

TEST(AscendStepBreakdownTest, WithoutStepsEverythingIsOneWindow) {
  HandBuiltTrace hand = TorchNpuTrace();
  hand.Kernel("a", Us(0), Us(10));
  hand.Device(EventKind::kCollective, "hcom_allGather__1_0_1", Us(5), Us(20));
  hand.Kernel("b", Us(40), Us(10));
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
  ASSERT_EQ(rank.steps.size(), 1u);
  const StepBreakdown& s = rank.steps[0];
  EXPECT_FALSE(s.step.has_value());
  EXPECT_EQ(s.computing_ns, Us(20));
  EXPECT_EQ(s.communication_not_overlapped_ns, Us(15));
  EXPECT_EQ(s.free_ns, Us(15));
  EXPECT_EQ(s.wall_ns, Us(50));
  EXPECT_EQ(s.preparing_ns, kNoId);
}

// A step that launched nothing keeps its host range (torch_npu would drop every step range instead).
TEST(AscendStepBreakdownTest, StepWithoutLaunchesKeepsItsHostRange) {
  HandBuiltTrace hand = TorchNpuTrace();
  hand.Step(3, Us(0), Us(100));
  hand.Kernel("a", Us(50), Us(10));
  const Trace trace = hand.Finish();
  const std::vector<TorchNpuStepRange> ranges = TorchNpuStepRanges(trace, FindLaunchTimes(trace));
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].start_ns, Us(0));
  EXPECT_EQ(ranges[0].end_ns, Us(100));
  EXPECT_EQ(ComputeTimeBreakdown(trace).steps.at(0).computing_ns, Us(10));
}

}  // namespace
}  // namespace tuneprof

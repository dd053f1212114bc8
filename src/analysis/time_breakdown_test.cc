#include "analysis/time_breakdown.h"

#include <gtest/gtest.h>

#include "analysis/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

void ExpectPartsAddUpToWall(const StepBreakdown& s) {
  EXPECT_EQ(s.wall_ns, s.computing_ns + s.communication_not_overlapped_ns + s.memcpy_ns + s.other_ns + s.free_ns);
}

TEST(TimeBreakdownTest, TraceWithoutStepsIsOneWindow) {
  HandBuiltTrace hand;
  hand.Kernel("sgemm", Us(0), Us(10));
  hand.Kernel("ncclDevKernel_AllReduce", Us(5), Us(15));              // 5 us under compute
  hand.Device(EventKind::kMemcpy, "Memcpy DtoH", Us(18), Us(7));      // 2 us under communication
  hand.Device(EventKind::kSync, "Event Sync", Us(30), Us(2));
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());

  ASSERT_EQ(rank.steps.size(), 1u);
  const StepBreakdown& s = rank.steps[0];
  EXPECT_FALSE(s.step.has_value());
  EXPECT_EQ(s.device_events, 4u);
  EXPECT_EQ(s.wall_ns, Us(32));
  EXPECT_EQ(s.computing_ns, Us(10));
  EXPECT_EQ(s.communication_ns, Us(15));
  EXPECT_EQ(s.overlapped_ns, Us(5));
  EXPECT_EQ(s.communication_not_overlapped_ns, Us(10));
  EXPECT_EQ(s.memory_ns, Us(7));
  EXPECT_EQ(s.memcpy_ns, Us(5));
  EXPECT_EQ(s.other_ns, Us(2));
  EXPECT_EQ(s.free_ns, Us(5));  // [25, 30)
  ExpectPartsAddUpToWall(s);
}

TEST(TimeBreakdownTest, OverlappingKernelsOnTwoStreamsAreCountedOnce) {
  HandBuiltTrace hand;
  hand.Device(EventKind::kKernel, "a", Us(0), Us(10), kNoId, /*stream=*/7);
  hand.Device(EventKind::kKernel, "b", Us(4), Us(10), kNoId, /*stream=*/8);
  const StepBreakdown s = ComputeTimeBreakdown(hand.Finish()).steps.at(0);
  EXPECT_EQ(s.computing_ns, Us(14));
  EXPECT_EQ(s.free_ns, 0);
}

// A kernel belongs to the step whose host range launched it, even when it runs after that range.
TEST(TimeBreakdownTest, KernelsFollowTheStepThatLaunchedThem) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(100));
  hand.Step(2, Us(100), Us(100));
  hand.Launch(Us(50), 1);
  hand.Kernel("late_kernel_of_step_1", Us(120), Us(30), 1);
  hand.Launch(Us(110), 2);
  hand.Kernel("kernel_of_step_2", Us(150), Us(10), 2);
  hand.Kernel("unlinked_kernel", Us(170), Us(10));  // no launch: its own start places it
  hand.Launch(Us(250), 3);
  hand.Kernel("launched_after_every_step", Us(260), Us(10), 3);
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());

  ASSERT_EQ(rank.steps.size(), 2u);
  EXPECT_EQ(rank.device_events, 4u);
  EXPECT_EQ(rank.device_events_outside_steps, 1u);
  const StepBreakdown& first = rank.steps[0];
  EXPECT_EQ(first.step, 1);
  EXPECT_EQ(first.host_start_ns, Us(0));
  EXPECT_EQ(first.host_end_ns, Us(100));
  EXPECT_EQ(first.device_events, 1u);
  EXPECT_EQ(first.device_start_ns, Us(120));
  EXPECT_EQ(first.wall_ns, Us(30));
  EXPECT_EQ(first.computing_ns, Us(30));
  const StepBreakdown& second = rank.steps[1];
  EXPECT_EQ(second.step, 2);
  EXPECT_EQ(second.device_events, 2u);
  EXPECT_EQ(second.wall_ns, Us(30));  // [150, 180)
  EXPECT_EQ(second.computing_ns, Us(20));
  EXPECT_EQ(second.free_ns, Us(10));
  ExpectPartsAddUpToWall(first);
  ExpectPartsAddUpToWall(second);
}

TEST(TimeBreakdownTest, StepWithoutDeviceWorkIsReportedEmpty) {
  HandBuiltTrace hand;
  hand.Step(7, Us(0), Us(100));
  hand.Host(EventKind::kHostOp, "aten::add", Us(10), Us(5));
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
  ASSERT_EQ(rank.steps.size(), 1u);
  EXPECT_EQ(rank.steps[0].step, 7);
  EXPECT_EQ(rank.steps[0].device_events, 0u);
  EXPECT_EQ(rank.steps[0].wall_ns, 0);
  EXPECT_EQ(rank.steps[0].device_start_ns, kNoId);
}

TEST(TimeBreakdownTest, GpuAnnotationsDoNotCountAsWork) {
  HandBuiltTrace hand;
  hand.Device(EventKind::kGpuAnnotation, "forward", Us(0), Us(100));
  hand.Kernel("k", Us(40), Us(10));
  const StepBreakdown s = ComputeTimeBreakdown(hand.Finish()).steps.at(0);
  EXPECT_EQ(s.device_events, 1u);
  EXPECT_EQ(s.wall_ns, Us(10));
}

TEST(TimeBreakdownTest, CommunicationFullyHiddenUnderCompute) {
  HandBuiltTrace hand;
  hand.Kernel("sgemm", Us(0), Us(100));
  hand.Kernel("ncclKernel_AllReduce", Us(10), Us(20));
  hand.Kernel("ncclKernel_AllReduce", Us(50), Us(20));
  const StepBreakdown s = ComputeTimeBreakdown(hand.Finish()).steps.at(0);
  EXPECT_EQ(s.communication_ns, Us(40));
  EXPECT_EQ(s.overlapped_ns, Us(40));
  EXPECT_EQ(s.communication_not_overlapped_ns, 0);
  ExpectPartsAddUpToWall(s);
}

}  // namespace
}  // namespace tuneprof

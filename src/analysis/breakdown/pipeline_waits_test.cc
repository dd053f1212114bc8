#include "analysis/breakdown/pipeline_waits.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// A torch_npu rank with only step_trace_time.csv: step 1 of Computing 100, Communication(Not Overlapped)
// 70, Free 10 and the given Stage and Bubble.
Trace ReportedRank(int64_t stage_us, int64_t bubble_us) {
  ReportedStepTime step;
  step.step = 1;
  step.computing_ns = Us(100);
  step.communication_not_overlapped_ns = Us(70);
  step.free_ns = Us(10);
  step.stage_ns = Us(stage_us);
  step.bubble_ns = Us(bubble_us);
  return hand_built::ReportedStepOnlyRank(step);
}

void AddOp(Trace* trace, std::string_view step, std::string_view name, bool p2p, double wait_ms) {
  SideTableBuilder side(trace);
  HcclOpTime op;
  op.step = side.Intern(step);
  op.op_name = side.Intern(name);
  op.p2p = p2p;
  op.wait_ms = wait_ms;
  side.mutable_communication()->ops.push_back(op);
}

void ExpectPartsAddUpToStep(const StepBreakdown& s) {
  EXPECT_EQ(s.wall_ns, s.computing_ns + s.communication_not_overlapped_ns + s.free_ns + s.bubble_ns);
}

// torch_npu's Bubble (receive waits) is out of Stage and inside Communication(Not Overlapped): the step
// is Stage + Bubble, and the exposed communication is the rest.
TEST(PipelineWaitsTest, BubbleJoinsTheStepAndLeavesTheExposedCommunication) {
  const RankBreakdown b = ComputeTimeBreakdown(ReportedRank(120, 60));
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_EQ(b.steps[0].wall_ns, Us(180));
  EXPECT_EQ(b.steps[0].bubble_ns, Us(60));
  EXPECT_EQ(b.steps[0].communication_not_overlapped_ns, Us(10));
  ExpectPartsAddUpToStep(b.steps[0]);
  EXPECT_EQ(b.total.wall_ns, Us(180));
  EXPECT_EQ(b.total.communication_not_overlapped_ns, Us(10));
}

// Bubble 0 (batchSendRecv): Stage is the whole step and the p2p ops' Wait Time of the step is the bubble;
// collectives' waits and other steps' are not.
TEST(PipelineWaitsTest, P2pWaitsAreTheBubbleWhereTorchNpuWritesNone) {
  Trace trace = ReportedRank(180, 0);
  AddOp(&trace, "step1", "hcom_batchSendRecv__321_0_1", false, 0.025);
  AddOp(&trace, "step1", "hcom_receive__321_1_1", true, 0.015);
  AddOp(&trace, "step1", "hcom_allReduce__586_0_1", false, 0.030);
  AddOp(&trace, "step2", "hcom_batchSendRecv__321_2_1", false, 0.050);
  const RankBreakdown b = ComputeTimeBreakdown(trace);
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_EQ(b.steps[0].wall_ns, Us(180));
  EXPECT_EQ(b.steps[0].bubble_ns, Us(40));
  EXPECT_EQ(b.steps[0].communication_not_overlapped_ns, Us(30));
  ExpectPartsAddUpToStep(b.steps[0]);
}

// A wait longer than the exposed communication that holds it is cut to it: no part goes below 0.
TEST(PipelineWaitsTest, TheBubbleNeverExceedsTheCommunicationHoldingIt) {
  Trace trace = ReportedRank(180, 0);
  AddOp(&trace, "step1", "hcom_receive__321_1_1", true, 0.5);
  const RankBreakdown b = ComputeTimeBreakdown(trace);
  EXPECT_EQ(b.steps[0].bubble_ns, Us(70));
  EXPECT_EQ(b.steps[0].communication_not_overlapped_ns, 0);
}

TEST(PipelineWaitsTest, StepKeys) {
  Trace trace = ReportedRank(180, 0);
  AddOp(&trace, "step", "hcom_send__1", true, 0.001);
  AddOp(&trace, "step12", "hcom_send__2", true, 0.002);
  AddOp(&trace, "stepx", "hcom_send__3", true, 0.004);
  const auto waits = P2pWaitPerStep(trace);
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits.at(kNoId), Us(1));
  EXPECT_EQ(waits.at(12), Us(2));
}

// A damaged communication.json's waits beyond any run's length (or summing past int64) are no bubble, and
// the sums never wrap.
TEST(PipelineWaitsTest, WaitsBeyondAnyRunAreNoBubble) {
  Trace trace = ReportedRank(180, 0);
  AddOp(&trace, "step1", "hcom_batchSendRecv__1_0_1", true, 9.2e12);
  AddOp(&trace, "step1", "hcom_batchSendRecv__1_1_1", true, -9.2e12);
  AddOp(&trace, "step1", "hcom_receive__1_2_1", true, 0.04);
  const RankBreakdown b = ComputeTimeBreakdown(trace);
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_EQ(b.steps[0].bubble_ns, Us(40));
  ExpectPartsAddUpToStep(b.steps[0]);
}

}  // namespace
}  // namespace tuneprof

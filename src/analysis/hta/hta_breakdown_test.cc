#include "analysis/hta/hta_breakdown.h"

#include <gtest/gtest.h>

#include <vector>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

HtaRankBreakdown OneRank(HandBuiltTrace* hand) {
  std::vector<Trace> traces;
  traces.push_back(hand->Finish());
  std::vector<HtaRankBreakdown> result = ComputeHtaBreakdown(traces);
  EXPECT_EQ(result.size(), 1u);
  return result.at(0);
}

// HTA counts communication hidden under compute as compute; non-compute is what is left of the span.
TEST(HtaBreakdownTest, TemporalBreakdownAndOverlap) {
  HandBuiltTrace hand;
  hand.Kernel("sgemm", Us(0), Us(10));
  hand.Kernel("ncclKernel_AllReduce", Us(5), Us(15));
  hand.Kernel("relu", Us(30), Us(10));
  const HtaRankBreakdown r = OneRank(&hand);
  ASSERT_TRUE(r.temporal.has_value());
  EXPECT_EQ(r.gpu_events, 3u);
  EXPECT_FALSE(r.last_step_dropped);
  EXPECT_DOUBLE_EQ(r.temporal->kernel_time_us, 40);
  EXPECT_DOUBLE_EQ(r.temporal->idle_us, 10);
  EXPECT_DOUBLE_EQ(r.temporal->compute_us, 20);
  EXPECT_DOUBLE_EQ(r.temporal->non_compute_us, 10);
  EXPECT_DOUBLE_EQ(r.temporal->idle_pct, 25);
  ASSERT_TRUE(r.comm_comp_overlap_pct.has_value());
  EXPECT_DOUBLE_EQ(*r.comm_comp_overlap_pct, 33.33);  // 5 of 15 us, rounded to 2 decimals
}

TEST(HtaBreakdownTest, OverlapIsNaNWithoutCommunication) {
  HandBuiltTrace hand;
  hand.Kernel("sgemm", Us(0), Us(10));
  hand.Device(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", Us(20), Us(5));
  const HtaRankBreakdown r = OneRank(&hand);
  EXPECT_FALSE(r.comm_comp_overlap_pct.has_value());
  EXPECT_DOUBLE_EQ(r.temporal->non_compute_us, 5);
}

// With >= 2 steps HTA drops host rows from the last step's start on, and GPU rows whose launch went; one
// step keeps everything, a kernel without a launch included.
TEST(HtaBreakdownTest, TheLastStepIsDroppedOnlyWhenThereAreTwo) {
  struct Case {
    int steps;
    double no_launch_at_us;
    bool dropped;
    size_t gpu_events;
    double kernel_time_us;
  };
  for (const Case& c : {Case{2, 40, true, 1, 10}, Case{1, 140, false, 2, 130}}) {
    SCOPED_TRACE(c.steps);
    HandBuiltTrace hand;
    hand.Step(1, Us(0), Us(100));
    hand.LaunchedKernel("k1", Us(10), Us(20), Us(10), 1);
    if (c.steps == 2) {
      hand.Step(2, Us(100), Us(100));
      hand.LaunchedKernel("k2", Us(120), Us(130), Us(10), 2);
    }
    hand.Kernel("no_launch", Us(c.no_launch_at_us), Us(10), 99);
    const HtaRankBreakdown r = OneRank(&hand);
    EXPECT_EQ(r.last_step_dropped, c.dropped);
    EXPECT_EQ(r.gpu_events, c.gpu_events);
    EXPECT_DOUBLE_EQ(r.temporal->kernel_time_us, c.kernel_time_us);
  }
}

// The step-name count is global: one step on each of two ranks with different numbers is two names.
TEST(HtaBreakdownTest, StepNamesAreCountedOverAllRanks) {
  std::vector<Trace> traces;
  for (int64_t step : {1, 2}) {
    HandBuiltTrace hand;
    hand.Step(step, Us(0), Us(100));
    hand.LaunchedKernel("k", Us(10), Us(20), Us(10), 1);
    traces.push_back(hand.Finish());
  }
  const std::vector<HtaRankBreakdown> result = ComputeHtaBreakdown(traces);
  ASSERT_EQ(result.size(), 2u);
  for (const HtaRankBreakdown& r : result) {
    EXPECT_TRUE(r.last_step_dropped);
    EXPECT_EQ(r.gpu_events, 0u);  // each rank's only step is its last
    EXPECT_FALSE(r.temporal.has_value());
  }
}

// Sub-µs traces: ts rounded up, end = ts + dur rounded down, on the text timestamps (HTA ignores
// baseTimeNanoseconds, so a base that makes the model's ns whole µs must not hide the fraction).
TEST(HtaBreakdownTest, FractionalTimestampsAreRoundedLikeHta) {
  HandBuiltTrace hand;
  hand.mutable_metadata()->base_time_ns = 500;
  hand.Kernel("a", Us(10.5), Us(5.3));   // [11, floor(15.8) = 15)
  hand.Kernel("b", Us(20.25), Us(1.5));  // [21, floor(21.75) = 21): zero length
  const HtaRankBreakdown r = OneRank(&hand);
  EXPECT_TRUE(r.rounded_to_us);
  EXPECT_DOUBLE_EQ(r.temporal->kernel_time_us, 10);  // 21 - 11
  EXPECT_DOUBLE_EQ(r.temporal->compute_us, 4);
  EXPECT_DOUBLE_EQ(r.temporal->idle_us, 6);
}

TEST(HtaBreakdownTest, WholeMicrosecondTracesAreNotRounded) {
  HandBuiltTrace hand;
  hand.Kernel("a", Us(10), Us(5.5));
  const HtaRankBreakdown r = OneRank(&hand);
  EXPECT_FALSE(r.rounded_to_us);
  EXPECT_DOUBLE_EQ(r.temporal->kernel_time_us, 5.5);
}

// HTA's regexes, not ours: a memcpy named like a kernel is MEMORY, "Sync" anywhere is not compute.
TEST(HtaBreakdownTest, KernelTypesFollowHtaNames) {
  HandBuiltTrace hand;
  hand.Kernel("cudaStreamSynchronizeLikeKernel", Us(0), Us(10));  // matches (^.*Sync): OTHER
  hand.Kernel("gemm", Us(20), Us(10));
  const HtaRankBreakdown r = OneRank(&hand);
  EXPECT_DOUBLE_EQ(r.temporal->compute_us, 10);
  EXPECT_DOUBLE_EQ(r.temporal->non_compute_us, 10);
}

}  // namespace
}  // namespace tuneprof

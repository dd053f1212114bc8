#include "analysis/breakdown/host_side.h"

#include <gtest/gtest.h>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// Stream 7 runs k1, k2 back to back, then idles until k3's launch; k4 on stream 8 was launched long before
// the device drained, so the idle before it is the device's own doing, not the host's.
Trace TwoStreamTrace() {
  HandBuiltTrace hand;
  hand.Launch(Us(0), 1);
  hand.Device(EventKind::kKernel, "k1", Us(10), Us(10), 1, /*stream=*/7);
  hand.Launch(Us(5), 2);
  hand.Device(EventKind::kKernel, "k2", Us(20), Us(10), 2, /*stream=*/7);
  hand.Launch(Us(40), 3);
  hand.Device(EventKind::kKernel, "k3", Us(45), Us(5), 3, /*stream=*/7);
  hand.Launch(Us(42), 4);
  hand.Device(EventKind::kKernel, "k4", Us(60), Us(10), 4, /*stream=*/8);
  return hand.Finish();
}

// A kernel that starts before its launch (the host's and the device's clocks skewed) was started by the
// device as soon as it could be seen: its latency counts as 0, and one warning gives the count and the
// largest lead. Leaving such launches out would keep only the launches onto a busy device.
TEST(HostSideTest, WorkStartingBeforeItsLaunchCountsAsZeroLatencyWithAWarning) {
  HandBuiltTrace hand;
  hand.LaunchedKernel("k1", Us(0), Us(10), Us(10), 1);
  hand.Launch(Us(50), 2);
  hand.Kernel("early", Us(30), Us(5), 2);  // 20 us before its launch
  hand.LaunchedKernel("early2", Us(60), Us(59), Us(5), 3);
  const RankBreakdown b = ComputeTimeBreakdown(hand.Finish());
  const HostSideBreakdown& h = b.steps.at(0).host;
  EXPECT_EQ(h.launched_events, 3u);
  ASSERT_TRUE(h.launch_latency.has_value());
  EXPECT_DOUBLE_EQ(h.launch_latency->mean_ns, Us(10) / 3.0);
  EXPECT_DOUBLE_EQ(h.launch_latency->p50_ns, 0);
  EXPECT_DOUBLE_EQ(h.launch_latency->p95_ns, 0.9 * Us(10));
  std::string all;
  for (const std::string& w : b.warnings) all += w + "\n";
  EXPECT_NE(all.find("hand-built.json: 2 of 3 launched device events start up to 20.0 us before their launch (the "
                     "host's and the device's clocks disagree by that much): their launch latency is counted as 0"),
            std::string::npos)
      << all;
}

// One early event of one is said in the singular.
TEST(HostSideTest, OneEventStartingBeforeItsLaunchIsSaidInTheSingular) {
  HandBuiltTrace hand;
  hand.Launch(Us(50), 1);
  hand.Kernel("early", Us(49) + 950, Us(5), 1);  // 50 ns early: rounds to 0.1 us
  const RankBreakdown b = ComputeTimeBreakdown(hand.Finish());
  ASSERT_TRUE(b.steps.at(0).host.launch_latency.has_value());
  EXPECT_DOUBLE_EQ(b.steps.at(0).host.launch_latency->mean_ns, 0);
  std::string all;
  for (const std::string& w : b.warnings) all += w + "\n";
  EXPECT_NE(all.find("1 of 1 launched device event starts up to 0.1 us before its launch"), std::string::npos) << all;
}

TEST(HostSideTest, MeasuresWaitLatencyGapsAndQueue) {
  const HostSideBreakdown h = ComputeTimeBreakdown(TwoStreamTrace()).steps.at(0).host;
  EXPECT_EQ(h.launched_events, 4u);
  EXPECT_EQ(h.host_wait_ns, Us(15));  // [30, 45): k3 launched at 40, after the drain at 30
  EXPECT_EQ(h.host_wait_gaps, 1u);
  ASSERT_TRUE(h.launch_latency.has_value());
  EXPECT_DOUBLE_EQ(h.launch_latency->mean_ns, Us(12));  // latencies 10, 15, 5, 18 us
  EXPECT_DOUBLE_EQ(h.launch_latency->p50_ns, Us(12.5));
  EXPECT_NEAR(h.launch_latency->p95_ns, Us(17.55), 1e-6);
  EXPECT_EQ(h.gaps_ns, Us(15));  // stream 7 only: k2 -> k3
  EXPECT_EQ(h.gap_count, 1u);
  EXPECT_EQ(h.queue_depth_max, 2u);
  EXPECT_NEAR(h.queue_depth_mean, 83.0 / 70.0, 1e-12);  // time-weighted over [0, 70) us
}

// Waits of 0.5, 2 and 12 ms, each ended by a launch after the drain: one is launching, one a stall of the
// host before a launch, one a pause.
TEST(HostSideTest, StallsAndPausesAreCountedApartInTheWait) {
  HandBuiltTrace hand;
  int64_t at = 0;
  int corr = 1;
  for (const int64_t gap_us : {0, 500, 2000, 12000}) {
    at += Us(gap_us);
    hand.Launch(at, corr);
    hand.Device(EventKind::kKernel, "k", at, Us(10), corr, /*stream=*/7);
    at += Us(10);
    ++corr;
  }
  const HostSideBreakdown h = ComputeTimeBreakdown(hand.Finish()).total.host;
  EXPECT_EQ(h.host_wait_gaps, 3u);
  EXPECT_EQ(h.host_wait_ns, Us(500 + 2000 + 12000));
  EXPECT_EQ(h.host_stall_gaps, 1u);
  EXPECT_EQ(h.host_stall_ns, Us(2000));
  EXPECT_EQ(h.host_pause_gaps, 1u);
  EXPECT_EQ(h.host_pause_ns, Us(12000));
}

TEST(HostSideTest, WorkWithoutLaunchesHasNoLaunchMeasures) {
  HandBuiltTrace hand;
  hand.Kernel("a", Us(0), Us(10));
  hand.Kernel("b", Us(30), Us(10));
  const HostSideBreakdown h = ComputeTimeBreakdown(hand.Finish()).steps.at(0).host;
  EXPECT_EQ(h.launched_events, 0u);
  EXPECT_FALSE(h.launch_latency.has_value());
  EXPECT_EQ(h.host_wait_ns, 0);  // unknown launch: not blamed on the host
  EXPECT_EQ(h.gaps_ns, Us(20));
  EXPECT_EQ(h.gap_count, 1u);
  EXPECT_EQ(h.queue_depth_max, 0u);
}

// A kernel that starts and ends at its launch instant (zero length, launched as it ran) is never queued:
// the queue's deepest point is the other kernels', not an unsigned wrap of a depth below zero.
TEST(HostSideTest, ZeroLengthKernelAtItsLaunchQueuesNothing) {
  HandBuiltTrace hand;
  hand.Launch(Us(0), 1);
  hand.Device(EventKind::kKernel, "empty", Us(0), 0, 1, /*stream=*/7);
  hand.Launch(Us(1), 2);
  hand.Device(EventKind::kKernel, "k", Us(2), Us(10), 2, /*stream=*/7);
  const HostSideBreakdown h = ComputeTimeBreakdown(hand.Finish()).total.host;
  EXPECT_EQ(h.launched_events, 2u);
  EXPECT_EQ(h.queue_depth_max, 1u);
  ASSERT_TRUE(h.launch_latency.has_value());
  EXPECT_DOUBLE_EQ(h.launch_latency->p50_ns, Us(0.5));  // latencies 0 and 1 us
  EXPECT_DOUBLE_EQ(h.launch_latency->p95_ns, Us(0.95));
}

// A short kernel under a long one on the same stream opens no gap when the long one is still running.
TEST(HostSideTest, NestedWorkOnAStreamOpensNoGap) {
  HandBuiltTrace hand;
  hand.Kernel("long", Us(0), Us(100));
  hand.Kernel("short", Us(10), Us(5));
  hand.Kernel("next", Us(100), Us(5));
  const HostSideBreakdown h = ComputeTimeBreakdown(hand.Finish()).steps.at(0).host;
  EXPECT_EQ(h.gaps_ns, 0);
  EXPECT_EQ(h.gap_count, 0u);
}

TEST(HostSideTest, TotalPoolsTheStepsEvents) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(100));
  hand.Step(2, Us(100), Us(100));
  hand.Launch(Us(10), 1);
  hand.Kernel("a", Us(20), Us(10), 1);  // latency 10
  hand.Launch(Us(110), 2);
  hand.Kernel("b", Us(140), Us(10), 2);  // latency 30
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
  ASSERT_EQ(rank.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(rank.steps[0].host.launch_latency->p50_ns, Us(10));
  EXPECT_DOUBLE_EQ(rank.steps[1].host.launch_latency->p50_ns, Us(30));
  ASSERT_TRUE(rank.total.host.launch_latency.has_value());
  EXPECT_DOUBLE_EQ(rank.total.host.launch_latency->mean_ns, Us(20));
  EXPECT_EQ(rank.total.host.launched_events, 2u);
  EXPECT_EQ(rank.total.host.host_wait_ns, Us(110));  // [30, 140): b launched at 110, after the drain
}

}  // namespace
}  // namespace tuneprof

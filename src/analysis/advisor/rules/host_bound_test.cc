// host.launch_bound, host.pauses and host.framework_overhead on hand-built traces.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

// A gap of 500 ms or more is the host busy elsewhere: idle time, not launch-bound.
TEST(RuleFamilies, LongHostPauseIsNotLaunchBound) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(2'000'000));
  t.Launch(Us(0), 1);
  t.Kernel("gemm", Us(10), Us(100), 1);
  t.Launch(Us(150), 2);  // launched after the device drained: a short launch gap of 50 us
  t.Kernel("gemm", Us(160), Us(100), 2);
  t.Launch(Us(1'000'000), 3);  // the host away ~1 s
  t.Kernel("gemm", Us(1'000'010), Us(100), 3);
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  EXPECT_EQ(breakdown.total.host.host_pause_gaps, 1u);
  EXPECT_EQ(breakdown.total.host.host_pause_ns, Us(1'000'010) - Us(260));
  EXPECT_DOUBLE_EQ(result.ranks[0].split.part(TimePart::kHostWait), static_cast<double>(Us(50)));
  EXPECT_EQ(Find(result, "host.launch_bound"), nullptr);
  const Finding* pauses = Find(result, "host.pauses");
  ASSERT_NE(pauses, nullptr);
  ExpectNumbers(*pauses, {{"pauses_per_step", 1}, {"pause_us_per_step", (Us(1'000'010) - Us(260)) / 1e3}});
}

// A 20 ms gap before a launch is the host elsewhere (a sleep before backward on a late rank), not launch
// overhead; it takes the idle time before the catch-all idle.low_utilization does.
TEST(RuleFamilies, ShortHostPauseIsAPauseNotLaunchBound) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(30'000));
  t.Launch(Us(0), 1);
  t.Kernel("gemm", Us(10), Us(1'000), 1);
  t.Launch(Us(21'010), 2);
  t.Kernel("gemm", Us(21'020), Us(1'000), 2);
  const AdvisorResult result = AdviseWith(t.Finish());
  EXPECT_EQ(Find(result, "host.launch_bound"), nullptr);
  const Finding* pauses = Find(result, "host.pauses");
  ASSERT_NE(pauses, nullptr);
  EXPECT_DOUBLE_EQ(Number(*pauses, "pause_us_per_step"), 20'010);
  EXPECT_DOUBLE_EQ(pauses->estimated_gain_ns, static_cast<double>(Us(20'010)));
  const Finding* low = Find(result, "idle.low_utilization");
  if (low != nullptr) EXPECT_LE(low->estimated_gain_ns, result.ranks[0].split.part(TimePart::kIdle) - Us(20'010));
}

// One 2 ms gap before a launch is the host busy (a sync, CPU work, a late rank's own host work), not the
// cost of launching: host.launch_bound says so and points there, not at graphs.
TEST(RuleFamilies, AFewLongHostGapsAreAStallNotLaunchOverhead) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(3'000));
  t.Launch(Us(0), 1);
  t.Kernel("gemm", Us(10), Us(400), 1);
  t.Launch(Us(2'410), 2);  // 2 ms after the device drained
  t.Kernel("gemm", Us(2'420), Us(400), 2);
  const AdvisorResult result = AdviseWith(t.Finish());
  const Finding* launch = Find(result, "host.launch_bound");
  ASSERT_NE(launch, nullptr);
  ExpectNumbers(*launch, {{"host_stalls_per_step", 1}, {"host_stall_us", 2'010}});
  EXPECT_NE(launch->title.find("mostly in gaps >= 1 ms"), std::string::npos) << launch->title;
  EXPECT_EQ(launch->strategy.find("graph in"), std::string::npos) << launch->strategy;
  EXPECT_NE(launch->strategy.find("Find what the host runs in those gaps"), std::string::npos);
}

// The same 2 ms stall, the host blocked in a synchronizing call under the user's `display` frame: the
// finding names that line and does not ask for the stacks the trace already has.
TEST(RuleFamilies, AStallNamesTheUserLineOfItsSynchronizingCall) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(3'000));
  t.Launch(Us(0), 1);
  t.Kernel("gemm", Us(10), Us(400), 1);
  t.Host(EventKind::kPythonFunction, "main.py(509): display", Us(405), Us(2'000));
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(406), Us(1'900));
  t.Launch(Us(2'410), 2);
  t.Kernel("gemm", Us(2'420), Us(400), 2);
  const AdvisorResult result = AdviseWith(t.Finish());
  const Finding* launch = Find(result, "host.launch_bound");
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(Text(*launch, "stall_call_sites"), "main.py(509): display 1.90 ms (1 call)");
  ASSERT_FALSE(launch->apis.empty());
  EXPECT_NE(launch->apis[0].view().find("main.py(509): display"), std::string::npos) << launch->apis[0].view();
  for (const SharedText& api : launch->apis) EXPECT_EQ(api.view().find("with_stack"), std::string::npos);
}

// A launch-bound rank (40 gaps of 200 us before launches) that also blocks 1.9 ms once in a synchronizing
// call: the launch advice stays, and the stall's call site is named beside it, so the advice does not wait
// for the stalls to hold half the wait before it says where they are.
TEST(RuleFamilies, ALaunchBoundRankNamesItsStallsBesideTheLaunchAdvice) {
  HandBuiltTrace t;
  int64_t device_end = Us(100);
  t.Launch(Us(0), 1);
  t.Kernel("gemm", Us(0), Us(100), 1);
  for (uint64_t id = 2; id <= 41; ++id) {
    t.Launch(device_end + Us(190), id);
    t.Kernel("gemm", device_end + Us(200), Us(100), id);
    device_end += Us(300);
  }
  t.Host(EventKind::kPythonFunction, "train.py(77): log_loss", device_end + Us(5), Us(2'000));
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", device_end + Us(6), Us(1'900));
  t.Launch(device_end + Us(2'010), 42);
  t.Kernel("gemm", device_end + Us(2'020), Us(100), 42);
  t.Step(1, 0, device_end + Us(2'120));
  const AdvisorResult result = AdviseWith(t.Finish());
  const Finding* launch = Find(result, "host.launch_bound");
  ASSERT_NE(launch, nullptr);
  EXPECT_NE(launch->title.find("launch-bound"), std::string::npos) << launch->title;
  EXPECT_NE(launch->strategy.find("capture the step in a graph"), std::string::npos) << launch->strategy;
  EXPECT_EQ(Text(*launch, "stall_call_sites"), "train.py(77): log_loss 1.90 ms (1 call)");
  EXPECT_NE(launch->strategy.find("Gaps of 1 ms or more hold 2.02 ms of the wait per step"), std::string::npos)
      << launch->strategy;
  ASSERT_EQ(launch->apis.size(), 2u);
  EXPECT_NE(launch->apis[1].view().find("train.py(77): log_loss"), std::string::npos) << launch->apis[1].view();
}

// A CPU-only trace without step markers: 8 ms of DDP set-up (one 100 us operator inside), then three
// iterations each running one 300 us operator. The step runs from the first operator's start to the last
// one's end (10,250 us, 1,000 us of it in operators); its 9,250 us outside operators are mostly set-up
// (7,900 us of it from the first operator on, less that operator): the finding says so and keeps only the
// rest, the time between the iterations' operators, as its gain.
TEST(RuleFamilies, FrameworkOverheadInAOneOffSetUpIsSaidSo) {
  HandBuiltTrace t;
  t.Host(EventKind::kUserAnnotation, "ddp_init", 0, Us(8000));
  t.Host(EventKind::kHostOp, "aten::empty", Us(100), Us(100));
  for (int k = 0; k < 3; ++k) {
    t.Host(EventKind::kUserAnnotation, "forward", Us(8000 + 1000 * k), Us(400));
    t.Host(EventKind::kHostOp, "aten::mm", Us(8050 + 1000 * k), Us(300));
  }
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "host.framework_overhead");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("inside 'ddp_init', which runs once"), std::string::npos) << f->title;
  EXPECT_EQ(Text(*f, "one_off_region"), "ddp_init");
  ExpectNumbers(*f, {{"one_off_region_us", 8000}, {"overhead_us", 9250}, {"one_off_outside_ops_us", 7800}});
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(9250 - 7800));
  EXPECT_NE(result.dominant_reason.find("the trace marks no steps and most of it is 'ddp_init', which runs once"),
            std::string::npos)
      << result.dominant_reason;
}

}  // namespace
}  // namespace tuneprof::rule_test

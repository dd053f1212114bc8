#include "analysis/core/graph_replays.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "text_cases.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

TEST(GraphReplaysTest, GraphLaunchNamesOfRuntimeAndDriver) {
  const test_support::TextCase<bool> kCases[] = {
      {"cudaGraphLaunch", true},   {"cudaGraphLaunch_v10000", true}, {"cuGraphLaunch_ptsz", true},
      {"cudaLaunchKernel", false}, {"cudaGraphInstantiate", false},
  };
  test_support::ExpectEachCase(IsGraphLaunchName, kCases);
}

TEST(GraphReplaysTest, KernelsSharingTheLaunchCorrelationAreReplayed) {
  HandBuiltTrace t;
  t.Host(EventKind::kRuntime, "cudaGraphLaunch", Us(0), Us(5), 9);
  const uint32_t a = t.Kernel("fused_a", Us(10), Us(30), 9);
  const uint32_t b = t.Kernel("fused_b", Us(40), Us(20), 9);
  t.Launch(Us(100), 10);
  const uint32_t eager = t.Kernel("eager", Us(110), Us(50), 10);
  const Trace trace = t.Finish();
  const GraphReplays replays = FindGraphReplays(trace);
  EXPECT_TRUE(replays.any());
  EXPECT_EQ(replays.launches, 1u);
  EXPECT_EQ(replays.replayed_events, 2u);
  EXPECT_EQ(replays.replayed_ns, Us(50));
  EXPECT_EQ(replays.device_work_ns, Us(100));
  EXPECT_DOUBLE_EQ(replays.replayed_share(), 0.5);
  EXPECT_TRUE(replays.replayed[a]);
  EXPECT_TRUE(replays.replayed[b]);
  EXPECT_FALSE(replays.replayed[eager]);
}

TEST(GraphReplaysTest, EagerTraceHasNone) {
  HandBuiltTrace t;
  t.LaunchedKernel("k", Us(0), Us(5), Us(5), 1);
  const GraphReplays replays = FindGraphReplays(t.Finish());
  EXPECT_FALSE(replays.any());
  EXPECT_EQ(replays.replayed_events, 0u);
  EXPECT_DOUBLE_EQ(replays.replayed_share(), 0.0);
}

}  // namespace
}  // namespace tuneprof

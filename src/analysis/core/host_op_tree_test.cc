#include "analysis/core/host_op_tree.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

// Each launched device event maps to the innermost operator around its launch call; events nothing
// launched (host events, a kernel without a correlation) map to none.
TEST(HostOpTreeTest, LaunchingOpsNamesTheInnermostOperatorAroundEachLaunch) {
  using hand_built::Us;
  hand_built::HandBuiltTrace hand;
  const uint32_t linear = hand.Host(EventKind::kHostOp, "aten::linear", 0, Us(100));
  const uint32_t mm = hand.Host(EventKind::kHostOp, "aten::mm", Us(5), Us(50));
  const uint32_t launch = hand.Launch(Us(10), 7);
  const uint32_t outer_launch = hand.Launch(Us(70), 8);
  const uint32_t gemm = hand.Kernel("sgemm", Us(20), Us(10), 7);
  const uint32_t add = hand.Kernel("add_kernel", Us(80), Us(10), 8);
  const uint32_t unlaunched = hand.Kernel("orphan_kernel", Us(120), Us(10));
  const Trace trace = hand.Finish();
  const HostOpTree tree = BuildHostOpTree(trace);
  const std::vector<uint32_t> op_of = LaunchingOps(trace, tree);
  ASSERT_EQ(op_of.size(), trace.events().size());
  EXPECT_EQ(op_of[gemm], mm);
  EXPECT_EQ(op_of[add], linear);
  EXPECT_EQ(op_of[unlaunched], kNoIndex);
  EXPECT_EQ(op_of[launch], kNoIndex);
  EXPECT_EQ(op_of[outer_launch], kNoIndex);
}

}  // namespace
}  // namespace tuneprof

#include "analysis/memory/memory_opportunities.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "text_cases.h"

namespace tuneprof {
namespace {

// These inputs never reach the bound: a small search budget keeps the test to what it checks (a valid
// plan, never below the bound), not to how long the full budget takes.
constexpr uint64_t kTestSearchBudget = 200'000;

using hand_built::HandBuiltTrace;
using hand_built::Us;

MemoryBlock Block(int64_t bytes, uint64_t alloc_seq, uint64_t free_seq) {
  MemoryBlock block;
  block.bytes = bytes;
  block.alloc_seq = alloc_seq;
  block.free_seq = free_seq;
  return block;
}

TEST(PlanReuseTest, BlocksWithDisjointLifetimesShareAddresses) {
  // A [0,2) and C [2,4) never live together and share offset 0; B [1,3) overlaps both.
  const std::vector<MemoryBlock> blocks = {Block(100, 0, 2), Block(50, 1, 3), Block(100, 2, 4)};
  const ReusePlan plan = PlanReuse(blocks, 0, 256, true);
  EXPECT_EQ(plan.max_live_bytes, 150);
  EXPECT_EQ(plan.plan_peak_bytes, 150);
  EXPECT_LE(plan.plan_peak_bytes, plan.observed_peak_bytes);
  EXPECT_EQ(plan.saving_bytes, 106);
  EXPECT_EQ(plan.blocks, 3);
}

TEST(PlanReuseTest, ASmallBlockFillsTheGapLeftBetweenLargerOnes) {
  // 400 lives throughout; 200 dies before 300 is allocated, so both sit at offset 400; 100 (never
  // freed, 1000 bytes allocated before the trace as baseline) overlaps all three and goes on top.
  const std::vector<MemoryBlock> blocks = {Block(400, 0, 9), Block(200, 1, 3), Block(300, 4, 8),
                                           Block(100, 2, kNeverFreed)};
  const ReusePlan plan = PlanReuse(blocks, 1000, kNoId, false);
  EXPECT_EQ(plan.max_live_bytes, 1000 + 800);
  EXPECT_EQ(plan.plan_peak_bytes, 1000 + 800);
  EXPECT_EQ(plan.saving_bytes, kNoId);
}

TEST(PlanReuseTest, ReachesTheObservedPeakWhereGreedyBySizeLeavesAHole) {
  // A [3,7) 3, B [0,2) 4, C [1,6) 3, D [4,5) 3. Greedy by size puts B and A at 0 (disjoint), C at 4
  // above B; D then overlaps A [0,3) and C [4,7), finds a 1-byte hole and goes to 7: arena 10. At
  // event 4 only A + C + D = 9 bytes are alive, which is what the allocator's Total Allocated peaks
  // at; placing the long-lived C first reaches it (C 0, A 3, B 3, D 6).
  const std::vector<MemoryBlock> blocks = {Block(3, 3, 7), Block(4, 0, 2), Block(3, 1, 6), Block(3, 4, 5)};
  const ReusePlan plan = PlanReuse(blocks, 0, 9, false);
  EXPECT_EQ(plan.max_live_bytes, 9);
  EXPECT_EQ(plan.plan_peak_bytes, 9);
  EXPECT_LE(plan.plan_peak_bytes, plan.observed_peak_bytes);
  EXPECT_EQ(plan.saving_bytes, 0);
  EXPECT_NE(plan.strategy, "greedy by size");
}

TEST(PlanReuseTest, AllocationOrderReplayReusesTheBestFittingGap) {
  // X, Y, Z of 100 bytes stack up to 300; Y's free leaves a 100-byte gap at 100 that W (60) then
  // V (30) fill best-fit, so the arena stays at 300 = the most bytes alive at once.
  const std::vector<MemoryBlock> blocks = {Block(100, 0, 10), Block(100, 1, 3), Block(100, 2, 10), Block(60, 4, 10),
                                           Block(30, 5, 10)};
  const ReusePlan plan = PlanReuse(blocks, 0, kNoId, false);
  EXPECT_EQ(plan.max_live_bytes, 300);
  EXPECT_EQ(plan.plan_peak_bytes, 300);
  EXPECT_EQ(plan.strategy, "best fit in allocation order");
  EXPECT_EQ(plan.stopped_after_blocks, kNoId);
}

TEST(PlanReuseTest, AFreeAtTheTopLowersTheArenaInsteadOfLeavingAGap) {
  // A [0,3) 100 at 0, B [1,2) 50 at 100 freed at 2, so C [2,4) 60 goes to 100: 160 = A + C.
  const std::vector<MemoryBlock> blocks = {Block(100, 0, 3), Block(50, 1, 2), Block(60, 2, 4)};
  const ReusePlan plan = PlanReuse(blocks, 0, kNoId, false);
  EXPECT_EQ(plan.max_live_bytes, 160);
  EXPECT_EQ(plan.plan_peak_bytes, 160);
}

TEST(PlanReuseTest, ABudgetThatRunsOutStillLeavesAValidPlanAndSaysWhere) {
  // Long-lived blocks of many sizes interleaved with short ones: the greedy planners visit every
  // long-lived block per placement; a tiny budget stops the first of them part way.
  std::vector<MemoryBlock> blocks;
  for (uint64_t i = 0; i < 2000; ++i) {
    const int64_t bytes = static_cast<int64_t>(64 + (i * 7919) % 4096);
    blocks.push_back(i % 2 == 0 ? Block(bytes, i, kNeverFreed) : Block(bytes, i, i + 3));
  }
  const ReusePlan plan = PlanReuse(blocks, 0, kNoId, false, 5'000, kTestSearchBudget);
  ASSERT_NE(plan.stopped_after_blocks, kNoId);
  EXPECT_LT(plan.stopped_after_blocks, 2000);
  EXPECT_GE(plan.plan_peak_bytes, plan.max_live_bytes);
  // The greedy planners stopped; the plan kept is the replay's or the exact search's (its own budget).
  EXPECT_TRUE(plan.strategy == "best fit in allocation order" || plan.strategy == "exact search") << plan.strategy;
  const ReusePlan roomier = PlanReuse(blocks, 0, kNoId, false, 2'000'000, kTestSearchBudget);
  EXPECT_LE(roomier.plan_peak_bytes, plan.plan_peak_bytes);
}

TEST(PlanReuseTest, BaselineBytesRaiseThePlanAndItsBound) {
  const std::vector<MemoryBlock> blocks = {Block(3, 3, 7), Block(4, 0, 2), Block(3, 1, 6), Block(3, 4, 5)};
  const ReusePlan plan = PlanReuse(blocks, 100, 109, false);
  EXPECT_EQ(plan.max_live_bytes, 109);
  EXPECT_EQ(plan.plan_peak_bytes, 109);
}

TEST(PlanReuseTest, NoPlanBeatsTheMostBytesAliveAtOnce) {
  std::vector<MemoryBlock> blocks;
  for (uint64_t i = 0; i < 300; ++i) {
    blocks.push_back(Block(static_cast<int64_t>(1 + (i * 37) % 101), i, i + 1 + (i * 13) % 40));
  }
  const ReusePlan plan = PlanReuse(blocks, 0, kNoId, false, 2'000'000, kTestSearchBudget);
  EXPECT_GE(plan.plan_peak_bytes, plan.max_live_bytes);
  EXPECT_GT(plan.max_live_bytes, 0);
}

class InPlaceTest : public ::testing::Test {
 protected:
  MemoryBlock Live(int64_t bytes, int64_t alloc_us, int64_t free_us) {
    MemoryBlock block = Block(bytes, static_cast<uint64_t>(alloc_us), static_cast<uint64_t>(free_us));
    block.alloc_ns = Us(alloc_us);
    block.free_ns = Us(free_us);
    block.track = hand_.mutable_builder()->TrackFor(ProcessKey{100, false}, ProcessKey{1, false});
    return block;
  }
  HandBuiltTrace hand_;
};

TEST_F(InPlaceTest, OutOfPlaceReluWhoseInputDiesRightAfterIsACandidate) {
  hand_.Host(EventKind::kHostOp, "aten::linear", Us(0), Us(10));
  hand_.Host(EventKind::kHostOp, "aten::relu", Us(20), Us(10));
  hand_.Host(EventKind::kHostOp, "aten::clamp_min", Us(21), Us(8));
  hand_.Host(EventKind::kHostOp, "aten::linear", Us(40), Us(10));
  const std::vector<MemoryBlock> blocks = {
      Live(4096, 5, 31),   // linear's output, the relu input: freed after relu returns, before the next op
      Live(4096, 22, 45),  // relu's output (allocated inside clamp_min)
  };
  const Trace trace = hand_.Finish();
  const std::vector<InPlaceCandidate> candidates = FindInPlaceCandidates(trace, blocks);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].op, "aten::relu");  // the outer op claims it, not clamp_min as well
  EXPECT_EQ(candidates[0].count, 1);
  EXPECT_EQ(candidates[0].bytes, 4096);
}

TEST_F(InPlaceTest, InputStillUsedByTheNextOpIsNotACandidate) {
  hand_.Host(EventKind::kHostOp, "aten::relu", Us(20), Us(10));
  hand_.Host(EventKind::kHostOp, "aten::add", Us(40), Us(10));
  const std::vector<MemoryBlock> blocks = {
      Live(4096, 5, 48),  // the input lives on into the add
      Live(4096, 22, 60),
  };
  const Trace trace = hand_.Finish();
  EXPECT_TRUE(FindInPlaceCandidates(trace, blocks).empty());
}

TEST_F(InPlaceTest, EveryLinkOfAReluChainIsACandidate) {
  // x = relu(relu(relu(x))): each output is the next relu's input, so a block is one candidate's
  // output and the next one's input.
  hand_.Host(EventKind::kHostOp, "aten::relu", Us(10), Us(10));
  hand_.Host(EventKind::kHostOp, "aten::relu", Us(30), Us(10));
  hand_.Host(EventKind::kHostOp, "aten::relu", Us(50), Us(10));
  hand_.Host(EventKind::kHostOp, "aten::sum", Us(70), Us(10));
  const std::vector<MemoryBlock> blocks = {
      Live(1000, 1, 21),   // x, dies after the first relu
      Live(1000, 12, 41),  // first output, second input
      Live(1000, 32, 61),  // second output, third input
      Live(1000, 52, 90),  // third output, used by sum
  };
  const Trace trace = hand_.Finish();
  const std::vector<InPlaceCandidate> candidates = FindInPlaceCandidates(trace, blocks);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].count, 3);
  EXPECT_EQ(candidates[0].bytes, 3000);
}

TEST(ElementwiseOpTest, KnowsOutOfPlaceElementwiseOps) {
  const test_support::TextCase<bool> kCases[] = {
      {"aten::relu", true},
      {"aten::dropout", true},
      {"aten::relu_", false},
      {"aten::mm", false},
  };
  test_support::ExpectEachCase(IsElementwiseOp, kCases);
}

}  // namespace
}  // namespace tuneprof

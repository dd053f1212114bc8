#include "analysis/advisor/bounding_rank.h"

#include <gtest/gtest.h>

#include <vector>

#include "analysis/comm/pipeline_ranks_for_test.h"

namespace tuneprof {
namespace {

using pipeline_ranks::kMs;

TimeSplit StepSplit(double step_ms, double computing_ms) {
  TimeSplit split;
  split.steps = 3;
  split.step_ns = step_ms * kMs;
  split.part_ns[static_cast<size_t>(TimePart::kComputeBound)] = computing_ms * kMs;
  return split;
}

std::vector<RankStep> Steps(const std::vector<TimeSplit>& splits) {
  std::vector<RankStep> out;
  for (size_t i = 0; i < splits.size(); ++i) out.push_back(RankStep{static_cast<int64_t>(i), &splits[i]});
  return out;
}

// Stage 0 (ranks 0, 1) computes 65 ms a step, stage 1 (ranks 2, 3) 100 ms; rank 3 has the longest step only
// because it waits.
TEST(BoundingRankTest, APipelineIsBoundedByTheStageThatComputesMostNotTheLongestStep) {
  CrossRankCommunication cross;
  cross.pipeline = AnalyzePipelineStages({pipeline_ranks::Rank(0, 60, 110, 40), pipeline_ranks::Rank(1, 70, 120, 50),
                                          pipeline_ranks::Rank(2, 100, 160, 10), pipeline_ranks::Rank(3, 100, 160, 0)});
  ASSERT_TRUE(cross.pipeline.has_value());
  const std::vector<TimeSplit> splits = {StepSplit(110, 60), StepSplit(120, 70), StepSplit(160, 100),
                                         StepSplit(170, 99)};
  const std::optional<BoundingRank> bounding = FindBoundingRank(Steps(splits), &cross, {});
  ASSERT_TRUE(bounding.has_value());
  EXPECT_EQ(bounding->rank, 2);
  EXPECT_EQ(bounding->reason, "stage 1 computes most per step");
}

// Every rank waits at the all-to-all each step ends with: the steps tie, and rank 1, which computes most,
// bounds them, not rank 0, the first of the tie.
TEST(BoundingRankTest, OnATieTheRankThatComputesMostBoundsTheStep) {
  const std::vector<TimeSplit> splits = {StepSplit(6.6, 3.4), StepSplit(6.6, 4.4), StepSplit(6.6, 2.4),
                                         StepSplit(6.6, 2.1)};
  const std::optional<BoundingRank> bounding = FindBoundingRank(Steps(splits), nullptr, {});
  ASSERT_TRUE(bounding.has_value());
  EXPECT_EQ(bounding->rank, 1);
  EXPECT_EQ(bounding->reason, "computes most per step of the tied ranks");
}

TEST(BoundingRankTest, NoneWhereTheSlowestStandsOrTheTiedRanksComputeAlike) {
  EXPECT_FALSE(
      FindBoundingRank(Steps({StepSplit(7, 3), StepSplit(6, 4)}), nullptr, {}).has_value());  // rank 0 is slowest
  EXPECT_FALSE(FindBoundingRank(Steps({StepSplit(6, 3), StepSplit(6, 3)}), nullptr, {}).has_value());  // alike
  EXPECT_FALSE(FindBoundingRank(Steps({StepSplit(6, 3)}), nullptr, {}).has_value());                   // one rank
}

// A straggler that stands out, with its finding, bounds the step even where another rank computes more.
TEST(BoundingRankTest, AStragglerThatStandsOutBoundsTheStep) {
  CrossRankCommunication cross;
  cross.straggler_rank = 7;
  cross.straggler_stands_out = true;
  Finding straggler;
  straggler.id = "communication.straggler";
  std::vector<TimeSplit> splits(8, StepSplit(8.2, 1.0));
  splits[3] = StepSplit(8.2, 2.0);
  const std::optional<BoundingRank> bounding = FindBoundingRank(Steps(splits), &cross, {straggler});
  ASSERT_TRUE(bounding.has_value());
  EXPECT_EQ(bounding->rank, 7);
  EXPECT_EQ(bounding->reason, "the last to arrive at the collectives");
  // Without its finding the straggler is not claimed: the tie names the rank that computes most.
  EXPECT_EQ(FindBoundingRank(Steps(splits), &cross, {})->rank, 3);
}

}  // namespace
}  // namespace tuneprof

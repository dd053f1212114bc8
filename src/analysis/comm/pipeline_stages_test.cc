#include "analysis/comm/pipeline_stages.h"

#include <gtest/gtest.h>

#include <vector>

namespace tuneprof {
namespace {

constexpr int64_t kMs = 1'000'000;

// Ranks 0..3 in two pp groups of two stages ({0, 2} and {1, 3}): stage 0 holds ranks 0 and 1.
RankCommunication Rank(int64_t rank, int64_t stage_ms, int64_t bubble_ms) {
  RankCommunication r;
  r.rank = rank;
  r.steps = 2;
  r.wall_ns = 2 * stage_ms * kMs;
  r.bubble_ns = 2 * bubble_ms * kMs;
  r.parallel_groups = {ParallelGroupInfo{"g0", "pp", {0, 2}}, ParallelGroupInfo{"g1", "pp", {1, 3}},
                       ParallelGroupInfo{"g2", "dp", {0, 1}}};
  return r;
}

TEST(PipelineStagesTest, StagesFromThePpGroups) {
  const auto p = AnalyzePipelineStages({Rank(0, 100, 10), Rank(1, 110, 10), Rank(2, 150, 40), Rank(3, 150, 50)});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->group_name, "pp");
  EXPECT_EQ(p->pipeline_size, 2);
  ASSERT_EQ(p->stages.size(), 2u);
  EXPECT_EQ(p->stages[0].ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_DOUBLE_EQ(p->stages[0].stage_ns_per_step, 105.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[1].bubble_ns_per_step, 45.0 * kMs);
  EXPECT_EQ(p->slowest_stage, 1);
  EXPECT_EQ(p->fastest_stage, 0);
  EXPECT_DOUBLE_EQ(p->imbalance, 45.0 / 150.0);
  EXPECT_TRUE(p->uneven);
  EXPECT_DOUBLE_EQ(p->bubble_share, 110.0 / (510.0 + 110.0));
}

TEST(PipelineStagesTest, NoPpGroupsNoStages) {
  RankCommunication a = Rank(0, 100, 0), b = Rank(1, 100, 0);
  a.parallel_groups.clear();
  b.parallel_groups.clear();
  EXPECT_FALSE(AnalyzePipelineStages({a, b}));
  // One stage in the input (the other stage's ranks were not kept) is no pipeline to compare.
  EXPECT_FALSE(AnalyzePipelineStages({Rank(0, 100, 0), Rank(1, 100, 0)}));
}

}  // namespace
}  // namespace tuneprof

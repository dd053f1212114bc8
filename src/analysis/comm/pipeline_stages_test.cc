#include "analysis/comm/pipeline_stages.h"

#include <gtest/gtest.h>

#include <vector>

namespace tuneprof {
namespace {

constexpr int64_t kMs = 1'000'000;

// Ranks 0..3 in two pp groups of two stages ({0, 2} and {1, 3}): stage 0 holds ranks 0 and 1. `step_ms`
// is Stage + Bubble.
RankCommunication Rank(int64_t rank, int64_t computing_ms, int64_t step_ms, int64_t bubble_ms) {
  RankCommunication r;
  r.rank = rank;
  r.steps = 2;
  r.computing_ns = 2 * computing_ms * kMs;
  r.wall_ns = 2 * step_ms * kMs;
  r.bubble_ns = 2 * bubble_ms * kMs;
  r.parallel_groups = {ParallelGroupInfo{"g0", "pp", {0, 2}}, ParallelGroupInfo{"g1", "pp", {1, 3}},
                       ParallelGroupInfo{"g2", "dp", {0, 1}}};
  return r;
}

TEST(PipelineStagesTest, StagesFromThePpGroups) {
  const auto p =
      AnalyzePipelineStages({Rank(0, 60, 110, 40), Rank(1, 70, 120, 50), Rank(2, 100, 160, 10), Rank(3, 100, 160, 0)});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->group_name, "pp");
  EXPECT_EQ(p->pipeline_size, 2);
  ASSERT_EQ(p->stages.size(), 2u);
  EXPECT_EQ(p->stages[0].ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_DOUBLE_EQ(p->stages[0].computing_ns_per_step, 65.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[0].step_ns_per_step, 115.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[0].stage_ns_per_step, 70.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[1].bubble_ns_per_step, 5.0 * kMs);
  EXPECT_EQ(p->slowest_stage, 1);
  EXPECT_EQ(p->fastest_stage, 0);
  EXPECT_DOUBLE_EQ(p->mean_work_ns_per_step, 82.5 * kMs);
  EXPECT_DOUBLE_EQ(p->imbalance, 35.0 / 100.0);
  EXPECT_TRUE(p->uneven);
  EXPECT_DOUBLE_EQ(p->bubble_share, 100.0 / 550.0);
}

TEST(PipelineStagesTest, WaitsChargedOnceAndTheBalancedWhatIf) {
  const auto p =
      AnalyzePipelineStages({Rank(0, 60, 110, 40), Rank(1, 70, 120, 50), Rank(2, 100, 160, 10), Rank(3, 100, 160, 0)});
  ASSERT_TRUE(p);
  // Stage 0 works 65 ms against stage 1's 100 and waits 45: 35 for stage 1's compute, 10 fill and drain.
  EXPECT_DOUBLE_EQ(p->stages[0].wait_for_slowest_ns_per_step, 35.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[0].fill_drain_ns_per_step, 10.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[0].holds_up_ns_per_step, 0);
  EXPECT_DOUBLE_EQ(p->stages[1].wait_for_slowest_ns_per_step, 0);
  EXPECT_DOUBLE_EQ(p->stages[1].fill_drain_ns_per_step, 5.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[1].holds_up_ns_per_step, 35.0 * kMs);
  // Balanced at 82.5 ms: (100 - 82.5) x (100 + 5) / 100.
  EXPECT_DOUBLE_EQ(p->balanced_gain_ns_per_step, 17.5 * 1.05 * kMs);
}

TEST(PipelineStagesTest, WhatIfAndChargeBounds) {
  EXPECT_DOUBLE_EQ(BalancedStagesGainNs(0, 10, 0), 0);
  EXPECT_DOUBLE_EQ(BalancedStagesGainNs(100, 0, 100), 0);  // already balanced
  EXPECT_DOUBLE_EQ(BalancedStagesGainNs(400, 50, 315.5), 84.5 * 450 / 400);
  EXPECT_DOUBLE_EQ(WaitForSlowestNs(231, 219, 400), 169);
  EXPECT_DOUBLE_EQ(WaitForSlowestNs(231, 100, 400), 100);  // never more than the stage waited
  EXPECT_DOUBLE_EQ(WaitForSlowestNs(400, 50, 400), 0);
}

TEST(PipelineStagesTest, NoPpGroupsNoStages) {
  RankCommunication a = Rank(0, 100, 100, 0), b = Rank(1, 100, 100, 0);
  a.parallel_groups.clear();
  b.parallel_groups.clear();
  EXPECT_FALSE(AnalyzePipelineStages({a, b}));
  // One stage in the input (the other stage's ranks were not kept) is no pipeline to compare.
  EXPECT_FALSE(AnalyzePipelineStages({Rank(0, 100, 100, 0), Rank(1, 100, 100, 0)}));
}

}  // namespace
}  // namespace tuneprof

// pipeline.stage_imbalance and pipeline.bubble, each run alone on a rank of the pipeline that
// AnalyzePipelineStages finds in four hand-filled ranks (two stages of two ranks).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/comm/pipeline_ranks_for_test.h"

namespace tuneprof::rule_test {
namespace {

using pipeline_ranks::Rank;

// `rule` alone on rank `rank_id` of the pipeline of `ranks`.
AdvisorResult RunOn(RuleFunction rule, const std::vector<RankCommunication>& ranks, int64_t rank_id) {
  CrossRankCommunication cross;
  cross.pipeline = AnalyzePipelineStages(ranks);
  EXPECT_TRUE(cross.pipeline.has_value());
  RuleAlone alone;
  alone.rank.cross = &cross;
  alone.rank.rank_id = rank_id;
  return alone.Run(rule);
}

// Stage 0 computes 65 ms a step against stage 1's 100: 35 % apart.
const std::vector<RankCommunication> kUneven = {Rank(0, 60, 110, 40), Rank(1, 70, 120, 50), Rank(2, 100, 160, 10),
                                                Rank(3, 100, 160, 0)};
// Every rank computes 100 ms of a 130 ms step and waits 30 in bubbles.
const std::vector<RankCommunication> kEven = {Rank(0, 100, 130, 30), Rank(1, 100, 130, 30), Rank(2, 100, 130, 30),
                                              Rank(3, 100, 130, 30)};

TEST(PipelineStageRules, TheFasterStageSaysItWaitsForTheSlowest) {
  const AdvisorResult result = RunOn(RulePipelineStageImbalance, kUneven, 0);
  const Finding* f = Find(result, "pipeline.stage_imbalance");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 35, {{"own_stage", 0}, {"slowest_stage", 1}, {"own_computing_us", 65e3}});
  // Balanced at 82.5 ms a stage: (100 - 82.5) x (100 + 5) / 100 off every rank's step.
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, 18.375 * pipeline_ranks::kMs);
  EXPECT_EQ(Find(RunOn(RulePipelineStageImbalance, kUneven, 2), "pipeline.stage_imbalance"), nullptr);
  EXPECT_EQ(Find(RunOn(RulePipelineBubble, kUneven, 0), "pipeline.bubble"), nullptr);  // uneven: not the schedule
}

// The figures a finding quotes are its stage's; the run's staged ranks together have their own key.
TEST(PipelineStageRules, TheBubbleShareIsTheQuotedStagesAndTheRunsHasItsOwnKey) {
  const AdvisorResult result = RunOn(RulePipelineStageImbalance, kUneven, 0);
  const Finding* f = Find(result, "pipeline.stage_imbalance");
  ASSERT_NE(f, nullptr);
  // Stage 0 waits 45 of its 115 ms; ranks 0-3 wait 100 of their 550 ms.
  ExpectFinding(*f, 35, {{"bubble_share_pct", 100.0 * 45 / 115}, {"staged_ranks_bubble_share_pct", 100.0 * 100 / 550}});
  EXPECT_NE(f->title.find("39.1 % of its step"), std::string::npos) << f->title;
}

TEST(PipelineStageRules, EvenStagesWithLargeBubblesBlameTheSchedule) {
  const AdvisorResult result = RunOn(RulePipelineBubble, kEven, 1);
  const Finding* f = Find(result, "pipeline.bubble");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 100.0 * 30 / 130, {{"own_stage", 0}, {"bubble_us_per_step", 30e3}});
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, 15.0 * pipeline_ranks::kMs);  // half the bubble
  EXPECT_EQ(Find(RunOn(RulePipelineStageImbalance, kEven, 1), "pipeline.stage_imbalance"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

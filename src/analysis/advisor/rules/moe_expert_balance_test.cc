// moe.expert_imbalance on expert loads built by hand: fires above its threshold with the cost the
// call-by-call comparison gives, on every EP rank (compute on the slowest, the wait elsewhere), and stays
// quiet on an even load or a rank outside the EP ranks.
#include <gtest/gtest.h>

#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof::rule_test {
namespace {

RankMoeLoad Load(int64_t rank, int64_t tokens, std::vector<int64_t> call_ns) {
  RankMoeLoad load;
  load.rank = rank;
  load.steps = 1;
  load.calls = call_ns.size();
  load.tokens = tokens;
  for (int64_t ns : call_ns) load.device_ns += ns;
  load.call_ns = std::move(call_ns);
  load.source = "record_shapes";
  return load;
}

std::vector<Finding> FindingsOn(const MoeBalance& moe, int64_t rank_id) {
  RankEvidence rank;
  rank.moe = &moe;
  rank.rank_id = rank_id;
  std::vector<Finding> out;
  RuleMoeExpertBalance(rank, AdvisorConfig(), &out);
  return out;
}

TEST(MoeExpertBalanceRule, FiresOnEveryEpRankWithTheCallByCallCost) {
  // Rank 1 runs 1.5x the mean tokens; its two calls take 30 us where rank 0's take 10 us.
  const RankMoeLoad a = Load(0, 100, {10'000, 10'000});
  const RankMoeLoad b = Load(1, 300, {30'000, 30'000});
  const MoeBalance moe = BalanceAcrossRanks({&a, &b});
  const std::vector<Finding> slow = FindingsOn(moe, 1);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].id, "moe.expert_imbalance");
  EXPECT_DOUBLE_EQ(*slow[0].value, 50);
  EXPECT_DOUBLE_EQ(slow[0].uncapped_gain_ns, 20'000);  // 2 calls x (30 - 20) us
  EXPECT_EQ(slow[0].saves_from, TimePart::kComputeBound);
  EXPECT_EQ(Number(slow[0], "max_rank"), 1);
  EXPECT_EQ(Number(slow[0], "others_wait_us_per_step"), 40);  // 2 calls x (30 - 10) us
  EXPECT_EQ(Text(slow[0], "rank_tokens_per_step"), "0: 100, 1: 300");
  const std::vector<Finding> waiting = FindingsOn(moe, 0);
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting[0].saves_from, TimePart::kCommunication);
  EXPECT_TRUE(FindingsOn(moe, 7).empty());  // not an EP rank
}

TEST(MoeExpertBalanceRule, QuietOnAnEvenLoad) {
  const RankMoeLoad a = Load(0, 100, {10'000});
  const RankMoeLoad b = Load(1, 110, {11'000});  // 4.8 % above the mean: under 20 %
  const MoeBalance moe = BalanceAcrossRanks({&a, &b});
  EXPECT_TRUE(FindingsOn(moe, 0).empty());
  EXPECT_TRUE(FindingsOn(moe, 1).empty());
}

TEST(MoeExpertBalanceRule, OneRankGivesExpertsAndAnUnknownGain) {
  RankMoeLoad a = Load(0, 100, {10'000});
  a.expert_tokens = {70, 10, 10, 10};
  a.experts = 4;
  const MoeBalance moe = BalanceAcrossRanks({&a});
  const std::vector<Finding> out = FindingsOn(moe, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(*out[0].value, 180);  // 70 / 25 - 1
  EXPECT_TRUE(out[0].gain_unknown());
  EXPECT_EQ(Number(out[0], "max_expert"), 0);
}

}  // namespace
}  // namespace tuneprof::rule_test

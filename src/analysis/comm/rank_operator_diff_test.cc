// The rank that computes most against the one that computes least, operator by operator, from their
// lead-ins.
#include "analysis/comm/rank_operator_diff.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

RankCommunication Rank(int64_t id, int64_t computing_ns, std::vector<std::vector<LeadOperator>> lead_ins) {
  RankCommunication r;
  r.rank = id;
  r.steps = 2;
  r.computing_ns = computing_ns;
  for (auto& operators : lead_ins) r.lead_ins.push_back(CollectiveLeadIn{{}, std::move(operators)});
  return r;
}

TEST(RankOperatorDiff, TheSlowestRanksExtraOperatorsPerStepMostFirst) {
  const std::vector<RankCommunication> ranks = {
      Rank(0, 1000, {{{"MatMul", 400}, {"Add", 100}}, {{"MatMul", 400}}}),
      Rank(1, 1600, {{{"MatMul", 600}, {"Add", 100}, {"TransData", 100}}, {{"MatMul", 600}}}),
      Rank(2, 1200, {{{"MatMul", 500}}}),
  };
  const std::optional<RankOperatorDiff> diff = DiffSlowestAndFastestRank(ranks);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(diff->slow_rank, 1);
  EXPECT_EQ(diff->fast_rank, 0);
  EXPECT_DOUBLE_EQ(diff->slow_computing_ns_per_step, 800);
  EXPECT_DOUBLE_EQ(diff->fast_computing_ns_per_step, 500);
  ASSERT_EQ(diff->extra_per_step.size(), 2u);  // Add is alike on both: not a difference
  EXPECT_EQ(diff->extra_per_step[0].name, "MatMul");
  EXPECT_EQ(diff->extra_per_step[0].ns, 200);  // (1200 - 800) / 2 steps
  EXPECT_EQ(diff->extra_per_step[1].name, "TransData");
  EXPECT_EQ(diff->extra_per_step[1].ns, 50);
}

TEST(RankOperatorDiff, NoneWhenRanksComputeAlikeOrKeptNoLeadIns) {
  EXPECT_FALSE(DiffSlowestAndFastestRank({Rank(0, 1000, {{{"MatMul", 1}}}), Rank(1, 1000, {{{"MatMul", 9}}})}));
  EXPECT_FALSE(DiffSlowestAndFastestRank({Rank(0, 1000, {}), Rank(1, 2000, {})}));
  EXPECT_FALSE(DiffSlowestAndFastestRank({Rank(0, 1000, {{{"MatMul", 1}}})}));
}

}  // namespace
}  // namespace tuneprof

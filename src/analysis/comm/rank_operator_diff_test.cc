// The rank that computes most against the one that computes least, operator by operator, from their
// lead-ins, their whole steps and their host APIs.
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
  // Within 5 %: alike, no lead-in extras.
  const std::optional<RankOperatorDiff> alike =
      DiffSlowestAndFastestRank({Rank(0, 1000, {{{"MatMul", 1}}}), Rank(1, 1040, {{{"MatMul", 90}}})});
  ASSERT_TRUE(alike.has_value());
  EXPECT_TRUE(alike->computes_alike);
  EXPECT_TRUE(alike->extra_per_step.empty());
  EXPECT_FALSE(DiffSlowestAndFastestRank({Rank(0, 1000, {}), Rank(1, 2000, {})}));
  EXPECT_FALSE(DiffSlowestAndFastestRank({Rank(0, 1000, {{{"MatMul", 1}}})}));
}

RankCommunication Worked(int64_t id, int64_t computing_ns, std::vector<NamedWork> ops, std::vector<NamedWork> apis) {
  RankCommunication r;
  r.rank = id;
  r.steps = 2;
  r.computing_ns = computing_ns;
  r.step_work.device_ops = std::move(ops);
  r.step_work.host_apis = std::move(apis);
  return r;
}

// A data-parallel step that all-reduces only at its end keeps no lead-in: the ranks' whole steps are compared,
// device operators and host APIs, the largest differences either way.
TEST(RankOperatorDiff, WholeStepsAndHostApisWhereNoLeadInReaches) {
  const std::vector<RankCommunication> ranks = {
      Worked(0, 1'000'000, {{"MatMul", 4, 800'000, 800'000}, {"Add", 2, 200'000, 200'000}},
             {{"aten::mm", 4, 900'000, 300'000}}),
      Worked(1, 1'200'000,
             {{"MatMul", 4, 1'200'000, 1'200'000}, {"Add", 2, 199'000, 199'000}, {"Cast", 2, 4'000'000, 4'000'000}},
             {{"aten::mm", 6, 1'300'000, 500'000}, {"aten::to", 2, 0, 0}}),
  };
  const std::optional<RankOperatorDiff> diff = DiffSlowestAndFastestRank(ranks);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(diff->slow_rank, 1);
  EXPECT_EQ(diff->fast_rank, 0);
  EXPECT_FALSE(diff->computes_alike);
  EXPECT_TRUE(diff->extra_per_step.empty());
  ASSERT_EQ(diff->step_operators.size(), 2u);  // Add differs by 0.5 us per step: noise
  EXPECT_EQ(diff->step_operators[0].name, "Cast");
  EXPECT_DOUBLE_EQ(diff->step_operators[0].delta_ns(), 2'000'000);
  EXPECT_EQ(diff->step_operators[1].name, "MatMul");
  EXPECT_DOUBLE_EQ(diff->step_operators[1].slow_ns, 600'000);
  EXPECT_DOUBLE_EQ(diff->step_operators[1].fast_ns, 400'000);
  ASSERT_EQ(diff->host_apis.size(), 1u);  // aten::to took no time
  EXPECT_EQ(diff->host_apis[0].name, "aten::mm");
  EXPECT_DOUBLE_EQ(diff->host_apis[0].slow_calls, 3);
  EXPECT_DOUBLE_EQ(diff->host_apis[0].fast_calls, 2);
  EXPECT_DOUBLE_EQ(diff->host_apis[0].slow_self_ns, 250'000);
  EXPECT_DOUBLE_EQ(diff->host_apis[0].fast_self_ns, 150'000);
}

// Ranks within 5 % of each other compute alike: no lead-in operator explains a gap, but the whole steps'
// differences are still named.
TEST(RankOperatorDiff, RanksThatComputeAlikeStillNameTheirDifferences) {
  std::vector<RankCommunication> ranks = {Rank(0, 100'000, {{{"MatMul", 40'000}}}),
                                          Rank(1, 101'000, {{{"MatMul", 60'000}}})};
  ranks[0].step_work.device_ops = {{"MatMul", 2, 100'000, 100'000}};
  ranks[1].step_work.device_ops = {{"MatMul", 2, 104'000, 104'000}};
  const std::optional<RankOperatorDiff> diff = DiffSlowestAndFastestRank(ranks);
  ASSERT_TRUE(diff.has_value());
  EXPECT_TRUE(diff->computes_alike);
  EXPECT_TRUE(diff->extra_per_step.empty());
  ASSERT_EQ(diff->step_operators.size(), 1u);
  EXPECT_DOUBLE_EQ(diff->step_operators[0].delta_ns(), 2'000);
}

// A name missing from a list cut at kMaxStepWorkNames may have run there below the cut: not compared.
TEST(RankOperatorDiff, ANameBeyondACutListIsNotCompared) {
  std::vector<NamedWork> full;
  for (size_t i = 0; i < kMaxStepWorkNames; ++i) full.push_back({"op" + std::to_string(i), 2, 100'000, 100'000});
  std::vector<NamedWork> fast = full;
  fast.back() = {"only_fast", 2, 100'000, 100'000};
  std::vector<RankCommunication> ranks = {Worked(0, 1'000'000, fast, {}), Worked(1, 1'200'000, full, {})};
  const std::optional<RankOperatorDiff> diff = DiffSlowestAndFastestRank(ranks);
  ASSERT_TRUE(diff.has_value());
  EXPECT_TRUE(diff->step_operators.empty());  // op127 and only_fast each fall below the other's cut
}

}  // namespace
}  // namespace tuneprof

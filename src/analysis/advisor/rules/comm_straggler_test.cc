// communication.straggler against the advisor's other view of a late rank.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof::rule_test {
namespace {

// A rank whose one HCCL op waits 0.3 ms of its 0.4 (wait ratio 0.75), over one step of 1 ms.
RankCommunication WaitingHcclRank() {
  RankCommunication comm;
  AscendCommOp op;
  op.wait_ms = 0.3;
  op.transit_ms = 0.1;
  comm.ascend_ops.push_back(op);
  comm.ascend_wait_ratio = 0.75;
  return comm;
}

void OneStepOf(int64_t rank_id, const RankCommunication* comm, RankEvidence* rank) {
  rank->rank_id = rank_id;
  rank->comm = comm;
  rank->split.steps = 1;
  rank->split.step_ns = Us(1000);
}

// Rank 0 at 4 matched collectives: 400 us of communication, 300 us of it waiting (ratio 0.75), `for_straggler_us`
// of that at the collectives the straggler arrived at last.
RankWait RankZeroWaiting(double for_straggler_us) {
  return RankWait{.rank = 0,
                  .matched = 4,
                  .communication_ns = Us(400),
                  .wait_ns = Us(300),
                  .transfer_ns = Us(100),
                  .wait_ratio = 0.75,
                  .wait_for_straggler_ns = Us(for_straggler_us)};
}

// The straggler rule on rank 0, one step long, holding no communication of its own, against `cross`.
std::vector<Finding> StragglerFindingsOfQuietRankZero(const CrossRankCommunication& cross) {
  RankCommunication comm;
  RankEvidence rank;
  OneStepOf(0, &comm, &rank);
  rank.cross = &cross;
  std::vector<Finding> findings;
  RuleCommStraggler(rank, AdvisorConfig(), &findings);
  return findings;
}

// The timeline's arrivals name rank 1, the HCCL wait ratios rank 2: whichever rule a rank's finding
// quotes, it says the other one disagrees (as `comm` does), naming both ranks.
TEST(RuleFamilies, StragglerFindingsSayWhenTheTwoRulesDisagree) {
  CrossRankCommunication cross;
  cross.straggler_rank = 1;
  cross.straggler_stands_out = true;
  cross.straggler_reason = "last at 4 of 4 matched collectives";
  cross.ascend_slow_rank = 2;
  cross.ascend_verdict = "slow rank";
  cross.ranks.push_back(RankZeroWaiting(300));
  const RankCommunication comm = WaitingHcclRank();
  RankEvidence rank;
  OneStepOf(0, &comm, &rank);
  rank.cross = &cross;
  std::vector<Finding> findings;
  RuleCommStraggler(rank, AdvisorConfig(), &findings);
  ASSERT_EQ(findings.size(), 2u);  // the wait ratios' and the arrivals'
  for (const Finding& f : findings) {
    EXPECT_NE(f.title.find("the rules disagree: the timeline's arrivals name rank 1, the wait ratios rank 2"),
              std::string::npos)
        << f.title;
    EXPECT_NE(Text(f, "disagreement").find("rank 1"), std::string::npos);
    EXPECT_TRUE(f.gain_unknown()) << f.gain_model;  // neither rank's wait is the saving
  }
  cross.ascend_slow_rank = 1;  // the same rank: nothing to say
  findings.clear();
  RuleCommStraggler(rank, AdvisorConfig(), &findings);
  ASSERT_EQ(findings.size(), 2u);
  for (const Finding& f : findings) {
    EXPECT_EQ(f.title.find("disagree"), std::string::npos) << f.title;
    EXPECT_GT(f.uncapped_gain_ns, 0) << f.title;
  }
}

// Rank 0 waits 300 us at its 4 collectives, but rank 1, the straggler, arrived last at 2 of them, where rank 0
// waited 120 us: the finding quotes those 120 us (12 % of the step, 30 % of its collective time), not all 300.
TEST(RuleFamilies, StragglerFindingQuotesOnlyTheWaitsForTheStraggler) {
  CrossRankCommunication cross;
  cross.straggler_rank = 1;
  cross.straggler_stands_out = true;
  cross.straggler_reason = "last at 2 of 4 matched collectives";
  cross.ranks.push_back(RankZeroWaiting(120));
  cross.ranks.push_back(RankWait{.rank = 1, .matched = 4, .communication_ns = Us(100), .times_last = 2});
  const std::vector<Finding> findings = StragglerFindingsOfQuietRankZero(cross);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_DOUBLE_EQ(f.uncapped_gain_ns, Us(120));
  EXPECT_DOUBLE_EQ(f.value.value_or(-1), 30);
  EXPECT_DOUBLE_EQ(Number(f, "wait_us_per_step"), 120);
  EXPECT_DOUBLE_EQ(Number(f, "all_waits_us_per_step"), 300);
  EXPECT_NE(f.title.find("rank 0 waits 120.0 us per step for rank 1"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("at the 2 of 4 matched collectives rank 1 arrived at last"), std::string::npos) << f.title;
  // Below the threshold once only the straggler's part counts: no finding.
  cross.ranks[0].wait_for_straggler_ns = Us(40);
  EXPECT_TRUE(StragglerFindingsOfQuietRankZero(cross).empty());
}

// A rank read alone whose HCCL ops wait: its wait holds the handshake the late rank goes through too, so the
// finding says the rank waits and names no other rank as the late one.
TEST(RuleFamilies, ALoneRankWaitingNamesNoLateRank) {
  const RankCommunication comm = WaitingHcclRank();
  RankEvidence rank;
  OneStepOf(1, &comm, &rank);
  std::vector<Finding> findings;
  RuleCommStraggler(rank, AdvisorConfig(), &findings);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.id, "communication.straggler");
  EXPECT_EQ(f.title.find("waits for"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("which rank is late cannot be told from this rank alone"), std::string::npos) << f.title;
  EXPECT_NE(Text(f, "why").find("the late rank shows waits too"), std::string::npos);
  // Without the late rank, what balancing it saves cannot be measured: unknown, not the whole wait.
  EXPECT_TRUE(f.gain_unknown()) << f.gain_model;
  EXPECT_DOUBLE_EQ(f.uncapped_gain_ns, 0);
  EXPECT_DOUBLE_EQ(Number(f, "wait_ms_total"), 0.3);
  EXPECT_EQ(f.strategy.find("Balance the slow rank"), std::string::npos) << f.strategy;
}

// The slowest and the fastest rank compared automatically, on the arrivals' finding as on the wait ratios':
// both ranks named, the device operators of their whole steps where no lead-in operator differs, and their
// host APIs with time, self time and calls per step.
TEST(RuleFamilies, StragglerFindingsCompareTheSlowestAndFastestRank) {
  CrossRankCommunication cross;
  cross.straggler_rank = 1;
  cross.straggler_stands_out = true;
  cross.straggler_reason = "last at 4 of 4 matched collectives";
  RankWait waiting;
  waiting.rank = 0;
  waiting.matched = 4;
  waiting.communication_ns = Us(400);
  waiting.wait_ns = Us(300);
  waiting.transfer_ns = Us(100);
  waiting.wait_ratio = 0.75;
  waiting.wait_for_straggler_ns = Us(300);  // the straggler was last at all 4
  cross.ranks.push_back(waiting);
  RankOperatorDiff diff;
  diff.slow_rank = 1;
  diff.fast_rank = 0;
  diff.slow_computing_ns_per_step = Us(1000);
  diff.fast_computing_ns_per_step = Us(990);
  diff.computes_alike = true;
  diff.step_operators = {WorkDiff{.name = "MatMulV2",
                                  .slow_calls = 4,
                                  .fast_calls = 4,
                                  .slow_ns = Us(600),
                                  .fast_ns = Us(580),
                                  .slow_self_ns = Us(600),
                                  .fast_self_ns = Us(580)}};
  diff.host_apis = {WorkDiff{.name = "aten::item",
                             .slow_calls = 27,
                             .fast_calls = 27,
                             .slow_ns = Us(80),
                             .fast_ns = Us(90),
                             .slow_self_ns = Us(1),
                             .fast_self_ns = Us(2)}};
  cross.slowest_vs_fastest = diff;
  const std::vector<Finding> findings = StragglerFindingsOfQuietRankZero(cross);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_DOUBLE_EQ(Number(f, "slowest_rank"), 1);
  EXPECT_DOUBLE_EQ(Number(f, "fastest_rank"), 0);
  EXPECT_NE(Text(f, "slowest_vs_fastest_rank").find("rank 1 computes most ("), std::string::npos)
      << Text(f, "slowest_vs_fastest_rank");
  EXPECT_NE(Text(f, "slowest_vs_fastest_rank")
                .find("alike within 5 % (the differences below are noise, not a cause): device operators per step "
                      "over whole steps"),
            std::string::npos)
      << Text(f, "slowest_vs_fastest_rank");
  EXPECT_NE(Text(f, "slowest_vs_fastest_rank").find("MatMulV2 +20.0 us (580.0 us -> 600.0 us)"), std::string::npos)
      << Text(f, "slowest_vs_fastest_rank");
  EXPECT_NE(Text(f, "slowest_vs_fastest_apis")
                .find("aten::item -10.0 us (90.0 us -> 80.0 us, self 2.0 us -> 1.0 us, "
                      "calls 27 -> 27)"),
            std::string::npos)
      << Text(f, "slowest_vs_fastest_apis");
}

}  // namespace
}  // namespace tuneprof::rule_test

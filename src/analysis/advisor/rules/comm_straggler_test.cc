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

// The timeline's arrivals name rank 1, the HCCL wait ratios rank 2: whichever rule a rank's finding
// quotes, it says the other one disagrees (as `comm` does), naming both ranks.
TEST(RuleFamilies, StragglerFindingsSayWhenTheTwoRulesDisagree) {
  CrossRankCommunication cross;
  cross.straggler_rank = 1;
  cross.straggler_stands_out = true;
  cross.straggler_reason = "last at 4 of 4 matched collectives";
  cross.ascend_slow_rank = 2;
  cross.ascend_verdict = "slow rank";
  cross.ranks.push_back(RankWait{.rank = 0,
                                 .matched = 4,
                                 .communication_ns = Us(400),
                                 .wait_ns = Us(300),
                                 .transfer_ns = Us(100),
                                 .wait_ratio = 0.75});
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
  }
  cross.ascend_slow_rank = 1;  // the same rank: nothing to say
  findings.clear();
  RuleCommStraggler(rank, AdvisorConfig(), &findings);
  ASSERT_EQ(findings.size(), 2u);
  for (const Finding& f : findings) EXPECT_EQ(f.title.find("disagree"), std::string::npos) << f.title;
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
}

}  // namespace
}  // namespace tuneprof::rule_test

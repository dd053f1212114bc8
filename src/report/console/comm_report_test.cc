#include "report/console/comm_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/comm/comm_cross_rank.h"

namespace tuneprof {
namespace {

// `n` ranks whose communication is 58-59 % exposed, every rank waiting for rank 3, the straggler.
CommAnalysis ManyRanks(int n) {
  CommAnalysis a;
  a.cross_rank.straggler_rank = 3;
  a.cross_rank.straggler_stands_out = true;
  a.cross_rank.straggler_reason = "last at 4 of 4 matched collectives";
  a.cross_rank.matched_collectives = 4;
  for (int r = 0; r < n; ++r) {
    RankCommunication rank;
    rank.rank = r;
    rank.path = "rank" + std::to_string(r) + ".json";
    rank.steps = 4;
    rank.exposed_communication_ns = 11'200'000 + 1000 * r;
    rank.exposed_share_of_wall = 0.58 + 0.0002 * r;
    a.ranks.push_back(rank);
    RankWait wait;
    wait.rank = r;
    wait.matched = 4;
    wait.communication_ns = 11'200'000;
    wait.wait_ns = r == 3 ? 0 : 8'000'000;
    wait.wait_ratio = static_cast<double>(wait.wait_ns) / 11'200'000;
    a.cross_rank.ranks.push_back(wait);
  }
  JudgeCommunication(&a);
  return a;
}

size_t Lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(CommReportTest, FewRanksAreListedOneByOne) {
  const std::string text = RenderCommText(ManyRanks(8));
  EXPECT_NE(text.find("rank 7  rank7.json"), std::string::npos);
  EXPECT_NE(text.find("  - rank 0: 71.4 % of its communication time waits for late ranks (the straggler: rank 3)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("more ranks"), std::string::npos);
}

// At 1,024 ranks the verdict sat 10,000 lines down: the text now shows the ranks that stand out and
// folds the reasons, each rule once with its ranks and the range of its figures.
TEST(CommReportTest, ManyRanksShowTheNotableOnesAndFoldTheReasons) {
  const CommAnalysis a = ManyRanks(1024);
  EXPECT_EQ(a.reasons.size(), 1024u + 1023u);  // the JSON's per-rank lines are all kept
  const std::string text = RenderCommText(a);
  EXPECT_LT(Lines(text), 80u) << text;
  EXPECT_NE(text.find("1024 ranks: per-rank detail below only for ranks 0,3,1023"), std::string::npos) << text;
  EXPECT_EQ(text.find("rank 17  rank17.json"), std::string::npos);
  EXPECT_NE(text.find("... 1021 more ranks (tuneprof comm --json lists every rank)"), std::string::npos) << text;
  EXPECT_NE(text.find("  - ranks 0-1023: exposed communication above 20.0 % of the step's device span: "
                      "2.800-3.056 ms per step, 58.0-78.5 %\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "  - ranks 0-2,4-1023: waits for late ranks (the straggler: rank 3): 71.4 % of the communication time\n"),
      std::string::npos)
      << text;
}

// The straggler line's forms and the msprof rule's verdict, which the corpus's runs do not all
// reach: each names the rank and says why, or why none is named.
TEST(CommReportTest, StragglerLineSaysWhyARankIsOrIsNotNamed) {
  CommAnalysis a = ManyRanks(4);
  a.cross_rank.straggler_within_clock_uncertainty = true;
  EXPECT_NE(RenderCommText(a).find("  straggler: not named: rank 3 (last at 4 of 4 matched collectives); align the "
                                   "hosts' clocks (PTP, chrony) and profile again\n"),
            std::string::npos);
  a.cross_rank.straggler_within_clock_uncertainty = false;
  a.cross_rank.straggler_stands_out = false;
  EXPECT_NE(RenderCommText(a).find("  straggler: none stands out: rank 3 made the others wait longest"),
            std::string::npos);
  a.cross_rank.straggler_rank.reset();
  a.cross_rank.straggler_reason.clear();
  EXPECT_NE(RenderCommText(a).find("  straggler: none (no rank made the others wait)\n"), std::string::npos);
  // Only a pipeline's hand-offs made ranks wait: the reason says so in place of a rank.
  a.cross_rank.straggler_reason = "the late arrivals are the pipeline's hand-offs between stages";
  EXPECT_NE(RenderCommText(a).find("  straggler: none: the late arrivals are the pipeline's hand-offs between "
                                   "stages\n"),
            std::string::npos);
}

TEST(CommReportTest, AscendVerdictSaysWhenTheTwoSlowRankRulesDisagree) {
  CommAnalysis a = ManyRanks(4);
  a.cross_rank.ascend_verdict = "slow rank";
  a.cross_rank.ascend_max_wait_rank = 1;
  a.cross_rank.ascend_slow_rank = 1;
  const std::string text = RenderCommText(a);
  EXPECT_NE(text.find("\nHCCL (msprof rule): most wait on rank 1; slow rank: 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  the two rules disagree: the timeline's arrivals name rank 3, the wait ratios rank 1;"),
            std::string::npos)
      << text;
  a.cross_rank.ascend_verdict.clear();
  EXPECT_EQ(RenderCommText(a).find("HCCL (msprof rule)"), std::string::npos);
}

// Where no rank's HCCL operations wait, the rule names neither a rank that waits most nor a slow link.
TEST(CommReportTest, AscendVerdictOnZeroWaitsNamesNoRank) {
  CommAnalysis a = ManyRanks(4);
  a.cross_rank.ascend_verdict = "no wait";
  const std::string text = RenderCommText(a);
  EXPECT_NE(text.find("\nHCCL (msprof rule): no rank's HCCL operations wait: no slow rank, no slow link\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("most wait on"), std::string::npos) << text;
}

}  // namespace
}  // namespace tuneprof

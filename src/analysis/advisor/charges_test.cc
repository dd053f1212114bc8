// charges.h: a wait charged once to its cause with or without a timeline, and claims of one part kept within
// the part of the rank each finding quotes, on hand-built findings.
#include "analysis/advisor/charges.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneprof {
namespace {

Finding Claim(std::string id, TimePart part, double gain_ns, int64_t rank) {
  Finding f;
  f.id = std::move(id);
  f.saves_from = part;
  f.uncapped_gain_ns = gain_ns;
  f.estimated_gain_ns = gain_ns;
  f.evidence_rank = rank;
  return f;
}

RankAdvice RankWithIdle(int64_t rank, double idle_ns) {
  RankAdvice advice;
  advice.rank = rank;
  advice.split.steps = 1;
  advice.split.part_ns[static_cast<size_t>(TimePart::kIdle)] = idle_ns;
  advice.split.step_ns = idle_ns;
  return advice;
}

double EvidenceOf(const Finding& f, std::string_view label) {
  for (const Evidence& e : f.evidence) {
    if (e.label == label && e.number) return *e.number;
  }
  return -1;
}

// An uneven MoE load: rank 0 exposes 2724 us of all-to-all a step, 1764 us of it waiting for rank 1's experts.
struct MoeRun {
  std::vector<Finding> findings;
  MoeBalance moe;
  MoeRun() {
    Finding exposed = Claim("communication.exposed", TimePart::kCommunication, 2724e3, 0);
    exposed.AddNumber("exposed_communication_us", 2724, "us");
    findings = {exposed, Claim("moe.expert_imbalance", TimePart::kComputeBound, 2394e3, 1)};
    moe.ranks = {0, 1};
    moe.wait_ns_per_step = {1764e3, 0};
  }
};

TEST(ChargeWaitToItsCause, WithoutATimelineTheMoeWaitIsTheExpertRanksOwn) {
  MoeRun run;
  ChargeWaitToItsCause({}, nullptr, &run.moe, &run.findings);
  const Finding& exposed = run.findings[0];
  EXPECT_DOUBLE_EQ(exposed.estimated_gain_ns, 960e3);  // 2724 - 1764 us
  EXPECT_DOUBLE_EQ(EvidenceOf(exposed, "wait_for_slowest_experts_us"), 1764);
  EXPECT_NE(exposed.gain_cut.find("moe.expert_imbalance counts"), std::string::npos);
}

TEST(ChargeWaitToItsCause, TheTimelinesWaitComesFirst) {
  MoeRun run;
  RankCommunication comm;
  comm.steps = 2;
  CrossRankCommunication cross;
  cross.ranks.push_back(RankWait{.rank = 0, .matched = 4, .wait_ns = 2 * 1000000});
  ChargeWaitToItsCause({&comm}, &cross, &run.moe, &run.findings);
  EXPECT_DOUBLE_EQ(run.findings[0].estimated_gain_ns, 1724e3);  // 2724 - 1000 us a step
  EXPECT_DOUBLE_EQ(EvidenceOf(run.findings[0], "wait_for_last_arrival_us"), 1000);
  EXPECT_EQ(EvidenceOf(run.findings[0], "wait_for_slowest_experts_us"), -1);
}

TEST(ChargeWaitToItsCause, NoCauseNoCut) {
  MoeRun run;
  run.findings.pop_back();
  ChargeWaitToItsCause({}, nullptr, &run.moe, &run.findings);
  EXPECT_DOUBLE_EQ(run.findings[0].estimated_gain_ns, 2724e3);
  EXPECT_TRUE(run.findings[0].gain_cut.empty());
}

// `findings` after KeepPartClaimsWithinQuotedRanks over two ranks: rank 0 with 100 ms idle, rank 1 with 110 ms.
std::vector<Finding> KeptWithinTwoIdleRanks(std::vector<Finding> findings) {
  const std::vector<RankAdvice> ranks = {RankWithIdle(0, 100e6), RankWithIdle(1, 110e6)};
  KeepPartClaimsWithinQuotedRanks(ranks, &findings);
  return findings;
}

TEST(KeepPartClaimsWithinQuotedRanks, TwoRanksClaimsOfOnePartFitTheSmallerQuote) {
  // 70 (quoting rank 0) + 45 (quoting rank 1) would be 115 of rank 1's 110.
  const std::vector<Finding> findings = KeptWithinTwoIdleRanks(
      {Claim("idle.low_utilization", TimePart::kIdle, 70e6, 0), Claim("host.pauses", TimePart::kIdle, 45e6, 1),
       Claim("host.launch_bound", TimePart::kHostWait, 5e6, 1)});
  EXPECT_DOUBLE_EQ(findings[0].estimated_gain_ns, 70e6);
  EXPECT_TRUE(findings[0].gain_cut.empty());
  EXPECT_DOUBLE_EQ(findings[1].estimated_gain_ns, 40e6);  // rank 1's 110 less the 70 claimed
  EXPECT_NE(findings[1].gain_cut.find("rank 1's 110.000 ms of idle"), std::string::npos);
  // A part the ranks' splits leave at 0 caps to 0; the finding keeps its place.
  EXPECT_DOUBLE_EQ(findings[2].estimated_gain_ns, 0);
}

TEST(KeepPartClaimsWithinQuotedRanks, ClaimsWithinTheirRanksAreLeftAlone) {
  const std::vector<Finding> findings = KeptWithinTwoIdleRanks({Claim("idle.low_utilization", TimePart::kIdle, 60e6, 0),
                                                                Claim("host.pauses", TimePart::kIdle, 40e6, 1),
                                                                Claim("unknown.rank", TimePart::kIdle, 500e6, 7)});
  // The last quotes no rank of the run: not this cap's to judge.
  for (const Finding& f : findings) {
    EXPECT_DOUBLE_EQ(f.estimated_gain_ns, f.uncapped_gain_ns) << f.id.view();
    EXPECT_TRUE(f.gain_cut.empty()) << f.id.view();
  }
}

}  // namespace
}  // namespace tuneprof

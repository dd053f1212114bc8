#include "analysis/comm/wait_causes.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>

#include "analysis/comm/collective_for_test.h"
#include "analysis/comm/comm_cross_rank.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

int64_t Cause(const WaitCauseTimes& times, WaitCause cause) { return times[static_cast<size_t>(cause)]; }

Collective At(int64_t start_ns, int64_t duration_ns, std::string group = "0", int64_t sequence = 0) {
  return comm_test::CollectiveAt(CollectiveType::kAllReduce, std::move(group), sequence, start_ns, duration_ns);
}

// Between two collectives of a group ([0, 100) and from 1000 us): an operator's kernel computes 300 us,
// the DataLoader holds the host 100 us, another group's collective is in flight 100 us; the rest is host.
// A group's first collective in the trace has no earlier end of the group to start from: its lead-in starts
// where the step that launched it starts (ranks start a step together), so a rank that idles 2 ms before
// its first all-reduce of the profile is charged a host pause there as at the later ones.
TEST(WaitCausesTest, AGroupsFirstCollectiveLeadInStartsAtItsStep) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(5000));
  hand.LaunchedKernel("sgemm", Us(10), Us(20), Us(2000), 1);
  const Trace trace = hand.Finish();
  Collective first = At(Us(4020), Us(800));
  first.step = 1;
  const std::vector<CollectiveLeadIn> lead_ins = MeasureLeadIns(trace, {first});
  ASSERT_EQ(lead_ins.size(), 1u);
  EXPECT_EQ(Cause(lead_ins[0].causes, WaitCause::kCompute), Us(2000));
  EXPECT_EQ(Cause(lead_ins[0].causes, WaitCause::kHostPause), Us(2020));
  // Outside any step: still no lead-in.
  const std::vector<CollectiveLeadIn> outside = MeasureLeadIns(trace, {At(Us(6000), Us(100))});
  EXPECT_EQ(outside[0].causes, WaitCauseTimes{});
  // After another group's collective in the step (a pipeline's hand-off) the step start is no common point.
  Collective hand_off = At(Us(3000), Us(100), "pp");
  hand_off.step = 1;
  const std::vector<CollectiveLeadIn> after = MeasureLeadIns(trace, {hand_off, first});
  EXPECT_EQ(after[1].causes, WaitCauseTimes{});
}

TEST(WaitCausesTest, LeadInSplitsTheTimeSinceThePreviousCollectiveEnded) {
  HandBuiltTrace hand;
  hand.Host(EventKind::kHostOp, "aten::mm", Us(150), Us(20));
  hand.LaunchedKernel("sgemm", Us(155), Us(200), Us(300), 1);
  hand.Host(EventKind::kUserAnnotation, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", Us(550),
            Us(100));
  hand.Device(EventKind::kKernel, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Us(700), Us(100),
              kNoId, 20);
  const Trace trace = hand.Finish();
  const std::vector<CollectiveLeadIn> lead_ins = MeasureLeadIns(trace, {At(0, Us(100)), At(Us(1000), Us(50))});

  ASSERT_EQ(lead_ins.size(), 2u);
  EXPECT_EQ(lead_ins[0].causes, WaitCauseTimes{});  // a group's first collective has no lead-in
  const WaitCauseTimes& causes = lead_ins[1].causes;
  EXPECT_EQ(Cause(causes, WaitCause::kCompute), Us(300));
  EXPECT_EQ(Cause(causes, WaitCause::kDataLoading), Us(100));
  EXPECT_EQ(Cause(causes, WaitCause::kOwnWait), Us(100));
  EXPECT_EQ(Cause(causes, WaitCause::kHostPause), Us(400));
  EXPECT_EQ(Cause(causes, WaitCause::kUnexplained), 0);
  ASSERT_EQ(lead_ins[1].operators.size(), 1u);
  EXPECT_EQ(lead_ins[1].operators[0].name, "aten::mm");  // the kernel counts under the operator that launched it
  EXPECT_EQ(lead_ins[1].operators[0].ns, Us(300));

  // The same from the caller's host operator tree.
  const HostOpTree tree = BuildHostOpTree(trace);
  const std::vector<CollectiveLeadIn> from_tree = MeasureLeadIns(trace, {At(0, Us(100)), At(Us(1000), Us(50))}, &tree);
  ASSERT_EQ(from_tree.size(), 2u);
  EXPECT_EQ(from_tree[1].causes, causes);
  ASSERT_EQ(from_tree[1].operators.size(), 1u);
  EXPECT_EQ(from_tree[1].operators[0].name, "aten::mm");
  EXPECT_EQ(from_tree[1].operators[0].ns, Us(300));
}

CollectiveLeadIn LeadIn(int64_t compute, int64_t host, int64_t data) {
  CollectiveLeadIn l;
  l.causes[static_cast<size_t>(WaitCause::kCompute)] = compute;
  l.causes[static_cast<size_t>(WaitCause::kHostPause)] = host;
  l.causes[static_cast<size_t>(WaitCause::kDataLoading)] = data;
  return l;
}

TEST(WaitCausesTest, TheWindowGoesToWhatTheLateRankDidMoreAndTheRestIsUnexplained) {
  const WaitCauseTimes charged = ChargeWindow(LeadIn(Us(500), Us(300), Us(0)), LeadIn(Us(400), Us(350), 0), Us(150));
  EXPECT_EQ(Cause(charged, WaitCause::kCompute), Us(100));  // host: less than the median rank, nothing
  EXPECT_EQ(Cause(charged, WaitCause::kHostPause), 0);
  EXPECT_EQ(Cause(charged, WaitCause::kUnexplained), Us(50));
}

TEST(WaitCausesTest, ExtrasLongerThanTheWindowShareItInProportion) {
  const WaitCauseTimes charged = ChargeWindow(LeadIn(Us(300), Us(100), Us(0)), LeadIn(0, 0, 0), Us(200));
  EXPECT_EQ(Cause(charged, WaitCause::kCompute), Us(150));
  EXPECT_EQ(Cause(charged, WaitCause::kHostPause), Us(50));
  EXPECT_EQ(Cause(charged, WaitCause::kUnexplained), 0);
  EXPECT_EQ(ChargeWindow(LeadIn(Us(300), 0, 0), LeadIn(0, 0, 0), 0), WaitCauseTimes{});
}

// Three ranks; at the second collective rank 2 arrives 520 us after the median of the others (the lower
// one of two: rank 0), having computed 400 us more in aten::embedding_backward and paused its host 120 us
// more than rank 0.
TEST(WaitCausesTest, TheLateRankIsChargedOnceAgainstTheMedianRank) {
  std::vector<RankCommunication> ranks(3);
  const int64_t arrivals[] = {Us(1000), Us(1020), Us(1520)};
  for (size_t r = 0; r < ranks.size(); ++r) {
    ranks[r].rank = static_cast<int64_t>(r);
    ranks[r].collectives = {At(0, Us(100), "0", 0), At(arrivals[r], Us(2000) - arrivals[r], "0", 1)};
    ranks[r].lead_ins.resize(2);
    ranks[r].lead_ins[1] = LeadIn(Us(600), arrivals[r] - Us(700), 0);
    ranks[r].lead_ins[1].operators = {{"aten::linear", Us(600)}};
  }
  ranks[2].lead_ins[1] = LeadIn(Us(1000), Us(420), 0);
  ranks[2].lead_ins[1].operators = {{"aten::embedding_backward", Us(400)}, {"aten::linear", Us(600)}};
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);

  ASSERT_TRUE(x.wait_causes_known);
  const RankWait& late = x.ranks[2];
  EXPECT_EQ(late.held_up_ns, Us(520));
  EXPECT_EQ(late.late_collectives, 1u);
  EXPECT_EQ(Cause(late.held_up_by_cause, WaitCause::kCompute), Us(400));
  EXPECT_EQ(Cause(late.held_up_by_cause, WaitCause::kHostPause), Us(120));
  EXPECT_EQ(Cause(late.held_up_by_cause, WaitCause::kUnexplained), 0);
  ASSERT_EQ(late.late_operator_extra.size(), 1u);
  EXPECT_EQ(late.late_operator_extra[0].name, "aten::embedding_backward");
  EXPECT_EQ(late.late_operator_extra[0].ns, Us(400));
  EXPECT_EQ(x.ranks[0].held_up_ns, 0);
  EXPECT_EQ(x.ranks[1].held_up_ns, 0);
}

// Rank 0's collective runs 200 us from 1000 us and ends before rank 1 arrives 800 us after it: rank 0
// waited 200 us, so rank 1 held it up 200 us, not 800, and that counts as one late arrival.
TEST(WaitCausesTest, TheWindowIsAtMostTheWaitTheMedianRankHad) {
  std::vector<RankCommunication> ranks(2);
  const int64_t arrivals[] = {Us(1000), Us(1800)};
  for (size_t r = 0; r < ranks.size(); ++r) {
    ranks[r].rank = static_cast<int64_t>(r);
    ranks[r].collectives = {At(arrivals[r], Us(200))};
    ranks[r].lead_ins = {LeadIn(Us(100), 0, 0)};
  }
  ranks[1].lead_ins[0] = LeadIn(Us(900), 0, 0);
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);

  const RankWait& late = x.ranks[1];
  EXPECT_EQ(late.held_up_ns, Us(200));
  EXPECT_EQ(Cause(late.held_up_by_cause, WaitCause::kCompute), Us(200));
  EXPECT_EQ(Cause(late.held_up_by_cause, WaitCause::kUnexplained), 0);
  EXPECT_EQ(late.wait_caused_ns, Us(200));
  EXPECT_EQ(late.late_collectives, late.times_last);
}

// Rank 0 runs two collectives of two groups at once from 1000 us to 1500 us, and rank 1 arrives at both
// 400 us later: rank 0 waited 400 us once, so rank 1 is charged 400 us, not twice that: the 300 us more
// host pause before the first, and 100 us unexplained.
TEST(WaitCausesTest, AWaitSharedByCollectivesInFlightAtOnceIsChargedOnce) {
  std::vector<RankCommunication> ranks(2);
  const int64_t arrivals[] = {Us(1000), Us(1400)};
  for (size_t r = 0; r < ranks.size(); ++r) {
    ranks[r].rank = static_cast<int64_t>(r);
    ranks[r].collectives = {At(arrivals[r], Us(1500) - arrivals[r], "a"), At(arrivals[r], Us(1500) - arrivals[r], "b")};
    ranks[r].lead_ins = {LeadIn(0, Us(100), 0), LeadIn(0, Us(100), 0)};
  }
  ranks[1].lead_ins = {LeadIn(0, Us(400), 0), LeadIn(0, Us(100), 0)};
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);

  const RankWait& late = x.ranks[1];
  EXPECT_EQ(late.held_up_ns, Us(300));
  EXPECT_EQ(Cause(late.held_up_by_cause, WaitCause::kHostPause), Us(300));
  EXPECT_EQ(Cause(late.held_up_by_cause, WaitCause::kUnexplained), Us(100));
  EXPECT_EQ(late.wait_caused_ns, Us(400));
  EXPECT_EQ(late.late_collectives, 2u);
}

// The same late rank as above, whose whole compute is only 250 us longer than the median rank's (one step
// each): its operator diff over the lead-ins (400 us in aten::embedding_backward, 50 us in aten::mul) claims
// no more than that, the largest first.
TEST(WaitCausesTest, TheOperatorDiffIsAtMostTheRanksComputeDifference) {
  std::vector<RankCommunication> ranks(3);
  const int64_t arrivals[] = {Us(1000), Us(1020), Us(1520)};
  for (size_t r = 0; r < ranks.size(); ++r) {
    ranks[r].rank = static_cast<int64_t>(r);
    ranks[r].steps = 1;
    ranks[r].computing_ns = Us(1000);
    ranks[r].collectives = {At(0, Us(100), "0", 0), At(arrivals[r], Us(2000) - arrivals[r], "0", 1)};
    ranks[r].lead_ins.resize(2);
    ranks[r].lead_ins[1] = LeadIn(Us(600), arrivals[r] - Us(700), 0);
    ranks[r].lead_ins[1].operators = {{"aten::linear", Us(600)}};
  }
  ranks[2].computing_ns = Us(1250);
  ranks[2].lead_ins[1] = LeadIn(Us(1000), Us(420), 0);
  ranks[2].lead_ins[1].operators = {
      {"aten::embedding_backward", Us(400)}, {"aten::linear", Us(600)}, {"aten::mul", Us(50)}};
  CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  const RankWait& late = x.ranks[2];
  ASSERT_EQ(late.late_operator_extra.size(), 1u);
  EXPECT_EQ(late.late_operator_extra[0].ns, Us(250));
  ranks[2].computing_ns = Us(1420);  // room for the largest and 20 us of the next
  x = AnalyzeAcrossRanks(ranks);
  ASSERT_EQ(x.ranks[2].late_operator_extra.size(), 2u);
  EXPECT_EQ(x.ranks[2].late_operator_extra[0].ns, Us(400));
  EXPECT_EQ(x.ranks[2].late_operator_extra[1].name, "aten::mul");
  EXPECT_EQ(x.ranks[2].late_operator_extra[1].ns, Us(20));
  EXPECT_EQ(Cause(x.ranks[2].held_up_by_cause, WaitCause::kCompute), Us(400));  // the causes are the windows'
}

// A rank of PP2 x DP2 (stage 0: ranks 0 and 1 over groups "d0"; stage 1: ranks 2 and 3, "d1"; rank r hands
// on to rank r + 2 over "p<r>"). Rank 2 receives 500 us after rank 0 sent, having computed 500 us more: the
// pipeline stages charge that wait, so the hand-off is left out of rank 2's causes and operators. Rank 1 is
// late at its stage's all-reduce by a 200 us host pause: that stays.
Collective StageCollective(int64_t start_us, int64_t duration_us, std::string group, std::string_view members,
                           int64_t sequence, P2pDirection direction = P2pDirection::kUnknown) {
  Collective c = At(Us(start_us), Us(duration_us), std::move(group), sequence);
  c.group_ranks = members;  // a literal: the collective keeps a view
  if (direction != P2pDirection::kUnknown) {
    c.type = CollectiveType::kSendRecv;
    c.direction = direction;
  }
  return c;
}

TEST(WaitCausesTest, PipelineHandOffsAreLeftToTheStages) {
  std::vector<RankCommunication> ranks(4);
  for (int64_t r = 0; r < 4; ++r) {
    RankCommunication& rank = ranks[static_cast<size_t>(r)];
    rank.rank = r;
    rank.steps = 1;
    rank.wall_ns = Us(3000);
    const bool first = r < 2;
    const std::string dp = first ? "d0" : "d1", pp = "p" + std::to_string(r % 2);
    const std::string_view dp_members = first ? "[0, 1]" : "[2, 3]", pp_members = r % 2 == 0 ? "[0, 2]" : "[1, 3]";
    rank.computing_ns = Us(first ? 900 : 1400);
    rank.collectives = {StageCollective(0, 100, dp, dp_members, 0),
                        StageCollective(first ? 1000 : 1500, first ? 600 : 100, pp, pp_members, 0,
                                        first ? P2pDirection::kSend : P2pDirection::kRecv),
                        StageCollective(r == 1 ? 2200 : 2000, r == 1 ? 100 : (first ? 300 : 100), dp, dp_members, 1)};
    rank.lead_ins.resize(3);
    rank.lead_ins[1] = LeadIn(Us(first ? 900 : 1400), 0, 0);
    rank.lead_ins[1].operators = {{"gemm", Us(first ? 900 : 1400)}};
    rank.lead_ins[2] = LeadIn(Us(100), Us(r == 1 ? 300 : 100), 0);
  }
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  ASSERT_TRUE(x.pipeline);
  ASSERT_TRUE(x.wait_causes_known);
  const RankWait& stage1 = x.ranks[2];
  EXPECT_EQ(stage1.late_hand_offs, 1u);
  EXPECT_EQ(stage1.late_collectives, 0u);
  EXPECT_EQ(stage1.held_up_ns, 0);
  EXPECT_TRUE(stage1.late_operator_extra.empty());
  const RankWait& paused = x.ranks[1];
  EXPECT_EQ(paused.late_collectives, 1u);
  EXPECT_EQ(paused.held_up_ns, Us(200));
  EXPECT_EQ(Cause(paused.held_up_by_cause, WaitCause::kHostPause), Us(200));
  EXPECT_EQ(paused.late_hand_offs, 0u);
  EXPECT_EQ(x.critical_links.size(), 6u);  // the critical path still sees every matched collective
}

TEST(WaitCausesTest, RanksWithoutLeadInsGiveNoCauses) {
  std::vector<RankCommunication> ranks(2);
  for (size_t r = 0; r < ranks.size(); ++r) {
    ranks[r].rank = static_cast<int64_t>(r);
    ranks[r].collectives = {At(Us(100) * static_cast<int64_t>(r), Us(500))};
  }
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  EXPECT_FALSE(x.wait_causes_known);
  EXPECT_EQ(x.ranks[1].held_up_ns, 0);
}

}  // namespace
}  // namespace tuneprof

#include "analysis/comm/pipeline_stages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/comm/comm_cross_rank.h"
#include "analysis/comm/pipeline_placement.h"
#include "analysis/comm/pipeline_ranks_for_test.h"

namespace tuneprof {
namespace {

using pipeline_ranks::GpuRank;
using pipeline_ranks::kMs;
using pipeline_ranks::Rank;

// The stages are inferred from the p2p pattern under `role`, stage i holding the ranks `ranks_by_stage[i]`.
::testing::AssertionResult InferredStages(const std::optional<PipelineAnalysis>& p, std::string_view role,
                                          const std::vector<std::vector<int64_t>>& ranks_by_stage) {
  if (!p) return ::testing::AssertionFailure() << "no stages";
  if (!p->inferred) return ::testing::AssertionFailure() << "the stages are not inferred";
  if (p->group_name != role) return ::testing::AssertionFailure() << "role \"" << p->group_name << "\"";
  if (p->stages.size() != ranks_by_stage.size()) return ::testing::AssertionFailure() << p->stages.size() << " stages";
  for (size_t i = 0; i < ranks_by_stage.size(); ++i) {
    if (p->stages[i].ranks != ranks_by_stage[i]) return ::testing::AssertionFailure() << "stage " << i << "'s ranks";
  }
  return ::testing::AssertionSuccess();
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

// A Bubble of hcom_receive operations holds their wait and their transfer: only the wait (communication.json's
// Wait Time) is charged and scales the what-if; without per-operation waits the bubble stands for it.
TEST(PipelineStagesTest, WaitingIsTheP2pWaitNotTheTransfer) {
  std::vector<RankCommunication> ranks = {Rank(0, 60, 110, 44), Rank(1, 60, 110, 44), Rank(2, 100, 160, 14),
                                          Rank(3, 100, 160, 14)};
  const std::vector<double> wait_ms = {40, 40, 10, 10};  // a step; the other 4 ms of each bubble is transfer
  for (size_t i = 0; i < ranks.size(); ++i) {
    AscendCommOp op;
    op.op_name = "hcom_receive__1_0_1";
    op.p2p = true;
    op.wait_ms = 2 * wait_ms[i];
    ranks[i].ascend_ops.push_back(op);
  }
  auto p = AnalyzePipelineStages(ranks);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->stages[0].p2p_wait_known);
  EXPECT_DOUBLE_EQ(p->stages[0].waiting_ns_per_step, 40.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[0].wait_for_slowest_ns_per_step, 40.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[0].fill_drain_ns_per_step, 0);
  EXPECT_DOUBLE_EQ(p->stages[1].fill_drain_ns_per_step, 10.0 * kMs);
  EXPECT_DOUBLE_EQ(p->balanced_gain_ns_per_step, 20.0 * 1.10 * kMs);  // (100 - 80) x (100 + 10) / 100

  for (RankCommunication& r : ranks) r.ascend_ops.clear();
  p = AnalyzePipelineStages(ranks);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->stages[1].p2p_wait_known);
  EXPECT_EQ(p->stages[1].p2p_wait_measure, P2pWaitMeasure::kNone);
  EXPECT_DOUBLE_EQ(p->stages[1].waiting_ns_per_step, 14.0 * kMs);
  EXPECT_DOUBLE_EQ(p->balanced_gain_ns_per_step, 20.0 * 1.14 * kMs);
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

// Rank 0 sends twice to rank 1 and gets there 30 and 10 ms before rank 1's receive: it waits 40 ms; rank 1
// never waits. No group names the pipeline: rank 0 only sends, rank 1 only receives, so stage 0 is rank 0.
TEST(PipelineStagesTest, WaitUntilThePeerStartsAndStagesFromWhoSendsToWhom) {
  const RankCommunication sender = GpuRank(0, 100, "7", "[0, 1]", P2pDirection::kSend, {{0, 32}, {50, 12}});
  const RankCommunication receiver = GpuRank(1, 300, "7", "[0, 1]", P2pDirection::kRecv, {{30, 2}, {60, 2}});
  const auto p = AnalyzePipelineStages({receiver, sender});
  ASSERT_TRUE(InferredStages(p, "p2p chain", {{0}, {1}}));
  EXPECT_DOUBLE_EQ(p->stages[0].p2p_wait_ns_per_step, 40.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[0].bubble_ns_per_step, 40.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[1].p2p_wait_ns_per_step, 0);
  EXPECT_EQ(p->stages[0].p2p_wait_measure, P2pWaitMeasure::kPeerStart);
  EXPECT_TRUE(p->p2p_wait_note.empty());
  EXPECT_DOUBLE_EQ(GpuPipelineWaitNsPerStep(*p, 0), 40.0 * kMs);
  EXPECT_EQ(p->slowest_stage, 1);
}

// Clocks taken out: rank 1's clock runs 20 ms ahead, so its receives started 20 ms earlier than written.
TEST(PipelineStagesTest, PeerStartsOnTheAlignedClocks) {
  const RankCommunication sender = GpuRank(0, 100, "7", "[0, 1]", P2pDirection::kSend, {{0, 32}, {50, 12}});
  const RankCommunication receiver = GpuRank(1, 300, "7", "[0, 1]", P2pDirection::kRecv, {{30, 2}, {60, 2}});
  ClockAlignment clocks;
  clocks.ranks = {RankClockOffset{0, 0, 0, 3, false}, RankClockOffset{1, 20 * kMs, 0, 3, true}};
  const auto p = AnalyzePipelineStages({sender, receiver}, clocks);
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->stages[0].p2p_wait_ns_per_step, 10.0 * kMs);  // 30 - 20, and 60 - 20 - 50 = -10: none
  // Clocks that may be 5 ms apart cannot tell waits of kernels 22 ms long on average: the exposed time, said.
  clocks.ranks[1].uncertainty_ns = 5 * kMs;
  const auto doubtful = AnalyzePipelineStages({sender, receiver}, clocks);
  ASSERT_TRUE(doubtful);
  EXPECT_DOUBLE_EQ(doubtful->stages[0].p2p_wait_ns_per_step, 44.0 * kMs);
  EXPECT_EQ(doubtful->stages[0].p2p_wait_measure, P2pWaitMeasure::kExposed);
  EXPECT_NE(doubtful->p2p_wait_note.find("clock"), std::string::npos);
}

// A named pp group of three ranks whose first member also receives (gradients coming back, as 1F1B sends
// them): the trace does not say which neighbour a kernel pairs with and the order cannot either, so the
// wait is the exposed time, and the note says why.
TEST(PipelineStagesTest, LargerNamedGroupFallsBackToTheExposedTime) {
  RankCommunication a = GpuRank(0, 100, "3", "[0, 1, 2]", P2pDirection::kSend, {{0, 30}, {40, 5}});
  a.collectives[1].direction = P2pDirection::kRecv;
  RankCommunication b = GpuRank(1, 200, "3", "[0, 1, 2]", P2pDirection::kRecv, {{20, 10}});
  for (RankCommunication* r : {&a, &b}) {
    for (Collective& k : r->collectives) k.group_desc = "PIPELINE_MODEL_PARALLEL_GROUP";
  }
  const auto p = AnalyzePipelineStages({a, b});
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->inferred);
  EXPECT_DOUBLE_EQ(p->stages[0].p2p_wait_ns_per_step, 35.0 * kMs);
  EXPECT_EQ(p->stages[0].p2p_wait_measure, P2pWaitMeasure::kExposed);
  EXPECT_NE(p->p2p_wait_note.find("more than two ranks"), std::string::npos);
}

// A forward chain of three ranks in one communicator whose kernels name no peer: rank 0 only sends, rank 2
// only receives, so each send goes to the next member and each receive comes from the previous one, and
// the k-th send to a member pairs with its k-th receive from the rank. `desc` names the group or not.
std::vector<RankCommunication> ChainWithoutPeers(const std::string& desc) {
  RankCommunication a = GpuRank(0, 100, "3", "[0, 1, 2]", P2pDirection::kSend, {{0, 30}, {40, 5}});
  RankCommunication b = GpuRank(1, 200, "3", "[0, 1, 2]", P2pDirection::kRecv, {{20, 10}, {45, 1}});
  RankCommunication c = GpuRank(2, 150, "3", "[0, 1, 2]", P2pDirection::kRecv, {{50, 30}});
  RankCommunication b_sends = GpuRank(1, 200, "3", "[0, 1, 2]", P2pDirection::kSend, {{70, 10}});
  b.collectives.push_back(b_sends.collectives[0]);
  b.collectives[2].sequence = 2;
  for (RankCommunication* r : {&a, &b, &c}) {
    for (Collective& k : r->collectives) k.group_desc = desc;
  }
  return {c, a, b};
}

TEST(PipelineStagesTest, ChainWithoutPeersMatchedInOrder) {
  const auto p = AnalyzePipelineStages(ChainWithoutPeers("PIPELINE_MODEL_PARALLEL_GROUP"));
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->inferred);
  ASSERT_EQ(p->stages.size(), 3u);
  EXPECT_TRUE(p->p2p_wait_note.empty()) << p->p2p_wait_note;
  EXPECT_EQ(p->stages[0].p2p_wait_measure, P2pWaitMeasure::kPeerStart);
  EXPECT_DOUBLE_EQ(p->stages[0].p2p_wait_ns_per_step, 25.0 * kMs);  // 20 - 0, and 45 - 40
  EXPECT_DOUBLE_EQ(p->stages[1].p2p_wait_ns_per_step, 0);
  EXPECT_DOUBLE_EQ(p->stages[2].p2p_wait_ns_per_step, 20.0 * kMs);  // from 50 until rank 1 sends at 70
}

// The same communicator unnamed: its send / receive pattern gives the stages, in the communicator's order.
TEST(PipelineStagesTest, StagesFromAnUnnamedCommunicatorsChain) {
  const auto p = AnalyzePipelineStages(ChainWithoutPeers("undefined"));
  ASSERT_TRUE(InferredStages(p, "p2p chain", {{0}, {1}, {2}}));
  EXPECT_EQ(p->pipeline_size, 3);
  EXPECT_TRUE(p->p2p_wait_note.empty()) << p->p2p_wait_note;
  EXPECT_DOUBLE_EQ(p->stages[0].p2p_wait_ns_per_step, 25.0 * kMs);
  EXPECT_DOUBLE_EQ(p->stages[2].p2p_wait_ns_per_step, 20.0 * kMs);
  // A member that also runs a collective in the communicator: no pipeline of its own.
  std::vector<RankCommunication> mixed = ChainWithoutPeers("undefined");
  mixed[0].collectives[0].type = CollectiveType::kAllReduce;
  EXPECT_FALSE(AnalyzePipelineStages(mixed));
}

// The same group of three, with each kernel naming its peer (Kineto's Dst Rank / Src Rank, NCCL's Peer rank):
// the middle rank receives from rank 0 and sends to rank 2, so rank 2's first kernel in the group is rank 1's
// third; the pair's own order pairs them, and every wait is the time until the peer starts.
TEST(PipelineStagesTest, NamedPeersInALargerGroupWaitForThePeersStart) {
  RankCommunication a = GpuRank(0, 100, "3", "[0, 1, 2]", P2pDirection::kSend, {{0, 30}, {40, 5}});
  RankCommunication b = GpuRank(1, 200, "3", "[0, 1, 2]", P2pDirection::kRecv, {{20, 10}, {45, 1}});
  RankCommunication c = GpuRank(2, 150, "3", "[0, 1, 2]", P2pDirection::kRecv, {{50, 30}});
  RankCommunication b_sends = GpuRank(1, 200, "3", "[0, 1, 2]", P2pDirection::kSend, {{70, 10}});
  b.collectives.push_back(b_sends.collectives[0]);  // two receives from rank 0, then its send to rank 2
  b.collectives[2].sequence = 2;
  for (Collective& k : a.collectives) k.peer = 1;
  for (Collective& k : c.collectives) k.peer = 1;
  b.collectives[0].peer = b.collectives[1].peer = 0;
  b.collectives[2].peer = 2;
  for (RankCommunication* r : {&a, &b, &c}) {
    for (Collective& k : r->collectives) k.group_desc = "PIPELINE_MODEL_PARALLEL_GROUP";
  }
  const auto p = AnalyzePipelineStages({a, b, c});
  ASSERT_TRUE(p);
  ASSERT_EQ(p->stages.size(), 3u);
  EXPECT_TRUE(p->p2p_wait_note.empty()) << p->p2p_wait_note;
  EXPECT_EQ(p->stages[0].p2p_wait_measure, P2pWaitMeasure::kPeerStart);
  EXPECT_DOUBLE_EQ(p->stages[0].p2p_wait_ns_per_step, 25.0 * kMs);  // 20 - 0, and 45 - 40
  EXPECT_DOUBLE_EQ(p->stages[1].p2p_wait_ns_per_step, 0);           // its peers were there first, or it never waits
  EXPECT_DOUBLE_EQ(p->stages[2].p2p_wait_ns_per_step, 20.0 * kMs);  // from 50 until rank 1 sends at 70
}

// PP = 2 with 1F1B over one unnamed two-rank group: rank 3 sends two activations, then receives their
// gradients; rank 1 receives each activation before it sends its gradient back. The rank that sends first
// is stage 0, whichever rank id is lower, and the group is the one the roles call pp.
TEST(PipelineStagesTest, APairBothWaysInAPipelinesOrderIsPpTwo) {
  RankCommunication first = GpuRank(3, 100, "9", "[1, 3]", P2pDirection::kSend, {{0, 1}, {10, 1}, {40, 30}, {80, 5}});
  RankCommunication second = GpuRank(1, 300, "9", "[1, 3]", P2pDirection::kRecv, {{0, 1}, {10, 1}, {69, 1}, {84, 1}});
  first.collectives[2].direction = first.collectives[3].direction = P2pDirection::kRecv;
  second.collectives[2].direction = second.collectives[3].direction = P2pDirection::kSend;
  const auto p = AnalyzePipelineStages({second, first});
  ASSERT_TRUE(InferredStages(p, "p2p chain both ways", {{3}, {1}}));
  EXPECT_EQ(p->slowest_stage, 1);
  // Stage 0 waits from 40 until rank 1 sends at 69, and from 80 until 84: 33 ms.
  EXPECT_DOUBLE_EQ(p->stages[0].p2p_wait_ns_per_step, 33.0 * kMs);
  EXPECT_EQ(InferredPipelineGroups({first, second}), (std::set<std::string>{"9"}));
  // A gradient before its activation is no pipeline's order: rank 1 sending first breaks it.
  second.collectives[0].direction = P2pDirection::kSend;
  second.collectives[2].direction = P2pDirection::kRecv;
  EXPECT_FALSE(AnalyzePipelineStages({second, first}));
  EXPECT_TRUE(InferredPipelineGroups({first, second}).empty());
}

// Three ranks in a chain over two two-rank groups: 2 -> 0 -> 1 (stage order from who sends to whom, not
// the rank ids).
TEST(PipelineStagesTest, ChainOfThree) {
  RankCommunication head = GpuRank(2, 100, "a", "[0, 2]", P2pDirection::kSend, {{0, 10}});
  RankCommunication middle = GpuRank(0, 100, "a", "[0, 2]", P2pDirection::kRecv, {{0, 10}});
  RankCommunication tail = GpuRank(1, 100, "b", "[0, 1]", P2pDirection::kRecv, {{5, 20}});
  RankCommunication forward = GpuRank(0, 100, "b", "[0, 1]", P2pDirection::kSend, {{20, 5}});
  middle.collectives.push_back(forward.collectives[0]);
  const auto p = AnalyzePipelineStages({middle, tail, head});
  ASSERT_TRUE(p);
  ASSERT_EQ(p->stages.size(), 3u);
  EXPECT_EQ(p->stages[0].ranks, (std::vector<int64_t>{2}));
  EXPECT_EQ(p->stages[1].ranks, (std::vector<int64_t>{0}));
  EXPECT_EQ(p->stages[2].ranks, (std::vector<int64_t>{1}));
  EXPECT_EQ(p->pipeline_size, 3);
  EXPECT_DOUBLE_EQ(p->stages[2].p2p_wait_ns_per_step, 15.0 * kMs);  // waits from 5 until rank 0 sends at 20
}

// A GPU chain's slowest stage waits for the others' first micro-batches: stages 100 and 200 ms, the slowest
// waiting 8.333 ms a step for stage 0's work; balanced at 150 ms that wait grows to 12.5 ms, so the step gains
// 50 + 8.333 - 12.5 ms, not 50 x (200 + 8.333) / 200.
TEST(PipelineStagesTest, ChainWhatIfScalesTheFillWithTheOtherStagesWork) {
  EXPECT_NEAR(ChainBalancedGainNs(200, 25.0 / 3, 150, 100), 50 + 25.0 / 3 - 12.5, 1e-9);
  EXPECT_DOUBLE_EQ(ChainBalancedGainNs(200, 10, 200, 200), 0);  // already balanced
  EXPECT_DOUBLE_EQ(ChainBalancedGainNs(200, 10, 150, 0), 0);    // no other stage's work known
  EXPECT_DOUBLE_EQ(ChainBalancedGainNs(200, 0, 150, 100), 50);  // no fill: the extra work alone
}

}  // namespace
}  // namespace tuneprof

namespace tuneprof {
namespace {

// Rank 0 hands two micro-batches to rank 1, which computes three times as long and receives each late: rank
// 0 waits 40 ms at the hand-offs. That wait is the pipeline's bubble, charged to stage 1's compute: no
// straggler is named for it, and the verdict tells it as the bubble, not as ranks waiting for each other.
TEST(PipelineStagesTest, HandOffsNameNoStragglerAndTheVerdictTellsTheBubble) {
  RankCommunication sender = GpuRank(0, 100, "7", "[0, 1]", P2pDirection::kSend, {{0, 32}, {50, 12}});
  const RankCommunication receiver = GpuRank(1, 300, "7", "[0, 1]", P2pDirection::kRecv, {{30, 2}, {60, 2}});
  sender.wall_ns = 150 * kMs;
  CommAnalysis analysis;
  analysis.ranks = {sender, receiver};
  analysis.cross_rank = AnalyzeAcrossRanks(analysis.ranks);
  const CrossRankCommunication& x = analysis.cross_rank;
  ASSERT_TRUE(x.pipeline);
  EXPECT_FALSE(x.straggler_rank);
  EXPECT_NE(x.straggler_reason.find("the pipeline's hand-offs between stages"), std::string::npos);
  EXPECT_EQ(x.ranks[0].wait_ns, 40 * kMs);
  EXPECT_EQ(x.ranks[0].pipeline_wait_ns, 40 * kMs);
  EXPECT_EQ(x.ranks[1].pipeline_wait_caused_ns, 40 * kMs);
  EXPECT_FALSE(WaitRatioOutsidePipeline(x.ranks[0]));
  JudgeCommunication(&analysis);
  ASSERT_FALSE(analysis.reasons.empty());
  EXPECT_NE(analysis.reasons[0].find("rank 0: stage 0 waits 40.000 ms a step for stage 1's compute: the pipeline "
                                     "bubble"),
            std::string::npos)
      << analysis.reasons[0];
  for (const std::string& reason : analysis.reasons) {
    EXPECT_EQ(reason.find("waits for other ranks"), std::string::npos) << reason;
    EXPECT_EQ(reason.find("late ranks"), std::string::npos) << reason;
  }
}

// The next stage waits 20 ms for the first micro-batch: the stage table charges that wait (the schedule's
// fill), so the hand-off is left out of the rank's wait causes (counted as a late hand-off), while the
// critical path keeps its link.
TEST(PipelineStagesTest, HandOffLatenessIsLeftOutOfTheWaitCauses) {
  RankCommunication sender = GpuRank(0, 100, "7", "[0, 1]", P2pDirection::kSend, {{20, 5}});
  RankCommunication receiver = GpuRank(1, 100, "7", "[0, 1]", P2pDirection::kRecv, {{0, 25}});
  sender.lead_ins.resize(sender.collectives.size());
  receiver.lead_ins.resize(receiver.collectives.size());
  const CrossRankCommunication x = AnalyzeAcrossRanks({sender, receiver});
  ASSERT_TRUE(x.pipeline);
  ASSERT_TRUE(x.wait_causes_known);
  EXPECT_EQ(x.ranks[0].late_collectives, 0u);
  EXPECT_EQ(x.ranks[0].late_hand_offs, 1u);
  EXPECT_EQ(x.ranks[0].held_up_ns, 0);
  EXPECT_EQ(x.ranks[0].held_up_by_cause[static_cast<size_t>(WaitCause::kUnexplained)], 0);
  EXPECT_EQ(x.critical_links.size(), 1u);
}

// Even stages name a stage only where its step is longer than another's.
TEST(PipelineStagesTest, EvenStagesNameALongerStepOnly) {
  const auto tie = AnalyzePipelineStages(
      {Rank(0, 150, 200, 40), Rank(1, 150, 200, 40), Rank(2, 150, 200, 40), Rank(3, 150, 200, 40)});
  ASSERT_TRUE(tie);
  EXPECT_TRUE(StagesEven(*tie));
  EXPECT_EQ(StepExtremesOf(*tie).longest, nullptr);
  const auto apart =
      AnalyzePipelineStages({Rank(0, 150, 160, 5), Rank(1, 150, 160, 5), Rank(2, 150, 170, 15), Rank(3, 150, 170, 15)});
  ASSERT_TRUE(apart);
  ASSERT_NE(StepExtremesOf(*apart).longest, nullptr);
  EXPECT_EQ(StepExtremesOf(*apart).longest->stage, 1);
  EXPECT_EQ(StepExtremesOf(*apart).shortest->stage, 0);
}

}  // namespace
}  // namespace tuneprof

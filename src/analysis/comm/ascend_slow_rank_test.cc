#include "analysis/comm/ascend_slow_rank.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/comm/pipeline_ranks_for_test.h"

namespace tuneprof {
namespace {

using pipeline_ranks::Rank;

// Ranks without stages whose HCCL operations wait `wait_ms` (all of it synchronization where `sync`) and
// transit 10 ms each.
std::vector<RankCommunication> UnstagedRanks(const std::vector<double>& wait_ms, bool sync) {
  std::vector<RankCommunication> ranks;
  for (size_t i = 0; i < wait_ms.size(); ++i) {
    RankCommunication& r = ranks.emplace_back();
    r.rank = static_cast<int64_t>(i);
    AscendCommOp op;
    op.op_name = "hcom_allReduce__1_1_1";
    op.wait_ms = wait_ms[i];
    op.synchronization_ms = sync ? wait_ms[i] : 0;
    op.transit_ms = 10;
    r.ascend_ops = {op};
    r.ascend_wait_ratio = wait_ms[i] / (wait_ms[i] + 10);
    r.ascend_synchronization_ratio = op.synchronization_ms / (op.synchronization_ms + 10);
  }
  return ranks;
}

// The rank with the most wait synchronizes: the rank with the smallest wait ratio is slow, unless the ratios
// lie close together; where it does not, the link is.
TEST(AscendSlowRankTest, TheMostWaitDecidesBetweenASlowRankAndASlowLink) {
  AscendSlowRank x = JudgeAscendSlowRank(UnstagedRanks({30, 2, 30}, true), std::nullopt);
  EXPECT_EQ(x.verdict, "slow rank");
  EXPECT_EQ(x.slow_rank, 1);
  EXPECT_FALSE(x.max_wait_rank);  // ranks 0 and 2 tie
  x = JudgeAscendSlowRank(UnstagedRanks({30, 29, 28}, true), std::nullopt);
  EXPECT_EQ(x.verdict, "no clear slow rank");
  EXPECT_EQ(x.max_wait_rank, 0);
  EXPECT_FALSE(x.slow_rank);
  EXPECT_EQ(JudgeAscendSlowRank(UnstagedRanks({30, 2}, false), std::nullopt).verdict, "slow link");
  EXPECT_EQ(JudgeAscendSlowRank(UnstagedRanks({30}, true), std::nullopt).verdict, "");  // one rank
}

// The stages' send / receive waits are the bubble: msprof's slow-rank rule leaves them out, and with the
// all-reduces waiting nowhere it names no rank, nor where the ranks run nothing but all-reduces that never wait.
TEST(AscendSlowRankTest, MsprofRuleLeavesTheHandOffsOut) {
  std::vector<RankCommunication> ranks = {Rank(0, 60, 110, 44), Rank(1, 60, 110, 44), Rank(2, 100, 160, 14),
                                          Rank(3, 100, 160, 14)};
  const std::vector<double> wait_ms = {80, 80, 20, 20};
  for (size_t i = 0; i < ranks.size(); ++i) {
    AscendCommOp p2p;
    p2p.op_name = "hcom_batchSendRecv__1_0_1";
    p2p.wait_ms = p2p.synchronization_ms = wait_ms[i];
    p2p.transit_ms = 4;
    AscendCommOp reduce;
    reduce.op_name = "hcom_allReduce__1_1_1";
    reduce.transit_ms = 2;
    ranks[i].ascend_ops = {p2p, reduce};
    ranks[i].ascend_wait_ratio = wait_ms[i] / (wait_ms[i] + 6);
    ranks[i].ascend_synchronization_ratio = ranks[i].ascend_wait_ratio;
  }
  const std::optional<PipelineAnalysis> pipeline = AnalyzePipelineStages(ranks);
  ASSERT_TRUE(pipeline);
  AscendSlowRank x = JudgeAscendSlowRank(ranks, pipeline);
  EXPECT_EQ(x.verdict, "no wait");
  EXPECT_FALSE(x.max_wait_rank);
  EXPECT_FALSE(x.slow_rank);

  for (RankCommunication& r : ranks) {
    r.ascend_ops.resize(1);
    r.ascend_ops[0].op_name = "hcom_allReduce__1_1_1";
    r.ascend_ops[0].wait_ms = r.ascend_ops[0].synchronization_ms = 0;
    r.ascend_wait_ratio = r.ascend_synchronization_ratio = 0.0;
  }
  x = JudgeAscendSlowRank(ranks, AnalyzePipelineStages(ranks));
  EXPECT_EQ(x.verdict, "no wait");
  EXPECT_FALSE(x.max_wait_rank);
}

}  // namespace
}  // namespace tuneprof

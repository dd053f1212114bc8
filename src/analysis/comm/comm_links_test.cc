#include "analysis/comm/comm_links.h"

#include <gtest/gtest.h>

#include "analysis/comm/comm_cross_rank.h"
#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

AscendMatrixLink Cell(std::string group, int64_t src, int64_t dst, std::string transport, double mb, double ms) {
  AscendMatrixLink link;
  link.op_key = "Total Op Info";
  link.group = std::move(group);
  link.src_rank = link.src_local = src;
  link.dst_rank = link.dst_local = dst;
  link.transport = std::move(transport);
  link.size_mb = mb;
  link.time_ms = ms;
  link.bandwidth_gbps = mb / ms;
  return link;
}

TEST(CommLinksTest, TinyAndSyncOnlyLinksAreNeverSlowNorInTheMean) {
  std::vector<AscendMatrixLink> links = {Cell("g", 0, 1, "RDMA", 100, 4),    // 25 GB/s
                                         Cell("g", 0, 2, "RDMA", 100, 5),    // 20 GB/s
                                         Cell("g", 0, 3, "RDMA", 0.5, 50),   // 0.01 GB/s but 0.5 MB: latency
                                         Cell("g", 0, 4, "RDMA", 0, 1),      // synchronization only
                                         Cell("g", 0, 5, "RDMA", 10, 10),    // 1 GB/s: below 20 % of the 15.3 mean
                                         Cell("g", 0, 0, "LOCAL", 100, 1)};  // the rank itself
  MarkSlowLinks(&links);
  EXPECT_FALSE(links[0].slow);
  EXPECT_FALSE(links[1].slow);
  EXPECT_FALSE(links[2].slow);
  EXPECT_FALSE(links[3].slow);
  EXPECT_TRUE(links[4].slow);
  EXPECT_FALSE(links[5].slow);
}

// Two ranks of an 8-rank world group (numbered as the world), each also in a pair group that numbers it 0.
std::vector<RankCommunication> TwoRanks() {
  std::vector<RankCommunication> ranks(2);
  ranks[0].rank = 0;
  ranks[0].ascend_links = {Cell("world", 0, 1, "HCCS", 100, 5), Cell("world", 0, 7, "HCCS", 100, 5),
                           Cell("pairA", 0, 1, "RDMA", 131, 5), Cell("pairA", 0, 0, "LOCAL", 300, 1)};
  ranks[1].rank = 1;
  ranks[1].ascend_links = {Cell("world", 1, 0, "HCCS", 100, 5), Cell("world", 1, 1, "LOCAL", 50, 1),
                           Cell("pairB", 0, 1, "RDMA", 131, 5), Cell("pairB", 0, 0, "LOCAL", 300, 1)};
  return ranks;
}

TEST(CommLinksTest, GroupLocalIdsBecomeGlobalOrStayUnknown) {
  std::vector<RankCommunication> ranks = TwoRanks();
  ResolveLinkRanks(&ranks);
  // The world group: both ranks sit at their own index, so its numbering is the world's.
  EXPECT_EQ(ranks[0].ascend_links[1].dst_rank, 7);
  // The pair groups are each seen on one rank: the peer (member 1) is unknown, the rank itself is known.
  EXPECT_EQ(ranks[1].ascend_links[2].src_rank, 1);
  EXPECT_EQ(ranks[1].ascend_links[2].dst_rank, kNoId);
  EXPECT_EQ(ranks[1].ascend_links[2].dst_local, 1);
  EXPECT_EQ(LinkEndName(ranks[1].ascend_links[2].dst_rank, 1), "?1");
  // Rank 1's matrix lists its own links only, each once: its LOCAL cells of two groups are one link.
  const std::vector<AscendMatrixLink>& matrix = ranks[1].ascend_rank_matrix;
  ASSERT_EQ(matrix.size(), 3u);
  EXPECT_EQ(matrix[0].src_rank, 1);
  EXPECT_EQ(matrix[0].dst_rank, 0);
  EXPECT_EQ(matrix[1].dst_rank, 1);
  EXPECT_DOUBLE_EQ(matrix[1].size_mb, 350);
  EXPECT_EQ(matrix[2].dst_rank, kNoId);  // unknown ends sort last
  for (const AscendMatrixLink& cell : matrix) EXPECT_EQ(cell.src_rank, 1);
  // Idempotent: a second pass reads the ids as written.
  ResolveLinkRanks(&ranks);
  EXPECT_EQ(ranks[0].ascend_links[1].dst_rank, 7);
  EXPECT_EQ(ranks[1].ascend_rank_matrix.size(), 3u);
}

TEST(CommLinksTest, ParallelGroupInfoNumbersAGroupSeenOnOneRank) {
  std::vector<RankCommunication> ranks = TwoRanks();
  ranks[1].parallel_groups.push_back(ParallelGroupInfo{"pairB", "dp", {1, 9}});
  ResolveLinkRanks(&ranks);
  EXPECT_EQ(ranks[1].ascend_links[2].dst_rank, 9);
  // Listed members that put the rank elsewhere than where it sits are not believed.
  ranks[1].parallel_groups[0].global_ranks = {9, 1};
  ResolveLinkRanks(&ranks);
  EXPECT_EQ(ranks[1].ascend_links[2].dst_rank, kNoId);
}

TEST(CommLinksTest, AWorldNumberingOnOneRankOnlyIsNoEvidence) {
  std::vector<RankCommunication> ranks = TwoRanks();
  ranks.pop_back();
  ResolveLinkRanks(&ranks);
  EXPECT_EQ(ranks[0].ascend_links[0].dst_rank, kNoId);  // rank 0 is member 0 of "world", as of any group
  EXPECT_EQ(ranks[0].ascend_links[0].src_rank, 0);
}

TEST(CommLinksTest, ALinkSlowInSeveralOpTypesIsNamedOnce) {
  CommAnalysis analysis;
  analysis.ranks.resize(1);
  RankCommunication& r = analysis.ranks[0];
  r.rank = 0;
  r.ascend_links = {Cell("g", 0, 1, "HCCS", 100, 5), Cell("g", 0, 1, "HCCS", 100, 5), Cell("g", 0, 2, "HCCS", 100, 5)};
  r.ascend_links[0].op_key = "allreduce-total";
  r.ascend_links[0].slow = true;
  r.ascend_links[1].op_key = "allgather-total";
  r.ascend_links[1].slow = true;
  r.ascend_links[1].bandwidth_gbps = 2;
  analysis.cross_rank = AnalyzeAcrossRanks(analysis.ranks);
  JudgeCommunication(&analysis);
  int lines = 0;
  for (const std::string& reason : analysis.reasons) {
    if (reason.find("link 0->1") == std::string::npos) continue;
    ++lines;
    EXPECT_NE(reason.find("2.00 GB/s"), std::string::npos) << reason;
  }
  EXPECT_EQ(lines, 1);
}

// Older torch_npu: one "Total Op Info" per section over two groups, each numbering the rank 0, and the
// section's ops with their groups. The totals are rebuilt per group from the ops: member 1 of the pair
// group and member 1 of the world group are not one link.
TEST(CommLinksTest, OneTotalOverSeveralGroupsIsRebuiltPerGroup) {
  hand_built::HandBuiltTrace hand;
  Trace trace = hand.Finish();
  SideTableBuilder side(&trace);
  auto add = [&](std::string_view op, std::string_view group, int64_t src, int64_t dst, std::string_view transport,
                 double mb) {
    HcclLink link;
    link.step = side.Intern("step2");
    link.op_key = side.Intern(op);
    link.group = side.Intern(group);
    link.src_rank = src;
    link.dst_rank = dst;
    link.transport = side.Intern(transport);
    link.transit_size_mb = mb;
    link.transit_time_ms = mb / 20;
    side.mutable_communication()->links.push_back(link);
  };
  side.mutable_communication()->matrix_present = true;
  add("hcom_allReduce__1_0", "world", 0, 1, "HCCS", 100);
  add("hcom_allReduce__1_1", "world", 0, 1, "HCCS", 50);
  add("hcom_allReduce__9_0", "pair", 0, 1, "RDMA", 131);
  add("Total Op Info", "", 0, 1, "HCCS", 281);  // msprof's merge: both groups' "0-1" as one HCCS cell
  auto profiles = HardwareProfiles::Builtin();
  ASSERT_TRUE(profiles.ok());
  RankCommunication rank =
      AnalyzeRankCommunication(trace, ComputeTimeBreakdown(trace), SelectHardware(trace, *profiles, nullptr));
  ASSERT_EQ(rank.ascend_links.size(), 2u);
  EXPECT_EQ(rank.ascend_links[0].group, "pair");
  EXPECT_EQ(rank.ascend_links[0].transport, "RDMA");
  EXPECT_DOUBLE_EQ(rank.ascend_links[0].size_mb, 131);
  EXPECT_EQ(rank.ascend_links[1].group, "world");
  EXPECT_DOUBLE_EQ(rank.ascend_links[1].size_mb, 150);
  EXPECT_DOUBLE_EQ(*rank.ascend_links[1].bandwidth_gbps, 20);
}

}  // namespace
}  // namespace tuneprof

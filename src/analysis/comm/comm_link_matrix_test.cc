#include "analysis/comm/comm_link_matrix.h"

#include <gtest/gtest.h>

#include <string>

#include "base/interned_text.h"

namespace tuneprof {
namespace {

Collective Sized(int64_t bytes, std::string group_ranks) {
  Collective c;
  c.bytes = bytes;
  c.group_ranks = InternText(group_ranks);
  return c;
}

TEST(CommLinkMatrixTest, SharedCollectiveBytesPerPeerOfTheGroup) {
  CommAnalysis comm;
  comm.ranks.resize(2);
  comm.ranks[0].rank = 0;
  comm.ranks[0].collectives = {Sized(2'000'000'000, "[0, 1, 2]"), Sized(kNoId, "[0, 1]"), Sized(500'000'000, "[0]")};
  comm.ranks[1].rank = 1;
  comm.ranks[1].collectives = {Sized(1'000'000'000, "[0, 1]")};
  const RankLinkMatrix m = BuildRankLinkMatrix(comm);
  EXPECT_EQ(m.source, LinkMatrixSource::kSharedCollectiveBytes);
  ASSERT_EQ(m.cells.size(), 3u);  // 0->1, 0->2, 1->0; an unknown size and a group of one add nothing
  EXPECT_DOUBLE_EQ(m.cells.at({0, 1}), 2.0);
  EXPECT_DOUBLE_EQ(m.cells.at({0, 2}), 2.0);
  EXPECT_DOUBLE_EQ(m.cells.at({1, 0}), 1.0);
}

TEST(CommLinkMatrixTest, AscendMatrixWinsAndSumsSizeOverTime) {
  CommAnalysis comm;
  comm.ranks.resize(1);
  comm.ranks[0].collectives = {Sized(1'000'000'000, "[0, 1]")};
  AscendMatrixLink hccs{.src_rank = 0, .dst_rank = 1, .transport = "HCCS", .size_mb = 30, .time_ms = 1};
  AscendMatrixLink sdma{.src_rank = 0, .dst_rank = 1, .transport = "SDMA", .size_mb = 10, .time_ms = 1};
  AscendMatrixLink unknown_peer{.src_rank = 0, .dst_rank = kNoId, .size_mb = 10, .time_ms = 1};
  comm.ranks[0].ascend_rank_matrix = {hccs, sdma, unknown_peer};
  const RankLinkMatrix m = BuildRankLinkMatrix(comm);
  EXPECT_EQ(m.source, LinkMatrixSource::kAscendBandwidth);
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_DOUBLE_EQ(m.cells.at({0, 1}), 20.0);  // 40 MB in 2 ms
}

// 100 ranks in one world group: blocks of 2 ranks (ceil(100 / 64)), each cell the mean over its pairs.
TEST(CommLinkMatrixTest, ManyRanksAreDrawnInBlocksOfPairMeans) {
  std::string world = "[0";
  for (int r = 1; r < 100; ++r) world += ", " + std::to_string(r);
  world += "]";
  CommAnalysis comm;
  comm.ranks.resize(100);
  for (int r = 0; r < 100; ++r) {
    comm.ranks[r].rank = r;
    comm.ranks[r].collectives = {Sized(r == 0 ? 2'000'000'000 : 1'000'000'000, world)};
  }
  const RankLinkMatrix m = BuildRankLinkMatrix(comm);
  EXPECT_EQ(m.block, 2);
  EXPECT_EQ(m.cells.size(), 50u * 50u);
  EXPECT_DOUBLE_EQ(m.cells.at({0, 2}), 1.5);  // 0->2, 0->3 carry 2 GB; 1->2, 1->3 carry 1 GB
  EXPECT_DOUBLE_EQ(m.cells.at({0, 0}), 1.5);  // 0->1 and 1->0: a rank is not its own peer
  EXPECT_DOUBLE_EQ(m.cells.at({98, 2}), 1.0);
}

TEST(CommLinkMatrixTest, SmallRunsKeepOneCellPerPair) {
  CommAnalysis comm;
  comm.ranks.resize(1);
  comm.ranks[0].rank = 63;
  comm.ranks[0].collectives = {Sized(1'000'000'000, "[62, 63]")};
  const RankLinkMatrix m = BuildRankLinkMatrix(comm);
  EXPECT_EQ(m.block, 1);
  EXPECT_DOUBLE_EQ(m.cells.at({63, 62}), 1.0);
}

TEST(CommLinkMatrixTest, NoTrafficNoMatrix) {
  EXPECT_EQ(BuildRankLinkMatrix(CommAnalysis()).source, LinkMatrixSource::kNone);
}

}  // namespace
}  // namespace tuneprof

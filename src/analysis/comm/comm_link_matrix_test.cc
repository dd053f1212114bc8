#include "analysis/comm/comm_link_matrix.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

Collective Sized(int64_t bytes, std::string group_ranks) {
  Collective c;
  c.bytes = bytes;
  c.group_ranks = std::move(group_ranks);
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

TEST(CommLinkMatrixTest, NoTrafficNoMatrix) {
  EXPECT_EQ(BuildRankLinkMatrix(CommAnalysis()).source, LinkMatrixSource::kNone);
}

}  // namespace
}  // namespace tuneprof

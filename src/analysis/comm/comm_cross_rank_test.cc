// Matching send / recv kernels across ranks by their peer where a communicator holds more than two ranks.
#include "analysis/comm/comm_cross_rank.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace tuneprof {
namespace {

constexpr int64_t kPeerMatchMs = 1'000'000;

// A rank of one unnamed communicator "[0, 1, 2]" with p2p kernels whose peer the trace does not name:
// {direction, start ms, duration ms} each, in start order.
struct PeerMatchKernel {
  P2pDirection direction;
  int64_t start_ms, duration_ms;
};

RankCommunication PeerMatchRank(int64_t rank, const std::vector<PeerMatchKernel>& kernels) {
  RankCommunication r;
  r.rank = rank;
  r.steps = 1;
  r.computing_ns = 100 * kPeerMatchMs;
  r.wall_ns = 200 * kPeerMatchMs;
  int64_t sequence = 0;
  for (const PeerMatchKernel& k : kernels) {
    Collective c;
    c.type = CollectiveType::kSendRecv;
    c.direction = k.direction;
    c.group = "3";
    c.group_ranks = "[0, 1, 2]";
    c.group_size = 3;
    c.group_desc = "undefined";
    c.start_ns = k.start_ms * kPeerMatchMs;
    c.duration_ns = k.duration_ms * kPeerMatchMs;
    c.exposed_ns = c.duration_ns;
    c.sequence = sequence++;
    r.collectives.push_back(c);
  }
  return r;
}

// Rank 0 sends twice to rank 1, which receives both and sends once to rank 2. By the group's sequence
// rank 0's first send, rank 1's first receive and rank 2's only receive would be one collective with rank
// 2 last; by peer, rank 0's sends pair with rank 1's receives (rank 0 waits 20 + 5 ms), and rank 1's send
// with rank 2's receive (rank 2 waits 20 ms), which rank 1 holds up: the last stage holds up nobody.
TEST(CommCrossRankPeerTest, SendRecvOfALargerCommunicatorMatchWithTheirPeer) {
  const std::vector<RankCommunication> ranks = {
      PeerMatchRank(0, {{P2pDirection::kSend, 0, 30}, {P2pDirection::kSend, 40, 6}}),
      PeerMatchRank(1, {{P2pDirection::kRecv, 20, 10}, {P2pDirection::kRecv, 45, 1}, {P2pDirection::kSend, 70, 10}}),
      PeerMatchRank(2, {{P2pDirection::kRecv, 50, 30}}),
  };
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  EXPECT_EQ(x.matched_collectives, 3u);
  EXPECT_EQ(x.unmatched_collectives, 0u);
  ASSERT_EQ(x.ranks.size(), 3u);
  EXPECT_EQ(x.ranks[0].wait_ns, 25 * kPeerMatchMs);
  EXPECT_EQ(x.ranks[0].transfer_ns, 11 * kPeerMatchMs);
  EXPECT_EQ(x.ranks[1].wait_ns, 0);
  EXPECT_EQ(x.ranks[1].times_last, 3u);
  EXPECT_EQ(x.ranks[1].wait_caused_ns, 45 * kPeerMatchMs);
  EXPECT_EQ(x.ranks[2].wait_ns, 20 * kPeerMatchMs);
  EXPECT_EQ(x.ranks[2].transfer_ns, 10 * kPeerMatchMs);
  EXPECT_EQ(x.ranks[2].times_last, 0u);
  EXPECT_EQ(x.ranks[2].wait_caused_ns, 0);
  // Each hand-off is a link of its two ranks on the critical path.
  for (const CriticalLink& link : x.critical_links) {
    EXPECT_TRUE(link.paired_by_peer);
    EXPECT_EQ(link.ranks.size(), 2u);
  }
}

// Kernels that name their peer pair with it in a communicator of any size, the k-th of a pair with the k-th.
TEST(CommCrossRankPeerTest, NamedPeersPairInOrder) {
  std::vector<RankCommunication> ranks = {
      PeerMatchRank(0, {{P2pDirection::kSend, 0, 10}, {P2pDirection::kSend, 5, 10}}),
      PeerMatchRank(1, {{P2pDirection::kRecv, 8, 2}}),
      PeerMatchRank(2, {{P2pDirection::kRecv, 1, 14}}),
  };
  ranks[0].collectives[0].peer = 2;  // rank 0 sends to rank 2 first, then to rank 1
  ranks[0].collectives[1].peer = 1;
  ranks[1].collectives[0].peer = 0;
  ranks[2].collectives[0].peer = 0;
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  EXPECT_EQ(x.matched_collectives, 2u);
  // Rank 0 waits 1 ms for rank 2 (from 0 to 1) and 3 ms for rank 1 (from 5 to 8); by sequence it would
  // have waited for rank 2 at both.
  EXPECT_EQ(x.ranks[0].wait_ns, 4 * kPeerMatchMs);
  EXPECT_EQ(x.ranks[1].wait_ns, 0);
  EXPECT_EQ(x.ranks[2].wait_ns, 0);
}

}  // namespace
}  // namespace tuneprof

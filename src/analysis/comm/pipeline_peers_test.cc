#include "analysis/comm/pipeline_peers.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

Collective P2p(P2pDirection direction, int64_t peer) {
  Collective c;
  c.type = CollectiveType::kSendRecv;
  c.direction = direction;
  c.group = "3";
  c.group_ranks = "[0, 1, 2]";
  c.peer = peer;
  return c;
}

RankCommunication RankWith(int64_t rank, std::vector<Collective> kernels) {
  RankCommunication r;
  r.rank = rank;
  r.steps = 1;
  r.collectives = std::move(kernels);
  return r;
}

// The middle rank of a forward chain over one communicator of three: kernels that name their peer give it
// as those that do not would (the previous member for a receive, the next for a send).
TEST(ChainPeersTest, NamedPeersConfirmTheForwardChain) {
  const RankCommunication middle =
      RankWith(1, {P2p(P2pDirection::kRecv, 0), P2p(P2pDirection::kSend, 2), P2p(P2pDirection::kRecv, kNoId)});
  ChainPeers peers(middle);
  EXPECT_EQ(peers.Of(middle.collectives[0]), 0);
  EXPECT_EQ(peers.Of(middle.collectives[1]), 2);
  EXPECT_EQ(peers.Of(middle.collectives[2]), 0);
}

// A named peer that is not the chain's neighbour (a send back, or past the next member) is no forward chain.
TEST(ChainPeersTest, NamedPeersOffTheChainBreakIt) {
  const RankCommunication middle = RankWith(1, {P2p(P2pDirection::kRecv, 2), P2p(P2pDirection::kSend, 2)});
  ChainPeers peers(middle);
  EXPECT_FALSE(peers.Of(middle.collectives[0]));
  EXPECT_EQ(peers.Of(middle.collectives[1]), 2);
  const RankCommunication first = RankWith(0, {P2p(P2pDirection::kSend, 2)});
  ChainPeers skip(first);
  EXPECT_FALSE(skip.Of(first.collectives[0]));
  // The first member receiving (from its named peer) ends the chain: exchanges both ways are not one.
  const RankCommunication both = RankWith(0, {P2p(P2pDirection::kSend, 1), P2p(P2pDirection::kRecv, 1)});
  ChainPeers back(both);
  EXPECT_FALSE(back.Of(both.collectives[0]));
}

}  // namespace
}  // namespace tuneprof

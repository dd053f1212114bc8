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

Collective P2pAt(P2pDirection direction, int64_t peer, int64_t start_ns) {
  Collective c = P2p(direction, peer);
  c.start_ns = start_ns;
  c.duration_ns = 1;
  return c;
}

constexpr P2pDirection kChainSend = P2pDirection::kSend;
constexpr P2pDirection kChainRecv = P2pDirection::kRecv;

// On each rank every kernel gets its named peer back (a chain), or some kernel gets none, which leaves the
// communicator unmatched for the stages (InferCommunicatorChains).
void ExpectChain(const std::vector<RankCommunication>& ranks, bool chain) {
  for (const RankCommunication& rank : ranks) {
    ChainPeers peers(rank);
    bool every = true;
    for (const Collective& c : rank.collectives) {
      const std::optional<int64_t> peer = peers.Of(c);
      if (chain) EXPECT_EQ(peer, c.peer) << "rank " << rank.rank << " kernel at " << c.start_ns;
      every = every && peer.has_value();
    }
    EXPECT_EQ(every, chain) << "rank " << rank.rank;
  }
}

// A pipeline of three stages on one communicator whose gradients come back over it (two micro-batches,
// forward then backward): activations go 0 -> 1 -> 2, gradients 2 -> 1 -> 0, each kernel naming its peer.
TEST(ChainPeersTest, GradientsBackOverTheCommunicatorAreAChain) {
  const std::vector<RankCommunication> ranks = {
      RankWith(
          0, {P2pAt(kChainSend, 1, 10), P2pAt(kChainSend, 1, 20), P2pAt(kChainRecv, 1, 60), P2pAt(kChainRecv, 1, 70)}),
      RankWith(
          1, {P2pAt(kChainRecv, 0, 10), P2pAt(kChainSend, 2, 12), P2pAt(kChainRecv, 0, 20), P2pAt(kChainSend, 2, 22),
              P2pAt(kChainRecv, 2, 50), P2pAt(kChainSend, 0, 60), P2pAt(kChainRecv, 2, 65), P2pAt(kChainSend, 0, 70)}),
      RankWith(
          2, {P2pAt(kChainRecv, 1, 12), P2pAt(kChainRecv, 1, 22), P2pAt(kChainSend, 1, 50), P2pAt(kChainSend, 1, 65)}),
      // 1F1B's steady state on the middle stage: one forward, one backward, in turn.
      RankWith(
          1, {P2pAt(kChainRecv, 0, 10), P2pAt(kChainSend, 2, 12), P2pAt(kChainRecv, 2, 30), P2pAt(kChainSend, 0, 32),
              P2pAt(kChainRecv, 0, 40), P2pAt(kChainSend, 2, 42), P2pAt(kChainRecv, 2, 60), P2pAt(kChainSend, 0, 62)})};
  ExpectChain(ranks, true);
}

// A halo exchange: the middle member sends to both neighbours and receives from both at once, whichever way
// it posts the calls; not a pipeline.
TEST(ChainPeersTest, HaloExchangeIsNoChain) {
  const std::vector<RankCommunication> ranks = {
      RankWith(
          1, {P2pAt(kChainSend, 0, 10), P2pAt(kChainSend, 2, 10), P2pAt(kChainRecv, 0, 10), P2pAt(kChainRecv, 2, 10)}),
      RankWith(
          1, {P2pAt(kChainSend, 0, 10), P2pAt(kChainSend, 2, 11), P2pAt(kChainRecv, 0, 12), P2pAt(kChainRecv, 2, 13)}),
      RankWith(
          1, {P2pAt(kChainRecv, 0, 10), P2pAt(kChainRecv, 2, 11), P2pAt(kChainSend, 0, 12), P2pAt(kChainSend, 2, 13)}),
      // A gradient sent back before the activation it belongs to came in, or to a member two places away.
      RankWith(2, {P2pAt(kChainSend, 1, 5), P2pAt(kChainRecv, 1, 12)}),
      RankWith(0, {P2pAt(kChainSend, 2, 5), P2pAt(kChainRecv, 1, 12)})};
  ExpectChain(ranks, false);
}

}  // namespace
}  // namespace tuneprof

#pragma once
// Which collectives of different ranks are one transfer. A collective is found on every rank by (process
// group, sequence number within that group on the rank), as NCCL's own sequence numbers count; a send / recv
// of a group of more than two ranks by its peer instead (the one the kernel names, else its forward chain's
// neighbour, pipeline_peers.h): the k-th kernel a rank exchanges with a peer pairs with the peer's k-th kernel
// with it, as one pair's calls run in order while the group's sequence counts every peer's. The cross-rank
// waits and the per-group slowest rank both read this one matching.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

// One rank's part in a matched collective.
struct MatchedArrival {
  size_t rank_index = 0;  // into the ranks matched
  const Collective* collective = nullptr;
  bool by_peer = false;  // a send / recv matched with its peer's kernel, not by sequence
};

// (group, sequence, kNoId, kNoId) for a collective; (group, the pair's ordinal, lower rank, higher rank) for a
// send / recv matched by its peer.
using CollectiveMatchKey = std::tuple<std::string, int64_t, int64_t, int64_t>;

// Every collective of every rank under its key; a key with one arrival was seen on one rank only. Arrivals in
// the order of the ranks.
std::map<CollectiveMatchKey, std::vector<MatchedArrival>> MatchAcrossRanks(const std::vector<RankCommunication>& ranks);

}  // namespace tuneprof

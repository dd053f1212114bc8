#include "analysis/comm/collective_matching.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "analysis/comm/pipeline_peers.h"

namespace tuneprof {
namespace {

// The peer a send / recv of `rank` exchanges with, where its group has more than two ranks: the one its
// kernel names, else the next / previous member of a forward chain. nullopt for a two-rank group (its
// sequence pairs the kernels) and where the peer is unknown.
std::optional<int64_t> MatchPeerOf(const Collective& c, int64_t rank, PairPeers* pairs, ChainPeers* chain) {
  if (c.type != CollectiveType::kSendRecv || pairs->Of(c.group_ranks, rank)) return std::nullopt;
  if (c.peer != kNoId && c.peer != rank) return c.peer;
  return chain->Of(c);
}

}  // namespace

std::map<CollectiveMatchKey, std::vector<MatchedArrival>> MatchAcrossRanks(
    const std::vector<RankCommunication>& ranks) {
  std::map<CollectiveMatchKey, std::vector<MatchedArrival>> by_key;
  PairPeers pairs;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const int64_t rank = ranks[r].rank;
    ChainPeers chain(ranks[r]);
    std::map<std::pair<std::string_view, int64_t>, int64_t> next_ordinal;  // (group, peer)
    for (const Collective& c : ranks[r].collectives) {
      if (const std::optional<int64_t> peer = MatchPeerOf(c, rank, &pairs, &chain)) {
        const int64_t ordinal = next_ordinal[{c.group, *peer}]++;
        by_key[{c.group, ordinal, std::min(rank, *peer), std::max(rank, *peer)}].push_back(MatchedArrival{r, &c, true});
      } else {
        by_key[{c.group, c.sequence, kNoId, kNoId}].push_back(MatchedArrival{r, &c});
      }
    }
  }
  return by_key;
}

}  // namespace tuneprof

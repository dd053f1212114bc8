#include "analysis/comm/pipeline_peers.h"

#include <algorithm>

namespace tuneprof {

std::optional<std::pair<int64_t, int64_t>> PositionIn(const std::vector<int64_t>& ranks, int64_t rank) {
  auto at = std::find(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end()) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(at - ranks.begin()), static_cast<int64_t>(ranks.size()));
}

// The rank's two-rank groups that hold only send / recv kernels: (group name, group ranks).
std::set<std::pair<std::string_view, std::string_view>> P2pOnlyPairGroups(const RankCommunication& rank,
                                                                          PairPeers* peers) {
  std::set<std::pair<std::string_view, std::string_view>> p2p, other;
  for (const Collective& c : rank.collectives) {
    if (!peers->Of(c.group_ranks, rank.rank)) continue;
    (c.type == CollectiveType::kSendRecv ? p2p : other).emplace(c.group, c.group_ranks);
  }
  for (const auto& g : other) p2p.erase(g);
  return p2p;
}

}  // namespace tuneprof

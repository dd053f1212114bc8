#pragma once
// Which rank a pipeline rank's p2p kernels exchange with: the other member of a two-rank group, or, in a
// communicator of more than two ranks, the next / previous member of a forward chain (pipeline_stages.cc
// matches the kernels by these peers).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/comm_groups.h"

namespace tuneprof {

// `rank`'s (position, size) in `ranks`; nullopt where it is not a member.
std::optional<std::pair<int64_t, int64_t>> PositionIn(const std::vector<int64_t>& ranks, int64_t rank);

// The other rank of a two-rank group that holds `rank`; nullopt for any other group. Parsed once per
// distinct group text.
class PairPeers {
 public:
  std::optional<int64_t> Of(std::string_view group_ranks, int64_t rank) {
    auto [it, added] = members_.try_emplace(group_ranks);
    if (added) it->second = ParseGroupRanks(group_ranks);
    const std::vector<int64_t>& m = it->second;
    if (m.size() != 2 || m[0] == m[1]) return std::nullopt;
    if (m[0] == rank) return m[1];
    if (m[1] == rank) return m[0];
    return std::nullopt;
  }

 private:
  std::map<std::string_view, std::vector<int64_t>> members_;
};

struct PairTraffic {
  uint64_t sends = 0, recvs = 0, unknown = 0;
  bool SendsOnly() const { return sends > 0 && recvs == 0 && unknown == 0; }
  bool ReceivesOnly() const { return recvs > 0 && sends == 0 && unknown == 0; }
};

// A communicator of more than two ranks carries a forward chain when, from the rank's place in it, the first
// member only sends, the last only receives and every p2p kernel says its direction: each send then goes to
// the next member and each receive comes from the previous one, and the k-th send to a member pairs with
// that member's k-th receive from the rank (NCCL runs a pair's p2p calls on a communicator in order).
// Kernels that name their peer (Src Rank / Dst Rank) confirm the chain where the peer is that neighbour and
// break it otherwise. Exchanges both ways cannot be told apart without the peer; an end that receives and
// sends then leaves the communicator unmatched. Where every kernel names its peer, a chain both ways is a
// pipeline that sends gradients back (1F1B, GPipe): see TwoWayChain.
class ChainPeers {
 public:
  explicit ChainPeers(const RankCommunication& rank) : rank_(rank.rank) {
    std::map<std::pair<std::string_view, std::string_view>, std::vector<const Collective*>> kernels;
    for (const Collective& c : rank.collectives) {
      if (c.type != CollectiveType::kSendRecv) continue;
      const std::vector<int64_t>& m = Members(c.group_ranks);
      if (m.size() <= 2) continue;
      PairTraffic& t = traffic_[{c.group, c.group_ranks}];
      ++(c.direction == P2pDirection::kSend ? t.sends : c.direction == P2pDirection::kRecv ? t.recvs : t.unknown);
      kernels[{c.group, c.group_ranks}].push_back(&c);
    }
    for (const auto& [key, list] : kernels) {
      if (TwoWayChain(list, Members(key.second), rank_)) two_way_.insert(key);
    }
  }

  // The member `c` (one of the rank's kernels) exchanges with; nullopt off such a chain, and for a kernel
  // whose named peer is not that member.
  std::optional<int64_t> Of(const Collective& c) {
    if (c.type == CollectiveType::kSendRecv && two_way_.contains({c.group, c.group_ranks})) return c.peer;
    const std::optional<int64_t> neighbour = Neighbour(c);
    if (!neighbour || Unnamed(c) || c.peer == *neighbour) return neighbour;
    return std::nullopt;
  }

  // Whether `c`'s communicator carries a chain both ways on this rank (TwoWayChain).
  bool BothWays(const Collective& c) const { return two_way_.contains({c.group, c.group_ranks}); }

  // A pipeline's chain both ways on one communicator, from one member's p2p kernels on it (`kernels`, in
  // start order): every kernel names its peer (or has `implied_peer`), a neighbouring member, and says its
  // direction; both ways carry data; and the order is a pipeline's, activations forward and then their gradients back. Counting
  // only kernels that started before each one: an activation is sent on after one came in (the j-th send to
  // the next member after the j-th receive from the previous one, where there is one), a gradient comes back
  // after its activation went out (the j-th receive from the next member after the j-th send to it), and a
  // gradient goes back after one came in and after its activation did (the j-th send to the previous member
  // after the j-th receive from the next one, where there is one, and from the previous one). A halo
  // exchange, each member sending to both neighbours at once, breaks the order on some member whichever
  // way it posts its calls, and so is no pipeline.
  // `implied_peer`: the peer of kernels that name none (the other rank of a two-rank group); kNoId: such a
  // kernel breaks the chain.
  static bool TwoWayChain(const std::vector<const Collective*>& kernels, const std::vector<int64_t>& members,
                          int64_t rank, int64_t implied_peer = kNoId);

 private:
  std::optional<int64_t> Neighbour(const Collective& c) {
    if (c.type != CollectiveType::kSendRecv) return std::nullopt;
    const auto t = traffic_.find({c.group, c.group_ranks});
    if (t == traffic_.end() || t->second.unknown > 0) return std::nullopt;
    const std::vector<int64_t>& m = Members(c.group_ranks);
    const auto at = PositionIn(m, rank_);
    if (!at) return std::nullopt;
    const auto [place, size] = *at;
    if ((place == 0 && t->second.recvs > 0) || (place == size - 1 && t->second.sends > 0)) return std::nullopt;
    if (c.direction == P2pDirection::kSend && place + 1 < size) return m[place + 1];
    if (c.direction == P2pDirection::kRecv && place > 0) return m[place - 1];
    return std::nullopt;
  }

  bool Unnamed(const Collective& c) const {
    return c.type == CollectiveType::kSendRecv && (c.peer == kNoId || c.peer == rank_);
  }
  const std::vector<int64_t>& Members(std::string_view group_ranks) {
    auto [it, added] = members_.try_emplace(group_ranks);
    if (added) it->second = ParseGroupRanks(group_ranks);
    return it->second;
  }

  int64_t rank_;
  std::map<std::pair<std::string_view, std::string_view>, PairTraffic> traffic_;
  std::set<std::pair<std::string_view, std::string_view>> two_way_;  // (group, ranks): TwoWayChain holds
  std::map<std::string_view, std::vector<int64_t>> members_;
};

// The rank's two-rank groups that hold only send / recv kernels: (group name, group ranks).
std::set<std::pair<std::string_view, std::string_view>> P2pOnlyPairGroups(const RankCommunication& rank,
                                                                          PairPeers* peers);

// Where a two-rank group carries p2p both ways between `rank` and `peer` (1F1B, GPipe: activations to the
// next stage, their gradients back): the rank's side, from its p2p kernels on the group (`kernels`, in start
// order) and the order TwoWayChain asks of a pipeline. kFirst: the rank is the earlier stage, which sends an
// activation before any gradient comes back; kSecond: the later one, which receives before it sends; kNeither
// where the order fits neither side (a halo exchange) or both.
enum class PairSide : uint8_t { kNeither, kFirst, kSecond };
PairSide PairSideOf(const std::vector<const Collective*>& kernels, int64_t rank, int64_t peer);

}  // namespace tuneprof

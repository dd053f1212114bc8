#include "analysis/comm/pipeline_peers.h"

#include <algorithm>
#include <array>

namespace tuneprof {

std::optional<std::pair<int64_t, int64_t>> PositionIn(const std::vector<int64_t>& ranks, int64_t rank) {
  auto at = std::find(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end()) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(at - ranks.begin()), static_cast<int64_t>(ranks.size()));
}

namespace {

// A member's kernels of a two-way chain by kind: activations in from the previous member (forward receive)
// and out to the next (forward send), gradients in from the next member (backward receive) and out to the
// previous (backward send).
enum class ChainKernelKind : uint8_t { kForwardRecv, kForwardSend, kBackwardRecv, kBackwardSend };

std::optional<ChainKernelKind> ChainKindOf(const Collective& c, int64_t rank, int64_t implied_peer, int64_t previous,
                                           int64_t next) {
  const bool send = c.direction == P2pDirection::kSend;
  if (c.direction == P2pDirection::kUnknown) return std::nullopt;
  const int64_t peer = c.peer == kNoId || c.peer == rank ? implied_peer : c.peer;
  if (peer == kNoId) return std::nullopt;
  if (peer == previous) return send ? ChainKernelKind::kBackwardSend : ChainKernelKind::kForwardRecv;
  if (peer == next) return send ? ChainKernelKind::kForwardSend : ChainKernelKind::kBackwardRecv;
  return std::nullopt;
}

// Whether the kernel of kind `kind`, the `nth` of its kind (1-based), follows enough earlier kernels
// (`before`: counts by kind of those that started before it) for a pipeline (ChainPeers::TwoWayChain).
bool ChainOrderHolds(ChainKernelKind kind, int64_t nth, const std::array<int64_t, 4>& before, bool has_previous,
                     bool has_next) {
  const auto count = [&](ChainKernelKind k) { return before[static_cast<size_t>(k)]; };
  switch (kind) {
    case ChainKernelKind::kForwardSend:
      return !has_previous || count(ChainKernelKind::kForwardRecv) >= nth;
    case ChainKernelKind::kBackwardRecv:
      return count(ChainKernelKind::kForwardSend) >= nth;
    case ChainKernelKind::kBackwardSend:
      return (!has_next || count(ChainKernelKind::kBackwardRecv) >= nth) && count(ChainKernelKind::kForwardRecv) >= nth;
    case ChainKernelKind::kForwardRecv:
      break;
  }
  return true;
}

}  // namespace

bool ChainPeers::TwoWayChain(const std::vector<const Collective*>& kernels, const std::vector<int64_t>& members,
                             int64_t rank, int64_t implied_peer) {
  const auto at = PositionIn(members, rank);
  if (!at || kernels.empty()) return false;
  const auto [place, size] = *at;
  const bool has_previous = place > 0, has_next = place + 1 < size;
  const int64_t previous = has_previous ? members[place - 1] : kNoId;
  const int64_t next = has_next ? members[place + 1] : kNoId;
  std::array<int64_t, 4> before{}, seen{};
  size_t started = 0;  // kernels[0, started) started before the current one, counted in `before`
  bool backward = false, forward = false;
  for (size_t i = 0; i < kernels.size(); ++i) {
    for (; started < i && kernels[started]->start_ns < kernels[i]->start_ns; ++started) {
      ++before[static_cast<size_t>(*ChainKindOf(*kernels[started], rank, implied_peer, previous, next))];
    }
    const std::optional<ChainKernelKind> kind = ChainKindOf(*kernels[i], rank, implied_peer, previous, next);
    if (!kind) return false;
    const int64_t nth = ++seen[static_cast<size_t>(*kind)];
    if (!ChainOrderHolds(*kind, nth, before, has_previous, has_next)) return false;
    (*kind == ChainKernelKind::kBackwardRecv || *kind == ChainKernelKind::kBackwardSend ? backward : forward) = true;
  }
  return forward && backward;
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

PairSide PairSideOf(const std::vector<const Collective*>& kernels, int64_t rank, int64_t peer) {
  const bool first = ChainPeers::TwoWayChain(kernels, {rank, peer}, rank, peer);
  const bool second = ChainPeers::TwoWayChain(kernels, {peer, rank}, rank, peer);
  if (first == second) return PairSide::kNeither;
  return first ? PairSide::kFirst : PairSide::kSecond;
}

}  // namespace tuneprof

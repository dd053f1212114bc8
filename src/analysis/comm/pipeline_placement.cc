#include "analysis/comm/pipeline_placement.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "analysis/comm/comm_groups.h"
#include "analysis/comm/pipeline_peers.h"

namespace tuneprof {
namespace {

// MindSpeed / Megatron name the pipeline group "pp" (and "pp_new_stream" for the same ranks on a second
// stream); "pipeline" is accepted as well.
bool IsPipelineRole(const std::string& name) { return name == "pp" || name == "pipeline"; }

// A process group's description or name as Megatron ("PIPELINE_MODEL_PARALLEL_GROUP") and torchtitan
// ("mesh_pp") set it on PyTorch: the pipeline's group.
bool IsPipelineDescription(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("pipeline") != std::string::npos || lower == "pp" || lower.ends_with("_pp");
}

// The rank's position in the first pp group that lists it: profiler_metadata.json's parallel_group_info,
// else the process group of its collectives (Kineto NCCL args) that names the pipeline. nullopt when none
// does.
std::optional<StagePlace> NamedStageOf(const RankCommunication& rank) {
  for (const ParallelGroupInfo& group : rank.parallel_groups) {
    if (!IsPipelineRole(group.name)) continue;
    if (auto at = PositionIn(group.global_ranks, rank.rank)) return StagePlace{at->first, at->second, group.name, ""};
  }
  for (const Collective& c : rank.collectives) {
    if (!IsPipelineDescription(c.group_desc) && !IsPipelineDescription(c.group)) continue;
    if (auto at = PositionIn(ParseGroupRanks(c.group_ranks), rank.rank); at && at->second > 1) {
      return StagePlace{at->first, at->second, IsPipelineDescription(c.group_desc) ? c.group_desc : c.group,
                        c.group_ranks};
    }
  }
  return std::nullopt;
}

// The role of stages inferred from a communicator that carries the activations forward and the gradients
// back (ChainPeers::TwoWayChain); "p2p chain" for the others.
constexpr std::string_view kBothWaysChainRole = "p2p chain both ways";

// Where no group names the pipeline and no two-rank groups chain the ranks: a communicator of more than two
// ranks that holds only send / recv on every rank of the input and carries a forward chain on each (see
// ChainPeers); a rank's stage is its place in the communicator's ranks. The first such communicator (by
// its ranks' text) of each rank. A chain both ways (gradients back over it) is told apart by its role.
std::map<int64_t, StagePlace> InferCommunicatorChains(const std::vector<RankCommunication>& ranks,
                                                      std::set<std::string>* groups = nullptr) {
  std::set<std::pair<std::string_view, std::string_view>> chains, broken, both_ways;
  for (const RankCommunication& rank : ranks) {
    if (rank.steps == 0) continue;
    ChainPeers peers(rank);
    for (const Collective& c : rank.collectives) {
      const std::pair<std::string_view, std::string_view> key(c.group, c.group_ranks);
      if (c.group_ranks.empty()) continue;
      if (c.type != CollectiveType::kSendRecv) {
        broken.insert(key);
      } else {
        (peers.Of(c) ? chains : broken).insert(key);
        if (peers.BothWays(c)) both_ways.insert(key);
      }
    }
  }
  std::map<int64_t, StagePlace> out;
  for (const auto& key : chains) {
    if (broken.contains(key)) continue;
    if (groups != nullptr) groups->emplace(key.first);
    const std::vector<int64_t> members = ParseGroupRanks(key.second);
    for (size_t i = 0; i < members.size(); ++i) {
      out.try_emplace(members[i], StagePlace{static_cast<int64_t>(i), static_cast<int64_t>(members.size()),
                                             std::string(both_ways.contains(key) ? kBothWaysChainRole : "p2p chain"),
                                             key.second, false});
    }
  }
  return out;
}

// A pair of ranks' p2p over their two-rank p2p groups, from one side: its kernels by direction, and, where
// they go both ways, its side of a pipeline (PairSideOf).
struct PairExchange {
  PairTraffic traffic;
  std::vector<const Collective*> kernels;  // in start order
  PairSide side = PairSide::kNeither;
  std::set<std::string_view> groups;  // the process groups they run on
};

// Each (rank, peer)'s exchange over the two-rank groups that hold only send / recv on the rank.
std::map<std::pair<int64_t, int64_t>, PairExchange> PairExchanges(const std::vector<RankCommunication>& ranks) {
  PairPeers peers;
  std::map<std::pair<int64_t, int64_t>, PairExchange> out;  // (rank, peer)
  for (const RankCommunication& rank : ranks) {
    if (rank.steps == 0) continue;
    const auto groups = P2pOnlyPairGroups(rank, &peers);
    for (const Collective& c : rank.collectives) {
      if (c.type != CollectiveType::kSendRecv || !groups.contains({c.group, c.group_ranks})) continue;
      PairExchange& e = out[{rank.rank, *peers.Of(c.group_ranks, rank.rank)}];
      PairTraffic& t = e.traffic;
      ++(c.direction == P2pDirection::kSend ? t.sends : c.direction == P2pDirection::kRecv ? t.recvs : t.unknown);
      e.kernels.push_back(&c);
      e.groups.insert(c.group);
    }
  }
  for (auto& [pair, e] : out) {
    if (e.traffic.sends > 0 && e.traffic.recvs > 0) e.side = PairSideOf(e.kernels, pair.first, pair.second);
  }
  return out;
}

// Whether the pair's p2p makes `pair.first` the stage before `pair.second`: one only sends and the other
// only receives (a forward chain), or both sides carry it both ways and agree which is first (activations
// forward, their gradients back). `both_ways` is set for the second kind.
bool Precedes(const std::map<std::pair<int64_t, int64_t>, PairExchange>& exchanges,
              const std::pair<int64_t, int64_t>& pair, const PairExchange& e, bool* both_ways) {
  const auto back = exchanges.find({pair.second, pair.first});
  if (back == exchanges.end()) return false;
  if (e.traffic.SendsOnly() && back->second.traffic.ReceivesOnly()) return true;
  *both_ways = e.side == PairSide::kFirst && back->second.side == PairSide::kSecond;
  return *both_ways;
}

// Stages from the bare p2p pattern (see the header): an edge a -> b where a precedes b over their two-rank
// p2p groups (Precedes). Ranks with more than one edge either way (a fan, not a chain) and cycles leave the
// inference empty. `groups` gets the process groups of the edges.
std::map<int64_t, StagePlace> InferChains(const std::vector<RankCommunication>& ranks,
                                          std::set<std::string>* groups = nullptr) {
  const auto exchanges = PairExchanges(ranks);
  std::map<int64_t, int64_t> next, prev;
  std::set<std::string_view> edge_groups;
  bool both_ways = false;
  for (const auto& [pair, e] : exchanges) {
    bool two_way = false;
    if (!Precedes(exchanges, pair, e, &two_way)) continue;
    both_ways = both_ways || two_way;
    if (!next.emplace(pair.first, pair.second).second || !prev.emplace(pair.second, pair.first).second) return {};
    edge_groups.insert(e.groups.begin(), e.groups.end());
  }
  const std::string role(both_ways ? kBothWaysChainRole : "p2p chain");
  std::map<int64_t, StagePlace> out;
  for (const auto& [head, unused] : next) {
    if (prev.contains(head)) continue;
    std::vector<int64_t> chain = {head};
    for (auto it = next.find(head); it != next.end() && chain.size() <= next.size(); it = next.find(it->second)) {
      chain.push_back(it->second);
    }
    for (size_t i = 0; i < chain.size(); ++i) {
      out[chain[i]] = StagePlace{static_cast<int64_t>(i), static_cast<int64_t>(chain.size()), role, "", true};
    }
  }
  if (groups != nullptr && !out.empty()) groups->insert(edge_groups.begin(), edge_groups.end());
  return out;
}

}  // namespace

// Each rank's place: the named pp groups where any rank has one, else the chains of the p2p pattern.
std::map<size_t, StagePlace> PlaceRanksInPipeline(const std::vector<RankCommunication>& ranks, bool* inferred) {
  std::map<size_t, StagePlace> out;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].steps == 0) continue;
    if (auto place = NamedStageOf(ranks[i])) out.emplace(i, std::move(*place));
  }
  *inferred = out.empty();
  if (!*inferred) return out;
  std::map<int64_t, StagePlace> chains = InferChains(ranks);
  if (chains.empty()) chains = InferCommunicatorChains(ranks);
  for (size_t i = 0; i < ranks.size() && !chains.empty(); ++i) {
    auto it = chains.find(ranks[i].rank);
    if (ranks[i].steps > 0 && it != chains.end()) out.emplace(i, it->second);
  }
  return out;
}

std::set<std::string> InferredPipelineGroups(const std::vector<RankCommunication>& ranks) {
  std::set<std::string> groups;
  if (InferChains(ranks, &groups).empty()) InferCommunicatorChains(ranks, &groups);
  return groups;
}

}  // namespace tuneprof

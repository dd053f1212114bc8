#include "analysis/comm/pipeline_stages.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cctype>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "analysis/comm/comm_groups.h"
#include "analysis/comm/pipeline_peers.h"
#include "analysis/comm/pipeline_retime.h"
#include "base/enum_names.h"

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

// Where a rank stands in the pipeline, and which of its kernels are the pipeline's p2p.
struct StagePlace {
  int64_t stage = 0;
  int64_t size = 0;
  std::string role;
  std::string_view group_ranks;  // the named pp group's ranks as its collectives write them; "" otherwise
  bool chain = false;            // inferred: the p2p kernels are those of the rank's two-rank p2p groups
};

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

// A rank's pipeline p2p kernels and, where the trace or the group says it, the peer each one pairs with.
// Where the trace names the peer (groups of any size), the kernel is the pair's `pair_ordinal`-th in its
// group: NCCL runs one pair's p2p calls on a communicator in order, while the group's sequence also counts
// what each rank exchanges with its other peers.
struct P2pKernel {
  const Collective* kernel = nullptr;
  std::optional<int64_t> peer;
  int64_t pair_ordinal = -1;  // -1: the peer comes from a two-rank group; matched by the group's sequence
};

std::vector<P2pKernel> P2pKernelsOf(const RankCommunication& rank, const StagePlace& place, PairPeers* peers) {
  std::vector<P2pKernel> out;
  if (place.group_ranks.empty() && !place.chain) return out;
  const auto pair_groups =
      place.chain ? P2pOnlyPairGroups(rank, peers) : std::set<std::pair<std::string_view, std::string_view>>();
  std::map<std::pair<std::string_view, int64_t>, int64_t> next_ordinal;  // (group, peer)
  ChainPeers chain(rank);
  for (const Collective& c : rank.collectives) {
    if (c.type != CollectiveType::kSendRecv) continue;
    const bool in_pipeline =
        place.chain ? pair_groups.contains({c.group, c.group_ranks}) : c.group_ranks == place.group_ranks;
    if (!in_pipeline) continue;
    if (c.peer != kNoId && c.peer != rank.rank) {
      out.push_back(P2pKernel{&c, c.peer, next_ordinal[{c.group, c.peer}]++});
    } else if (auto pair = peers->Of(c.group_ranks, rank.rank)) {
      out.push_back(P2pKernel{&c, pair});
    } else if (auto neighbour = chain.Of(c)) {
      out.push_back(P2pKernel{&c, neighbour, next_ordinal[{c.group, *neighbour}]++});
    } else {
      out.push_back(P2pKernel{&c, std::nullopt});
    }
  }
  return out;
}

// Each rank's send / recv kernels by (group, sequence): where its peer's matching kernel is found.
using KernelIndex = std::map<std::pair<std::string_view, int64_t>, const Collective*>;

KernelIndex IndexP2pKernels(const RankCommunication& rank) {
  KernelIndex out;
  for (const Collective& c : rank.collectives) {
    if (c.type == CollectiveType::kSendRecv) out.emplace(std::make_pair(std::string_view(c.group), c.sequence), &c);
  }
  return out;
}

// Each rank's send / recv kernels that name their peer, or whose peer their forward chain gives (ChainPeers),
// by (group, peer, the pair's ordinal in the group).
using PairKernelIndex = std::map<std::tuple<std::string_view, int64_t, int64_t>, const Collective*>;

PairKernelIndex IndexPairKernels(const RankCommunication& rank) {
  PairKernelIndex out;
  std::map<std::pair<std::string_view, int64_t>, int64_t> next_ordinal;
  ChainPeers chain(rank);
  for (const Collective& c : rank.collectives) {
    if (c.type != CollectiveType::kSendRecv) continue;
    const std::optional<int64_t> peer = c.peer != kNoId && c.peer != rank.rank ? c.peer : chain.Of(c);
    if (!peer) continue;
    out.emplace(std::make_tuple(std::string_view(c.group), *peer, next_ordinal[{c.group, *peer}]++), &c);
  }
  return out;
}

// What the ranks' p2p kernels are measured against: the other ranks' kernels and the clocks.
struct PeerContext {
  const std::vector<RankCommunication>* ranks = nullptr;
  const ClockAlignment* clocks = nullptr;
  std::map<int64_t, size_t> index_of;              // rank id -> index in ranks
  std::map<size_t, KernelIndex> kernels;           // built on first use
  std::map<size_t, PairKernelIndex> pair_kernels;  // built on first use

  const RankClockOffset* Clock(size_t index) const {
    return index < clocks->ranks.size() && clocks->ranks.size() == ranks->size() ? &clocks->ranks[index] : nullptr;
  }
  int64_t Correction(size_t index) const { return Clock(index) ? Clock(index)->correction_ns() : 0; }
  int64_t Residual(size_t index) const { return Clock(index) ? Clock(index)->residual_ns() : 0; }
  const KernelIndex& KernelsOf(size_t index) {
    auto [it, added] = kernels.try_emplace(index);
    if (added) it->second = IndexP2pKernels((*ranks)[index]);
    return it->second;
  }
  const PairKernelIndex& PairKernelsOf(size_t index) {
    auto [it, added] = pair_kernels.try_emplace(index);
    if (added) it->second = IndexPairKernels((*ranks)[index]);
    return it->second;
  }
  // The peer's kernel that `k` (a kernel of the rank `rank`) pairs with; nullptr when it has none.
  const Collective* MatchOf(const P2pKernel& k, int64_t rank, size_t peer_index) {
    if (k.pair_ordinal >= 0) {
      const PairKernelIndex& theirs = PairKernelsOf(peer_index);
      const auto match = theirs.find({std::string_view(k.kernel->group), rank, k.pair_ordinal});
      return match == theirs.end() ? nullptr : match->second;
    }
    const KernelIndex& theirs = KernelsOf(peer_index);
    const auto match = theirs.find({std::string_view(k.kernel->group), k.kernel->sequence});
    return match == theirs.end() ? nullptr : match->second;
  }
};

// The step that launched the kernel, as RankPipelineWait keys it.
int64_t StepKey(const Collective& c) { return c.step.value_or(kNoId); }

// The time the kernels are not hidden under the rank's compute (their wait and their transfer), ns; per
// step into `by_step`.
double ExposedNs(const std::vector<P2pKernel>& kernels, std::map<int64_t, double>* by_step) {
  double exposed = 0;
  for (const P2pKernel& k : kernels) {
    if (k.kernel->exposed_ns <= 0) continue;
    exposed += static_cast<double>(k.kernel->exposed_ns);
    (*by_step)[StepKey(*k.kernel)] += static_cast<double>(k.kernel->exposed_ns);
  }
  return exposed;
}

// Damaged files can hold times near the int64 range: differences saturate instead of wrapping.
int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

struct GpuWait {
  double wait_ns = 0;
  P2pWaitMeasure measure = P2pWaitMeasure::kNone;
  std::string note;                   // why the peer's start could not be used
  std::map<int64_t, double> by_step;  // wait_ns per step that launched the kernels
};

// Σ over the kernels of the part before the peer's matching kernel starts; nullopt (and `note` says why)
// where some kernel cannot be matched or the clocks cannot tell.
std::optional<double> PeerWaitNs(size_t index, const std::vector<P2pKernel>& kernels, PeerContext* context,
                                 std::string* note, std::map<int64_t, double>* by_step) {
  const int64_t rank = (*context->ranks)[index].rank;
  double wait = 0, duration = 0;
  int64_t doubt = 0, doubt_peer = 0;
  for (const P2pKernel& k : kernels) {
    if (!k.peer) {
      *note = fmt::format(
          "rank {}: its p2p group {} has more than two ranks, the trace does not name the peer and the group is no "
          "forward chain (its first member receives, its last sends, or a direction is unknown)",
          rank, k.kernel->group_ranks);
      return std::nullopt;
    }
    const auto peer = context->index_of.find(*k.peer);
    if (peer == context->index_of.end()) {
      *note = fmt::format("rank {}: its peer rank {} is not in the input", rank, *k.peer);
      return std::nullopt;
    }
    const Collective* match = context->MatchOf(k, rank, peer->second);
    if (match == nullptr) {
      *note = fmt::format("rank {}: rank {} has no p2p kernel to match its number {} in group \"{}\"", rank, *k.peer,
                          k.pair_ordinal >= 0 ? k.pair_ordinal : k.kernel->sequence, k.kernel->group);
      return std::nullopt;
    }
    const int64_t own_start = SaturatingSub(k.kernel->start_ns, context->Correction(index));
    const int64_t peer_start = SaturatingSub(match->start_ns, context->Correction(peer->second));
    const auto kernel_wait =
        static_cast<double>(std::clamp<int64_t>(SaturatingSub(peer_start, own_start), 0, k.kernel->duration_ns));
    wait += kernel_wait;
    (*by_step)[StepKey(*k.kernel)] += kernel_wait;
    duration += static_cast<double>(k.kernel->duration_ns);
    const int64_t pair_doubt = context->Residual(index) + context->Residual(peer->second);
    if (pair_doubt > doubt) {
      doubt = pair_doubt;
      doubt_peer = *k.peer;
    }
  }
  const double mean = kernels.empty() ? 0 : duration / static_cast<double>(kernels.size());
  if (static_cast<double>(doubt) > kMaxClockDoubtShare * mean) {
    *note = fmt::format(
        "rank {}: its clock and rank {}'s may be {:.3f} ms apart, more than {:.0f} % of its mean p2p kernel ({:.3f} "
        "ms)",
        rank, doubt_peer, static_cast<double>(doubt) / 1e6, 100 * kMaxClockDoubtShare, mean / 1e6);
    return std::nullopt;
  }
  return wait;
}

GpuWait MeasureGpuWait(size_t index, const StagePlace& place, PeerContext* context, PairPeers* peers) {
  GpuWait out;
  const std::vector<P2pKernel> kernels = P2pKernelsOf((*context->ranks)[index], place, peers);
  if (kernels.empty()) return out;
  if (std::optional<double> wait = PeerWaitNs(index, kernels, context, &out.note, &out.by_step)) {
    out.wait_ns = *wait;
    out.measure = P2pWaitMeasure::kPeerStart;
    return out;
  }
  out.by_step.clear();
  out.wait_ns = ExposedNs(kernels, &out.by_step);
  out.measure = P2pWaitMeasure::kExposed;
  return out;
}

// Σ Wait Time of the rank's p2p operations (communication.json), ns.
double P2pWaitNs(const RankCommunication& rank) {
  double wait_ms = 0;
  for (const AscendCommOp& op : rank.ascend_ops) {
    if (IsP2pOp(op) && !op.total && SplitKnown(op) && op.wait_ms > 0) wait_ms += op.wait_ms;
  }
  return wait_ms * 1e6;
}

// The stage's measure: communication.json wherever a rank has it, else the fallback wherever a rank fell
// back to it, else the peer's start.
int Priority(P2pWaitMeasure m) {
  switch (m) {
    case P2pWaitMeasure::kCommunicationJson:
      return 3;
    case P2pWaitMeasure::kExposed:
      return 2;
    case P2pWaitMeasure::kPeerStart:
      return 1;
    case P2pWaitMeasure::kNone:
      break;
  }
  return 0;
}

P2pWaitMeasure Combine(P2pWaitMeasure stage, P2pWaitMeasure rank) {
  return Priority(rank) > Priority(stage) ? rank : stage;
}

void AddRank(const RankCommunication& rank, const GpuWait& gpu, PipelineStage* s) {
  const double steps = static_cast<double>(rank.steps);
  s->ranks.push_back(rank.rank);
  s->computing_ns_per_step += static_cast<double>(rank.computing_ns) / steps;
  const bool ascend = !rank.ascend_ops.empty();
  s->p2p_wait_ns_per_step += (ascend ? P2pWaitNs(rank) : gpu.wait_ns) / steps;
  s->p2p_wait_measure = Combine(s->p2p_wait_measure, ascend ? P2pWaitMeasure::kCommunicationJson : gpu.measure);
  s->bubble_ns_per_step += static_cast<double>(rank.bubble_ns > 0 ? rank.bubble_ns : gpu.wait_ns) / steps;
  s->step_ns_per_step += static_cast<double>(rank.wall_ns) / steps;
}

void Average(PipelineStage* s) {
  const double n = static_cast<double>(s->ranks.size());
  s->computing_ns_per_step /= n;
  s->p2p_wait_ns_per_step /= n;
  s->bubble_ns_per_step /= n;
  s->step_ns_per_step /= n;
  s->stage_ns_per_step = s->step_ns_per_step - s->bubble_ns_per_step;
  s->p2p_wait_known = (s->p2p_wait_measure == P2pWaitMeasure::kCommunicationJson ||
                       s->p2p_wait_measure == P2pWaitMeasure::kPeerStart) &&
                      s->p2p_wait_ns_per_step > 0;
  s->waiting_ns_per_step =
      s->p2p_wait_known ? std::min(s->p2p_wait_ns_per_step, s->bubble_ns_per_step) : s->bubble_ns_per_step;
}

// Each stage's waiting charged once (pipeline_stages.h), and the what-if of balanced stages.
double MeanWorkOfOthers(const PipelineAnalysis& p, const PipelineStage& slowest) {
  double sum = 0;
  for (const PipelineStage& s : p.stages) sum += &s == &slowest ? 0 : s.work_ns_per_step;
  return p.stages.size() > 1 ? sum / static_cast<double>(p.stages.size() - 1) : 0;
}

void ChargeWaits(PipelineAnalysis* out) {
  PipelineStage* slowest = nullptr;
  for (PipelineStage& s : out->stages) {
    if (s.stage == out->slowest_stage) slowest = &s;
  }
  for (PipelineStage& s : out->stages) {
    if (&s != slowest) {
      s.wait_for_slowest_ns_per_step =
          WaitForSlowestNs(s.work_ns_per_step, s.waiting_ns_per_step, slowest->work_ns_per_step);
      slowest->holds_up_ns_per_step += s.wait_for_slowest_ns_per_step;
    }
    s.fill_drain_ns_per_step = s.waiting_ns_per_step - s.wait_for_slowest_ns_per_step;
  }
  out->balanced_gain_ns_per_step =
      slowest->p2p_wait_measure == P2pWaitMeasure::kPeerStart
          ? ChainBalancedGainNs(slowest->work_ns_per_step, slowest->fill_drain_ns_per_step, out->mean_work_ns_per_step,
                                MeanWorkOfOthers(*out, *slowest))
          : BalancedStagesGainNs(slowest->work_ns_per_step, slowest->fill_drain_ns_per_step,
                                 out->mean_work_ns_per_step);
}

// The stage that works most bounds the step. Stages whose work ties within kStageTieShare of the most
// (balanced stages) are told apart by their step: the one with the longest step is last in the chain, where
// the others' fill and drain end.
const PipelineStage& BoundingStage(const std::vector<PipelineStage>& stages) {
  const PipelineStage* most = &stages.front();
  for (const PipelineStage& s : stages) {
    if (s.work_ns_per_step > most->work_ns_per_step) most = &s;
  }
  const double tie = most->work_ns_per_step * (1 - kStageTieShare);
  const PipelineStage* bounding = most;
  for (const PipelineStage& s : stages) {
    if (s.work_ns_per_step >= tie && s.step_ns_per_step > bounding->step_ns_per_step) bounding = &s;
  }
  return *bounding;
}

void Compare(PipelineAnalysis* out) {
  out->work_is_computing = std::any_of(out->stages.begin(), out->stages.end(),
                                       [](const PipelineStage& s) { return s.computing_ns_per_step > 0; });
  double sum = 0;
  for (PipelineStage& s : out->stages) {
    s.work_ns_per_step = out->work_is_computing ? s.computing_ns_per_step : s.stage_ns_per_step;
    sum += s.work_ns_per_step;
  }
  out->mean_work_ns_per_step = sum / static_cast<double>(out->stages.size());
  auto by_work = [](const PipelineStage& a, const PipelineStage& b) { return a.work_ns_per_step < b.work_ns_per_step; };
  const PipelineStage& slowest = BoundingStage(out->stages);
  const PipelineStage& fastest = *std::min_element(out->stages.begin(), out->stages.end(), by_work);
  out->slowest_stage = slowest.stage;
  out->fastest_stage = fastest.stage;
  if (slowest.work_ns_per_step > 0) {
    out->imbalance = (slowest.work_ns_per_step - fastest.work_ns_per_step) / slowest.work_ns_per_step;
  }
  out->uneven = out->imbalance > kStageImbalanceThreshold;
  ChargeWaits(out);
}

// Where every stage's wait was measured against its peers' starts (GPU send / recv kernels matched one by
// one), the what-if of balanced stages re-times the measured schedule (pipeline_retime.h) instead of
// scaling the slowest stage's fill and drain: the fill and drain of 1F1B depend on every stage's forward and
// backward, not on the slowest stage alone. Left as ChargeWaits put it where the re-timing cannot be done.
void RetimeBalanced(const std::map<size_t, StagePlace>& places, PeerContext* context, PairPeers* peers,
                    PipelineAnalysis* out) {
  const bool matched = std::all_of(out->stages.begin(), out->stages.end(), [](const PipelineStage& s) {
    return s.p2p_wait_measure == P2pWaitMeasure::kPeerStart;
  });
  if (!matched) return;
  std::vector<StagedRankSchedule> staged;
  for (const auto& [index, place] : places) {
    const RankCommunication& rank = (*context->ranks)[index];
    const PipelineStage* stage = StageOfRank(*out, rank.rank);
    if (stage == nullptr || stage->work_ns_per_step <= 0) return;
    StagedRankSchedule& s = staged.emplace_back();
    s.rank = &rank;
    s.compute_scale = out->mean_work_ns_per_step / stage->work_ns_per_step;
    s.clock_correction_ns = context->Correction(index);
    for (const P2pKernel& k : P2pKernelsOf(rank, place, peers)) {
      const auto peer = k.peer ? context->index_of.find(*k.peer) : context->index_of.end();
      const Collective* match =
          peer == context->index_of.end() ? nullptr : context->MatchOf(k, rank.rank, peer->second);
      s.kernels.push_back(HandOffKernel{k.kernel, match});
    }
  }
  if (const std::optional<BalancedRetime> retimed = RetimeBalancedStages(staged)) {
    out->balanced_gain_ns_per_step = retimed->gain_ns_per_step;
    out->balanced_gain_ns_by_step = retimed->gain_ns_by_step;
  }
}

// Each rank's place: the named pp groups where any rank has one, else the chains of the p2p pattern.
std::map<size_t, StagePlace> PlaceRanks(const std::vector<RankCommunication>& ranks, bool* inferred) {
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

}  // namespace

std::set<std::string> InferredPipelineGroups(const std::vector<RankCommunication>& ranks) {
  std::set<std::string> groups;
  if (InferChains(ranks, &groups).empty()) InferCommunicatorChains(ranks, &groups);
  return groups;
}

std::string_view P2pWaitMeasureName(P2pWaitMeasure measure) {
  static constexpr std::array<std::string_view, 4> kNames = {"none", "communication_json", "peer_start", "exposed"};
  return EnumName(measure, kNames, "none");
}

std::optional<PipelineAnalysis> AnalyzePipelineStages(const std::vector<RankCommunication>& ranks,
                                                      const ClockAlignment& clocks) {
  PipelineAnalysis out;
  const std::map<size_t, StagePlace> places = PlaceRanks(ranks, &out.inferred);
  PeerContext context{&ranks, &clocks, {}, {}, {}};
  for (size_t i = 0; i < ranks.size(); ++i) context.index_of.emplace(ranks[i].rank, i);
  PairPeers peers;
  std::map<int64_t, PipelineStage> by_stage;
  double step_total = 0, bubble_total = 0;
  for (const auto& [index, place] : places) {
    const RankCommunication& rank = ranks[index];
    out.group_name = place.role;
    out.pipeline_size = std::max(out.pipeline_size, place.size);
    const GpuWait gpu = MeasureGpuWait(index, place, &context, &peers);
    if (gpu.measure != P2pWaitMeasure::kNone) {
      out.gpu_waits.push_back(
          RankPipelineWait{rank.rank, gpu.wait_ns / static_cast<double>(rank.steps), gpu.measure, gpu.by_step});
    }
    if (out.p2p_wait_note.empty()) out.p2p_wait_note = gpu.note;
    PipelineStage& s = by_stage[place.stage];
    s.stage = place.stage;
    AddRank(rank, gpu, &s);
    step_total += static_cast<double>(rank.wall_ns);
    bubble_total += static_cast<double>(rank.bubble_ns > 0 ? rank.bubble_ns : gpu.wait_ns);
  }
  if (by_stage.size() < 2) return std::nullopt;
  for (auto& [index, s] : by_stage) {
    Average(&s);
    out.stages.push_back(s);
  }
  Compare(&out);
  RetimeBalanced(places, &context, &peers, &out);
  if (step_total > 0) out.bubble_share = bubble_total / step_total;
  return out;
}

double GpuPipelineWaitNsPerStep(const PipelineAnalysis& pipeline, int64_t rank) {
  const RankPipelineWait* wait = GpuPipelineWaitOf(pipeline, rank);
  return wait == nullptr ? 0 : wait->wait_ns_per_step;
}

const RankPipelineWait* GpuPipelineWaitOf(const PipelineAnalysis& pipeline, int64_t rank) {
  for (const RankPipelineWait& w : pipeline.gpu_waits) {
    if (w.rank == rank) return &w;
  }
  return nullptr;
}

double BalancedStagesGainNs(double slowest_work_ns, double slowest_fill_drain_ns, double mean_work_ns) {
  if (slowest_work_ns <= 0 || mean_work_ns >= slowest_work_ns) return 0;
  const double fill_drain_factor = (slowest_work_ns + std::max(slowest_fill_drain_ns, 0.0)) / slowest_work_ns;
  return (slowest_work_ns - mean_work_ns) * fill_drain_factor;
}

double ChainBalancedGainNs(double slowest_work_ns, double slowest_fill_ns, double mean_work_ns,
                           double others_mean_work_ns) {
  if (slowest_work_ns <= 0 || mean_work_ns >= slowest_work_ns || others_mean_work_ns <= 0) return 0;
  const double balanced_fill_ns = std::max(slowest_fill_ns, 0.0) * mean_work_ns / others_mean_work_ns;
  return std::max(0.0, slowest_work_ns - mean_work_ns + std::max(slowest_fill_ns, 0.0) - balanced_fill_ns);
}

double WaitForSlowestNs(double own_work_ns, double own_bubble_ns, double slowest_work_ns) {
  return std::clamp(slowest_work_ns - own_work_ns, 0.0, std::max(own_bubble_ns, 0.0));
}

void AddGpuPipelineBubble(const RankPipelineWait& wait, RankBreakdown* rank) {
  if (rank->definitions == StepDefinitions::kTorchNpu || rank->total.bubble_ns > 0) return;
  int64_t bubble = 0, exposed = 0;
  for (StepBreakdown& step : rank->steps) {
    const auto it = wait.wait_ns_by_step.find(step.step.value_or(kNoId));
    const int64_t wait_ns = it == wait.wait_ns_by_step.end() ? 0 : std::llround(it->second);
    step.bubble_ns = std::clamp<int64_t>(wait_ns, 0, std::max<int64_t>(step.communication_not_overlapped_ns, 0));
    step.communication_not_overlapped_ns -= step.bubble_ns;
    bubble += step.bubble_ns;
    exposed += step.communication_not_overlapped_ns;
  }
  rank->total.bubble_ns = bubble;
  rank->total.communication_not_overlapped_ns = exposed;
}

StepExtremes StepExtremesOf(const PipelineAnalysis& pipeline) {
  if (pipeline.stages.empty()) return {};
  const auto by_step = [](const PipelineStage& a, const PipelineStage& b) {
    return a.step_ns_per_step < b.step_ns_per_step;
  };
  const auto [shortest, longest] = std::minmax_element(pipeline.stages.begin(), pipeline.stages.end(), by_step);
  const bool tie = longest->step_ns_per_step - shortest->step_ns_per_step <= kStageTieShare * longest->step_ns_per_step;
  return StepExtremes{tie ? nullptr : &*longest, &*shortest};
}

bool IsP2pOp(const AscendCommOp& op) {
  return op.p2p || op.op_name.starts_with("hcom_receive") || op.op_name.starts_with("hcom_send") ||
         op.op_name.starts_with("hcom_batchSendRecv");
}

const PipelineStage* StageOfRank(const PipelineAnalysis& pipeline, int64_t rank) {
  for (const PipelineStage& s : pipeline.stages) {
    if (std::find(s.ranks.begin(), s.ranks.end(), rank) != s.ranks.end()) return &s;
  }
  return nullptr;
}

const PipelineStage& StageNumbered(const PipelineAnalysis& pipeline, int64_t stage) {
  for (const PipelineStage& s : pipeline.stages) {
    if (s.stage == stage) return s;
  }
  return pipeline.stages.front();
}

}  // namespace tuneprof

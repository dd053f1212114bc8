#include "analysis/comm/pipeline_stages.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "analysis/comm/pipeline_peers.h"
#include "analysis/comm/pipeline_placement.h"
#include "analysis/comm/pipeline_retime.h"
#include "base/enum_names.h"

namespace tuneprof {
namespace {

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

}  // namespace

std::string_view P2pWaitMeasureName(P2pWaitMeasure measure) {
  static constexpr std::array<std::string_view, 4> kNames = {"none", "communication_json", "peer_start", "exposed"};
  return EnumName(measure, kNames, "none");
}

std::optional<PipelineAnalysis> AnalyzePipelineStages(const std::vector<RankCommunication>& ranks,
                                                      const ClockAlignment& clocks) {
  PipelineAnalysis out;
  const std::map<size_t, StagePlace> places = PlaceRanksInPipeline(ranks, &out.inferred);
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

#pragma once
// Pipeline-parallel stages: each rank's stage comes from the pp groups that name the pipeline, else from the
// bare p2p pattern (pipeline_placement.h, which says which of its send / recv kernels are the pipeline's).
//
// Per stage, the mean over its ranks in the input of, per step: computing, the p2p wait, the bubble
// (time_breakdown.h: torch_npu's Bubble, else that p2p wait) and the step (Stage + Bubble; on GPUs the
// device span). The p2p wait is communication.json's Wait Time of the rank's send / receive /
// batchSendRecv operations on Ascend. On GPUs it is the part of each send / recv kernel that precedes the
// start of its peer's matching kernel: a transfer cannot begin before both sides are there, so that part
// is waiting for the other stage, the rest is the transfer. The peer's kernel is the one at the same place
// (sequence) in the same two-rank group; where the trace names each kernel's peer (Kineto's Dst Rank / Src
// Rank, NCCL's "Peer rank" in nsys payloads), in a group of any size, the one at the same place among the
// pair's kernels in the group. In a forward chain of more than two ranks whose kernels name no peer
// (pipeline_placement.h), a send's peer is the next member and a receive's the previous one, and the k-th
// send to a member pairs with that member's k-th receive from the rank, in order. Start times are compared
// on the clocks comm_cross_rank.h aligns.
// Where that cannot be done for some kernel of a rank (the peer is not in the input, the group has more
// than two ranks, carries no forward chain and the trace does not say which is the peer, or the two
// ranks' clocks can be wrong by more than kMaxClockDoubtShare of the rank's mean p2p kernel), the rank's
// wait is the time its p2p kernels are not hidden under its compute (wait and transfer together), and the
// analysis says why.
//
// The stage that computes most bounds the step: in a pipeline every micro-batch passes every stage, so
// the others wait for it, and their wait is bubble. Imbalance = (most - least computing) / most; a
// pipeline is uneven above kStageImbalanceThreshold. Where no rank has a computing time, the Stage time
// (step - bubble) stands for it.
//
// A stage's waiting is its p2p wait where that was measured (a bubble of send / receive operations also
// holds their transfer, which is no wait), else its bubble. Each stage's waiting is charged once, to what
// caused it: a stage that works less than the slowest waits min(its waiting, slowest work - its own) a step
// for the slowest stage's compute; the rest of its waiting, and the slowest stage's whole waiting, is the
// schedule's fill and drain, which no stage causes.
//
// What-if "stages balanced" (every stage works the mean stage's work): where every stage's wait was
// measured against its peers' starts and the ranks have step windows, the measured schedule re-timed with
// every stage's compute scaled to the mean (pipeline_retime.h): the longest rank's step, as measured less
// re-timed. Elsewhere the step is the slowest stage's work plus its fill and drain, and the fill and drain
// scale with a micro-batch's time, so the step shrinks by (slowest - mean work) x (slowest work + its fill
// and drain) / slowest work, never by more than its own bubble on a waiting stage.
//
// Cost: O(ranks × (groups + communication ops) per rank + p2p kernels × log(p2p kernels)); the forward
// chains' peers add O(p2p kernels × log(groups)) per rank.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/clock_alignment.h"
#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

constexpr double kStageImbalanceThreshold = 0.1;
// Stages whose work per step differs by less than this share of the most tie; the tie goes to the longer step.
constexpr double kStageTieShare = 0.005;
// The clocks of two ranks may be wrong by at most this share of the rank's mean p2p kernel for the
// peer's start to say how long the rank waited.
constexpr double kMaxClockDoubtShare = 0.1;

// How a rank's (and a stage's) p2p wait was measured.
enum class P2pWaitMeasure : uint8_t {
  kNone,               // no p2p operation in the pp group
  kCommunicationJson,  // Ascend: communication.json's Wait Time
  kPeerStart,          // GPU: the kernel's part before the peer's matching kernel starts
  kExposed,            // GPU fallback: the kernel time not hidden under compute (wait and transfer)
};
std::string_view P2pWaitMeasureName(P2pWaitMeasure measure);  // "none", "communication_json", "peer_start", "exposed"

struct PipelineStage {
  int64_t stage = 0;           // position in the pp group (or chain)
  std::vector<int64_t> ranks;  // input ranks at this stage
  double computing_ns_per_step = 0;
  double p2p_wait_ns_per_step = 0;  // 0 where neither communication.json nor the rank's p2p kernels say
  // Whether the p2p wait was measured (communication.json's Wait Time or the peer's start); false where the
  // input has no per-operation wait (a cluster CSV) or a GPU rank fell back to its exposed p2p time.
  bool p2p_wait_known = false;
  // The part of the bubble spent waiting: the p2p wait where it is known (the rest of the bubble is the
  // p2p transfer), else the whole bubble.
  double waiting_ns_per_step = 0;
  double bubble_ns_per_step = 0;
  double step_ns_per_step = 0;   // Stage + Bubble
  double stage_ns_per_step = 0;  // step - bubble: torch_npu's Stage
  double work_ns_per_step = 0;   // computing, or Stage where no stage has a computing time
  // Its waiting charged once: to the slowest stage's compute (0 on the slowest stage), and to the
  // schedule's fill and drain (the rest). The transfer a bubble also holds is neither.
  double wait_for_slowest_ns_per_step = 0;
  double fill_drain_ns_per_step = 0;
  // On the slowest stage: Σ over the other stages of their wait charged to it (each stage's mean rank).
  double holds_up_ns_per_step = 0;
  // The measure every rank of the stage used; kExposed where any GPU rank fell back to it.
  P2pWaitMeasure p2p_wait_measure = P2pWaitMeasure::kNone;
};

// A GPU rank's pipeline wait per step (its p2p kernels), which the advisor takes out of its exposed
// communication into the bubble.
struct RankPipelineWait {
  int64_t rank = 0;
  double wait_ns_per_step = 0;
  P2pWaitMeasure measure = P2pWaitMeasure::kNone;
  // The same wait summed per step that launched the kernels (ProfilerStep number; kNoId: outside every
  // step), for `profile`'s per-step bubble.
  std::map<int64_t, double> wait_ns_by_step;
};

struct PipelineAnalysis {
  std::string group_name;     // the role the stages come from ("pp", the process group's description, "p2p chain")
  bool inferred = false;      // stages from the p2p pattern: no group names the pipeline
  int64_t pipeline_size = 0;  // ranks per pp group (chain)
  std::vector<PipelineStage> stages;  // stages with ranks in the input, in stage order
  int64_t slowest_stage = 0;          // the most work per step: it bounds the step
  int64_t fastest_stage = 0;
  double mean_work_ns_per_step = 0;         // over the stages
  double imbalance = 0;                     // (slowest - fastest) / slowest work per step
  double bubble_share = 0;                  // Σ bubble / Σ step over the ranks with a stage
  bool work_is_computing = true;            // false: work is the Stage time (no computing known)
  bool uneven = false;                      // imbalance > kStageImbalanceThreshold
  std::vector<RankPipelineWait> gpu_waits;  // ranks with p2p kernels in the pp group, in input order
  // Why some GPU rank's wait is the exposed time rather than the peer's start (the first such rank); "".
  std::string p2p_wait_note;
  // What-if "stages balanced": the step the slowest stage bounds would shrink by this, per step.
  double balanced_gain_ns_per_step = 0;
  // The same per step (ProfilerStep number) where the run was re-timed (pipeline_retime.h); empty otherwise.
  std::map<int64_t, double> balanced_gain_ns_by_step;
};

// The what-if "stages balanced" on one step: the slowest stage works `slowest_work_ns` and waits
// `slowest_fill_drain_ns` (its fill and drain), the stages work `mean_work_ns` on average. The step's gain
// were every stage to work the mean: (slowest - mean) x (slowest + its bubble) / slowest, 0 when the
// slowest stage does no work.
double BalancedStagesGainNs(double slowest_work_ns, double slowest_fill_drain_ns, double mean_work_ns);

// The same what-if where the slowest stage's wait was measured kernel by kernel (a GPU chain of send / recv
// kernels, each stage handing a micro-batch on as it finishes it): that wait is the time it waits for the
// stages before it to hand over their first micro-batches, so it is made of their work, not its own, and
// balanced stages scale it by the mean work over theirs (`others_mean_work_ns`). The gain is the slowest
// stage's extra work plus its fill now less its fill balanced, which is below slowest - mean when the
// other stages work less than the mean.
double ChainBalancedGainNs(double slowest_work_ns, double slowest_fill_ns, double mean_work_ns,
                           double others_mean_work_ns);

// The part of a stage's bubble that waits for the slowest stage's compute: min(bubble, slowest work - own).
double WaitForSlowestNs(double own_work_ns, double own_bubble_ns, double slowest_work_ns);

// nullopt without pp groups (named or from the p2p pattern), or when fewer than two stages have ranks
// with steps in the input. `clocks` as AnalyzeAcrossRanks estimated them, in the order of `ranks` (empty:
// one clock, nothing known of its error).
std::optional<PipelineAnalysis> AnalyzePipelineStages(const std::vector<RankCommunication>& ranks,
                                                      const ClockAlignment& clocks = {});

// The rank's pipeline wait per step from its p2p kernels (see above); 0 when it has none.
double GpuPipelineWaitNsPerStep(const PipelineAnalysis& pipeline, int64_t rank);

// The rank's pipeline wait from its p2p kernels; nullptr when it has none.
const RankPipelineWait* GpuPipelineWaitOf(const PipelineAnalysis& pipeline, int64_t rank);

// On GPUs no profiler writes a bubble: the rank's pipeline wait (the figure comm and analyze give) taken out
// of each step's exposed communication into its bubble, as torch_npu's Bubble is, so that every command tells
// one step. Nothing changes on torch_npu ranks or where the rank already has a bubble.
void AddGpuPipelineBubble(const RankPipelineWait& wait, RankBreakdown* rank);

// An Ascend send / receive / batchSendRecv operation (communication.json): a pipeline hand-off on a staged rank.
bool IsP2pOp(const AscendCommOp& op);

// The stage of `rank`, nullptr when it has none.
const PipelineStage* StageOfRank(const PipelineAnalysis& pipeline, int64_t rank);

// The stage numbered `stage` (it must be one of the analysis's).
const PipelineStage& StageNumbered(const PipelineAnalysis& pipeline, int64_t stage);

// Whether every stage works alike (imbalance within kStageTieShare): then no stage is named as bounding the
// step against another, and the bubble is the schedule's own.
inline bool StagesEven(const PipelineAnalysis& pipeline) { return pipeline.imbalance <= kStageTieShare; }

// The stages with the longest and the shortest step; `longest` is nullptr where the steps tie within
// kStageTieShare of the longest (then no stage is named against another, not even with even stages).
struct StepExtremes {
  const PipelineStage* longest = nullptr;
  const PipelineStage* shortest = nullptr;
};
StepExtremes StepExtremesOf(const PipelineAnalysis& pipeline);

}  // namespace tuneprof

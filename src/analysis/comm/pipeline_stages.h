#pragma once
// Pipeline-parallel stages: with profiler_metadata.json's parallel_group_info naming the pp groups (or
// msprof-analyze's cluster output's stage rows, which the importer turns into such groups), or on PyTorch
// a process group of the rank's collectives whose description or name says pipeline (Megatron's
// "PIPELINE_MODEL_PARALLEL_GROUP", torchtitan's "mesh_pp"), a rank's stage is its position in its pp
// group's ranks. Per stage, the mean over its ranks in the input of, per step: computing, the p2p wait
// (communication.json's Wait Time of the rank's send / receive / batchSendRecv operations; on GPUs the
// time its send / recv kernels in the pp group are not hidden under compute), the bubble (time_breakdown.h:
// torch_npu's Bubble, else that p2p wait) and the step (Stage + Bubble; on GPUs the device span).
//
// The stage that computes most bounds the step: in a pipeline every micro-batch passes every stage, so
// the others wait for it, and their wait is bubble. Imbalance = (most - least computing) / most; a
// pipeline is uneven above kStageImbalanceThreshold. Where no rank has a computing time, the Stage time
// (step - bubble) stands for it.
//
// Each stage's wait is charged once, to what caused it: a stage that works less than the slowest waits
// min(its bubble, slowest work - its own) a step for the slowest stage's compute; the rest of its bubble,
// and the slowest stage's whole bubble, is the schedule's fill and drain, which no stage causes.
//
// What-if "stages balanced" (every stage works the mean stage's work): the step is the slowest stage's
// work plus its fill and drain, and the fill and drain scale with a micro-batch's time, so the step shrinks
// by (slowest - mean work) x (slowest work + its bubble) / slowest work, never by more than its own bubble
// on a waiting stage.
//
// Cost: O(ranks × (groups + communication ops) per rank).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

constexpr double kStageImbalanceThreshold = 0.1;

struct PipelineStage {
  int64_t stage = 0;           // position in the pp group
  std::vector<int64_t> ranks;  // input ranks at this stage
  double computing_ns_per_step = 0;
  double p2p_wait_ns_per_step = 0;  // 0 where neither communication.json nor the pp group's p2p kernels say
  double bubble_ns_per_step = 0;
  double step_ns_per_step = 0;   // Stage + Bubble
  double stage_ns_per_step = 0;  // step - bubble: torch_npu's Stage
  double work_ns_per_step = 0;   // computing, or Stage where no stage has a computing time
  // Its bubble charged once: to the slowest stage's compute (0 on the slowest stage), and to the
  // schedule's fill and drain (the rest).
  double wait_for_slowest_ns_per_step = 0;
  double fill_drain_ns_per_step = 0;
  // On the slowest stage: Σ over the other stages of their wait charged to it (each stage's mean rank).
  double holds_up_ns_per_step = 0;
};

struct PipelineAnalysis {
  std::string group_name;  // the role the stages come from ("pp", or the process group's description)
  int64_t pipeline_size = 0;          // ranks per pp group
  std::vector<PipelineStage> stages;  // stages with ranks in the input, in stage order
  int64_t slowest_stage = 0;          // the most work per step: it bounds the step
  int64_t fastest_stage = 0;
  double mean_work_ns_per_step = 0;  // over the stages
  double imbalance = 0;              // (slowest - fastest) / slowest work per step
  double bubble_share = 0;           // Σ bubble / Σ step over the ranks with a stage
  bool work_is_computing = true;     // false: work is the Stage time (no computing known)
  bool uneven = false;               // imbalance > kStageImbalanceThreshold
  // What-if "stages balanced": the step the slowest stage bounds would shrink by this, per step.
  double balanced_gain_ns_per_step = 0;
};

// The what-if "stages balanced" on one step: the slowest stage works `slowest_work_ns` and waits
// `slowest_bubble_ns` (its fill and drain), the stages work `mean_work_ns` on average. The step's gain
// were every stage to work the mean: (slowest - mean) x (slowest + its bubble) / slowest, 0 when the
// slowest stage does no work.
double BalancedStagesGainNs(double slowest_work_ns, double slowest_bubble_ns, double mean_work_ns);

// The part of a stage's bubble that waits for the slowest stage's compute: min(bubble, slowest work - own).
double WaitForSlowestNs(double own_work_ns, double own_bubble_ns, double slowest_work_ns);

// nullopt without pp groups, or when fewer than two stages have ranks with steps in the input.
std::optional<PipelineAnalysis> AnalyzePipelineStages(const std::vector<RankCommunication>& ranks);

// The time per step the rank's send / recv kernels in its pp group are not hidden under its compute (a
// GPU rank's pipeline wait: no profiler measures its bubble); 0 without a pp group from its collectives.
double ExposedPipelineP2pNsPerStep(const RankCommunication& rank);

// The stage of `rank`, nullptr when it has none.
const PipelineStage* StageOfRank(const PipelineAnalysis& pipeline, int64_t rank);

// The stage numbered `stage` (it must be one of the analysis's).
const PipelineStage& StageNumbered(const PipelineAnalysis& pipeline, int64_t stage);

}  // namespace tuneprof

// pipeline.stage_imbalance and pipeline.bubble: what a pipeline-parallel run's stages (pipeline_stages.h)
// lose to their bubbles, on the ranks that wait.
//
// stage_imbalance: the stages compute different amounts (imbalance above pipeline_imbalance_pct), so every
// stage but the slowest waits for it each micro-batch. Reported on each rank of a stage that waits, with
// the part of its bubble charged to the slowest stage's compute; gain: the what-if "stages balanced"
// (pipeline_stages.h), what the step loses were every stage to compute the mean stage's work, at most the
// stage's bubble. Moving layers shortens the slowest stage and lengthens the others, so the step gains
// less than the waiting stage's bubble.
// bubble: the stages are even, yet a rank's bubble is above pipeline_bubble_pct of its step: the
// schedule's fill and drain, (stages - 1) micro-batches' worth. Gain: half of it, what doubling the
// micro-batches per step or two virtual stages per rank (interleaved 1F1B) remove.
#include <fmt/format.h>

#include <algorithm>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "base/rank_ranges.h"

namespace tuneprof {
namespace {

// What sits on a stage besides its transformer layers: the embedding on the first stage, the LM head and
// the loss on the last; layers alone in between.
std::string_view HeavyPartOfStage(const PipelineAnalysis& p, int64_t stage) {
  if (stage == 0) return "the embedding (or layers)";
  if (!p.stages.empty() && stage == p.stages.back().stage) return "the LM head / loss (or layers)";
  return "layers";
}

void AddStageEvidence(const PipelineAnalysis& p, const PipelineStage& own, Finding* f) {
  const PipelineStage& slowest = StageNumbered(p, p.slowest_stage);
  f->AddNumber("own_stage", static_cast<double>(own.stage), "stage");
  f->AddNumber("own_computing_us", own.computing_ns_per_step / 1e3, "us");
  f->AddNumber("own_p2p_wait_us", own.p2p_wait_ns_per_step / 1e3, "us");
  f->AddNumber("bubble_us_per_step", own.bubble_ns_per_step / 1e3, "us");
  f->AddNumber("own_step_us", own.step_ns_per_step / 1e3, "us");
  f->AddNumber("slowest_stage", static_cast<double>(slowest.stage), "stage");
  f->AddNumber("slowest_stage_us", slowest.work_ns_per_step / 1e3, "us");
  f->AddNumber("mean_stage_us", p.mean_work_ns_per_step / 1e3, "us");
  // The quoted rank's stage's share, as the title gives it; the staged ranks' together under their own key.
  f->AddNumber("bubble_share_pct", own.step_ns_per_step > 0 ? 100 * own.bubble_ns_per_step / own.step_ns_per_step : 0,
               "%");
  f->AddNumber("staged_ranks_bubble_share_pct", 100 * p.bubble_share, "%");
  f->AddNumber("wait_for_slowest_stage_us", own.wait_for_slowest_ns_per_step / 1e3, "us");
  f->AddNumber("fill_drain_us", own.fill_drain_ns_per_step / 1e3, "us");
  f->AddNumber("balanced_gain_us", p.balanced_gain_ns_per_step / 1e3, "us");
}

const PipelineAnalysis* PipelineOf(const RankEvidence& rank) {
  if (rank.cross == nullptr || !rank.cross->pipeline) return nullptr;
  return &*rank.cross->pipeline;
}

std::string_view WorkWord(const PipelineAnalysis& p) { return p.work_is_computing ? "computes" : "works"; }

// Where the stage's wait sits in the rank's step: its own part where the profiler measured it (torch_npu),
// else (GPUs) in the exposed communication its p2p kernels hold, else unknown, in the idle time.
TimePart WaitPart(const RankEvidence& rank, const PipelineStage& own) {
  if (rank.split.part(TimePart::kPipelineBubble) > 0) return TimePart::kPipelineBubble;
  return own.bubble_ns_per_step > 0 ? TimePart::kCommunication : TimePart::kIdle;
}

}  // namespace

void RulePipelineStageImbalance(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const PipelineAnalysis* p = PipelineOf(rank);
  if (p == nullptr) return;
  const double threshold = config.Get(threshold::kPipelineImbalancePct);
  if (100 * p->imbalance <= threshold) return;
  const PipelineStage* own = StageOfRank(*p, rank.rank_id);
  const PipelineStage& slowest = StageNumbered(*p, p->slowest_stage);
  if (own == nullptr || own->stage == slowest.stage) return;
  const double short_ns = slowest.work_ns_per_step - own->work_ns_per_step;
  if (short_ns <= 0) return;
  const bool waits_known = own->bubble_ns_per_step > 0;
  Finding f = NewFinding("pipeline.stage_imbalance", rank, config);
  f.title = fmt::format(
      "pipeline stage {} {} {} a step, stage {} {}: stage {} waits {} a step for stage {}'s compute (bubble {}, "
      "{:.1f} % of its step)",
      slowest.stage, WorkWord(*p), FormatDuration(slowest.work_ns_per_step), own->stage,
      FormatDuration(own->work_ns_per_step), own->stage,
      FormatDuration(waits_known ? own->wait_for_slowest_ns_per_step : short_ns), slowest.stage,
      FormatDuration(own->bubble_ns_per_step),
      own->step_ns_per_step > 0 ? 100 * own->bubble_ns_per_step / own->step_ns_per_step : 0.0);
  f.value = 100 * p->imbalance;
  f.saves_from = WaitPart(rank, *own);
  const double balanced = p->balanced_gain_ns_per_step;
  // Balancing the stages shortens the step of every rank by the same amount: the gain is the step's, not
  // this stage's share of it.
  f.uncapped_gain_ns = balanced;
  AddStageEvidence(*p, *own, &f);
  f.strategy = fmt::format(
      "Rebalance the layers between the stages: stage {} computes {:.2f}x stage {}; move layers off stage {} (or "
      "give the stages that hold the embedding or the LM head / loss fewer transformer layers) until each stage "
      "computes about {} a step.",
      slowest.stage, own->work_ns_per_step > 0 ? slowest.work_ns_per_step / own->work_ns_per_step : 0.0, own->stage,
      slowest.stage, FormatDuration(p->mean_work_ns_per_step));
  f.apis = {// MindSpeed is Ascend's Megatron: GPU and CPU runs are told Megatron-LM's options only.
            std::string(ForPlatform(rank, "Megatron-LM --pipeline-model-parallel-layout (layers per stage)",
                                    "MindSpeed --num-layer-list (layers per stage)",
                                    "Megatron-LM --pipeline-model-parallel-layout (layers per stage)")),
            "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers",
            fmt::format("move {} off stage {} (ranks {})", HeavyPartOfStage(*p, slowest.stage), slowest.stage,
                        RankRanges(slowest.ranks))};
  out->push_back(std::move(f));
}

void RulePipelineBubble(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const PipelineAnalysis* p = PipelineOf(rank);
  if (p == nullptr || 100 * p->imbalance > config.Get(threshold::kPipelineImbalancePct)) return;
  const PipelineStage* own = StageOfRank(*p, rank.rank_id);
  if (own == nullptr || own->step_ns_per_step <= 0) return;
  const double share = 100 * own->bubble_ns_per_step / own->step_ns_per_step;
  const double threshold = config.Get(threshold::kPipelineBubblePct);
  if (share <= threshold) return;
  Finding f = NewFinding("pipeline.bubble", rank, config);
  f.title =
      fmt::format("pipeline stage {} waits {} of its {} step in bubbles ({:.1f} %) with the stages even", own->stage,
                  FormatDuration(own->bubble_ns_per_step), FormatDuration(own->step_ns_per_step), share);
  f.value = share;
  f.saves_from = WaitPart(rank, *own);
  f.uncapped_gain_ns = own->bubble_ns_per_step / 2;
  AddStageEvidence(*p, *own, &f);
  f.strategy = fmt::format(
      "The {} stages compute evenly; the bubble is the schedule's fill and drain ({} stages - 1 micro-batches' "
      "worth): run more micro-batches per step (a larger global batch or a smaller micro-batch), an interleaved "
      "1F1B schedule with virtual stages, or a zero-bubble / DualPipe schedule, and overlap the p2p transfers "
      "with compute.",
      p->stages.size(), p->pipeline_size);
  f.apis = {"more micro-batches: --global-batch-size / --micro-batch-size",
            "interleaved 1F1B: --num-layers-per-virtual-pipeline-stage", "zero-bubble / DualPipe schedules",
            "--overlap-p2p-comm"};
  out->push_back(std::move(f));
}

TUNEPROF_ADVISOR_RULE(
    RulePipelineStageImbalance,
    (RuleRow{.order = 190, .thresholds = "pipeline_imbalance_pct", .reads_other_ranks = true}),
    {.id = "pipeline.stage_imbalance",
     .category = FindingCategory::kCommunication,
     .metric = "(slowest - fastest) / slowest stage computing per step over the pipeline's stages",
     .unit = "% of the slowest stage",
     .threshold = threshold::kPipelineImbalancePct,
     .gain_model =
         "stages balanced: the step were every stage to compute the mean stage's work, (slowest - mean) x (slowest "
         "+ its bubble) / slowest per step (GPU hand-offs matched kernel by kernel: the run re-timed with every stage "
         "at the mean), the same for every rank"});

TUNEPROF_ADVISOR_RULE(
    RulePipelineBubble,
    (RuleRow{.order = 200, .thresholds = "pipeline_bubble_pct pipeline_imbalance_pct", .reads_other_ranks = true}),
    {.id = "pipeline.bubble",
     .category = FindingCategory::kCommunication,
     .metric = "this stage's bubble per step / its step",
     .unit = "% of the step",
     .threshold = threshold::kPipelineBubblePct,
     .gain_model = "half the bubble: what twice the micro-batches per step or two virtual stages per rank remove"});

}  // namespace tuneprof

// communication.pipeline_imbalance: pipeline-parallel stages with uneven work (pipeline_stages.h). The
// slowest stage bounds the step; the others wait for it in bubbles (receive waits, communication on their
// timelines). Gain: slowest - mean stage time per step, the step a balanced layer split would have; on a
// rank of the slowest stage it saves compute, elsewhere the wait.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

const PipelineStage* StageOfRank(const PipelineAnalysis& p, int64_t rank) {
  for (const PipelineStage& s : p.stages) {
    if (std::find(s.ranks.begin(), s.ranks.end(), rank) != s.ranks.end()) return &s;
  }
  return nullptr;
}

const PipelineStage& Stage(const PipelineAnalysis& p, int64_t stage) {
  for (const PipelineStage& s : p.stages) {
    if (s.stage == stage) return s;
  }
  return p.stages.front();
}

}  // namespace

void RulePipelineImbalance(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.cross == nullptr || !rank.cross->pipeline) return;
  const PipelineAnalysis& p = *rank.cross->pipeline;
  const double threshold = config.Get(threshold::kPipelineImbalancePct);
  if (100 * p.imbalance <= threshold) return;
  const PipelineStage* own = StageOfRank(p, rank.rank_id);
  if (own == nullptr) return;
  const PipelineStage& slowest = Stage(p, p.slowest_stage);
  const PipelineStage& fastest = Stage(p, p.fastest_stage);
  const double mean = std::accumulate(p.stages.begin(), p.stages.end(), 0.0,
                                      [](double sum, const PipelineStage& s) { return sum + s.stage_ns_per_step; }) /
                      static_cast<double>(p.stages.size());
  Finding f;
  f.id = "communication.pipeline_imbalance";
  f.category = FindingCategory::kCommunication;
  f.title =
      fmt::format("pipeline stage {} works {} a step, stage {} {}: the slowest stage bounds the step", slowest.stage,
                  FormatDuration(slowest.stage_ns_per_step), fastest.stage, FormatDuration(fastest.stage_ns_per_step));
  f.metric = "(slowest - fastest) / slowest Stage time per step over the pipeline's stages";
  f.value = 100 * p.imbalance;
  f.threshold = threshold;
  f.unit = "% of the slowest stage";
  f.saves_from = own->stage == p.slowest_stage ? TimePart::kComputeBound : TimePart::kCommunication;
  f.uncapped_gain_ns = slowest.stage_ns_per_step - mean;
  f.gain_model = "slowest stage - mean stage per step: the step with the layers split evenly";
  f.AddNumber("slowest_stage", static_cast<double>(slowest.stage), "stage");
  f.AddNumber("slowest_stage_us", slowest.stage_ns_per_step / 1e3, "us");
  f.AddNumber("fastest_stage", static_cast<double>(fastest.stage), "stage");
  f.AddNumber("fastest_stage_us", fastest.stage_ns_per_step / 1e3, "us");
  f.AddNumber("own_stage", static_cast<double>(own->stage), "stage");
  f.AddNumber("bubble_us_per_step", own->bubble_ns_per_step / 1e3, "us");
  f.AddNumber("bubble_share_pct", 100 * p.bubble_share, "%");
  f.strategy = fmt::format(
      "Move layers from stage {} to the faster stages (an uneven layer split: fewer layers on the stage that also "
      "holds the embedding or the loss head), and with the stages even, shrink the remaining bubbles with more "
      "micro-batches per step or an interleaved (virtual pipeline) schedule.",
      slowest.stage);
  f.apis = {std::string(
      ForPlatform(rank, "Megatron --decoder-first-pipeline-num-layers / --num-layers-per-virtual-pipeline-stage",
                  "MindSpeed --num-layer-list; --num-layers-per-virtual-pipeline-stage",
                  "an uneven layer split across the pipeline stages"))};
  out->push_back(std::move(f));
}

}  // namespace tuneprof

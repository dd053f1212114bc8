#include "analysis/comm/pipeline_stages.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tuneprof {
namespace {

// MindSpeed / Megatron name the pipeline group "pp" (and "pp_new_stream" for the same ranks on a second
// stream); "pipeline" is accepted as well.
bool IsPipelineRole(const std::string& name) { return name == "pp" || name == "pipeline"; }

// The rank's position in the first pp group that lists it; nullopt when none does.
std::optional<std::pair<int64_t, int64_t>> StageOf(const RankCommunication& rank, std::string* role) {
  for (const ParallelGroupInfo& group : rank.parallel_groups) {
    if (!IsPipelineRole(group.name)) continue;
    auto at = std::find(group.global_ranks.begin(), group.global_ranks.end(), rank.rank);
    if (at == group.global_ranks.end()) continue;
    *role = group.name;
    return std::make_pair(static_cast<int64_t>(at - group.global_ranks.begin()),
                          static_cast<int64_t>(group.global_ranks.size()));
  }
  return std::nullopt;
}

// Σ Wait Time of the rank's p2p operations (communication.json), ns.
double P2pWaitNs(const RankCommunication& rank) {
  double wait_ms = 0;
  for (const AscendCommOp& op : rank.ascend_ops) {
    const bool p2p = op.p2p || op.op_name.starts_with("hcom_receive") || op.op_name.starts_with("hcom_send") ||
                     op.op_name.starts_with("hcom_batchSendRecv");
    if (p2p && !op.total && SplitKnown(op) && op.wait_ms > 0) wait_ms += op.wait_ms;
  }
  return wait_ms * 1e6;
}

void AddRank(const RankCommunication& rank, PipelineStage* s) {
  const double steps = static_cast<double>(rank.steps);
  s->ranks.push_back(rank.rank);
  s->computing_ns_per_step += static_cast<double>(rank.computing_ns) / steps;
  s->p2p_wait_ns_per_step += P2pWaitNs(rank) / steps;
  s->bubble_ns_per_step += static_cast<double>(rank.bubble_ns) / steps;
  s->step_ns_per_step += static_cast<double>(rank.wall_ns) / steps;
}

void Average(PipelineStage* s) {
  const double n = static_cast<double>(s->ranks.size());
  s->computing_ns_per_step /= n;
  s->p2p_wait_ns_per_step /= n;
  s->bubble_ns_per_step /= n;
  s->step_ns_per_step /= n;
  s->stage_ns_per_step = s->step_ns_per_step - s->bubble_ns_per_step;
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
  const PipelineStage& slowest = *std::max_element(out->stages.begin(), out->stages.end(), by_work);
  const PipelineStage& fastest = *std::min_element(out->stages.begin(), out->stages.end(), by_work);
  out->slowest_stage = slowest.stage;
  out->fastest_stage = fastest.stage;
  if (slowest.work_ns_per_step > 0) {
    out->imbalance = (slowest.work_ns_per_step - fastest.work_ns_per_step) / slowest.work_ns_per_step;
  }
  out->uneven = out->imbalance > kStageImbalanceThreshold;
}

}  // namespace

std::optional<PipelineAnalysis> AnalyzePipelineStages(const std::vector<RankCommunication>& ranks) {
  PipelineAnalysis out;
  std::map<int64_t, PipelineStage> by_stage;
  double step_total = 0, bubble_total = 0;
  for (const RankCommunication& rank : ranks) {
    if (rank.steps == 0) continue;
    std::string role;
    const auto stage = StageOf(rank, &role);
    if (!stage) continue;
    out.group_name = role;
    out.pipeline_size = std::max(out.pipeline_size, stage->second);
    PipelineStage& s = by_stage[stage->first];
    s.stage = stage->first;
    AddRank(rank, &s);
    step_total += static_cast<double>(rank.wall_ns);
    bubble_total += static_cast<double>(rank.bubble_ns);
  }
  if (by_stage.size() < 2) return std::nullopt;
  for (auto& [index, s] : by_stage) {
    Average(&s);
    out.stages.push_back(s);
  }
  Compare(&out);
  if (step_total > 0) out.bubble_share = bubble_total / step_total;
  return out;
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

#include "analysis/comm/pipeline_stages.h"

#include <algorithm>
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

}  // namespace

std::optional<PipelineAnalysis> AnalyzePipelineStages(const std::vector<RankCommunication>& ranks) {
  PipelineAnalysis out;
  std::map<int64_t, PipelineStage> by_stage;
  double stage_total = 0, bubble_total = 0;
  for (const RankCommunication& rank : ranks) {
    if (rank.steps == 0) continue;
    std::string role;
    const auto stage = StageOf(rank, &role);
    if (!stage) continue;
    out.group_name = role;
    out.pipeline_size = std::max(out.pipeline_size, stage->second);
    PipelineStage& s = by_stage[stage->first];
    s.stage = stage->first;
    s.ranks.push_back(rank.rank);
    const double steps = static_cast<double>(rank.steps);
    s.stage_ns_per_step += static_cast<double>(rank.wall_ns) / steps;
    s.bubble_ns_per_step += static_cast<double>(rank.bubble_ns) / steps;
    stage_total += static_cast<double>(rank.wall_ns);
    bubble_total += static_cast<double>(rank.bubble_ns);
  }
  if (by_stage.size() < 2) return std::nullopt;
  for (auto& [index, s] : by_stage) {
    const double n = static_cast<double>(s.ranks.size());
    s.stage_ns_per_step /= n;
    s.bubble_ns_per_step /= n;
    out.stages.push_back(s);
  }
  auto by_time = [](const PipelineStage& a, const PipelineStage& b) {
    return a.stage_ns_per_step < b.stage_ns_per_step;
  };
  const PipelineStage& slowest = *std::max_element(out.stages.begin(), out.stages.end(), by_time);
  const PipelineStage& fastest = *std::min_element(out.stages.begin(), out.stages.end(), by_time);
  out.slowest_stage = slowest.stage;
  out.fastest_stage = fastest.stage;
  if (slowest.stage_ns_per_step > 0) {
    out.imbalance = (slowest.stage_ns_per_step - fastest.stage_ns_per_step) / slowest.stage_ns_per_step;
  }
  if (stage_total + bubble_total > 0) out.bubble_share = bubble_total / (stage_total + bubble_total);
  out.uneven = out.imbalance > kStageImbalanceThreshold;
  return out;
}

}  // namespace tuneprof

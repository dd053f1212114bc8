#include "analysis/advisor/stage_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

namespace tuneprof {
namespace {

bool IsComputationCheck(const Finding& f) {
  return f.id.view().starts_with("compute.") || f.id.view().starts_with("fusion.");
}

}  // namespace

std::vector<StageSlowestRank> SlowestRankOfEachStage(const PipelineAnalysis& pipeline,
                                                     const std::vector<const RankCommunication*>& comm) {
  std::unordered_map<int64_t, double> computing_per_step;
  for (const RankCommunication* rank : comm) {
    if (rank != nullptr && rank->steps > 0) {
      computing_per_step[rank->rank] = static_cast<double>(rank->computing_ns) / static_cast<double>(rank->steps);
    }
  }
  std::vector<StageSlowestRank> out;
  for (const PipelineStage& stage : pipeline.stages) {
    std::optional<StageSlowestRank> best;
    for (int64_t rank : stage.ranks) {
      auto it = computing_per_step.find(rank);
      if (it == computing_per_step.end() || (best && it->second <= best->computing_ns_per_step)) continue;
      best = StageSlowestRank{stage.stage, rank, it->second};
    }
    if (best) out.push_back(*best);
  }
  return out;
}

void NameStagesOfFindings(const PipelineAnalysis& pipeline, const std::vector<const RankCommunication*>& comm,
                          std::vector<Finding>* findings) {
  const std::vector<StageSlowestRank> slowest = SlowestRankOfEachStage(pipeline, comm);
  if (slowest.empty()) return;
  for (Finding& f : *findings) {
    if (!IsComputationCheck(f)) continue;
    // Every stage's outcome on its slowest rank, as msprof-analyze reports its per-stage checks: the stages
    // whose slowest rank the finding fired on, and those whose slowest rank it stayed silent on.
    std::string fired, silent;
    for (const StageSlowestRank& s : slowest) {
      const bool on = std::find(f.ranks.begin(), f.ranks.end(), s.rank) != f.ranks.end();
      std::string& list = on ? fired : silent;
      list += fmt::format("{}stage {}: rank {}", list.empty() ? "" : "; ", s.stage, s.rank);
    }
    if (!fired.empty()) f.AddText("pipeline_stage_slowest_ranks", fired);
    if (!silent.empty()) f.AddText("pipeline_stage_slowest_ranks_silent", silent);
    if (const PipelineStage* stage = StageOfRank(pipeline, f.evidence_rank)) {
      f.AddNumber("pipeline_stage", static_cast<double>(stage->stage), "stage");
    }
  }
}

}  // namespace tuneprof

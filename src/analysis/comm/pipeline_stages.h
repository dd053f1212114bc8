#pragma once
// Pipeline-parallel stages of a torch_npu run: with profiler_metadata.json's parallel_group_info naming
// the pp groups, a rank's stage is its position in its pp group's global ranks. Per stage, over its
// ranks in the input: the mean Stage time per step (the step without the time spent waiting to receive
// from the previous stage, as step_trace_time.csv defines it) and the mean Bubble per step (that wait).
// The slowest stage bounds the step: the others idle in bubbles while it computes. Imbalance =
// (slowest - fastest) / slowest; a pipeline is uneven above kStageImbalanceThreshold.
//
// Cost: O(ranks × groups per rank).
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
  double stage_ns_per_step = 0;
  double bubble_ns_per_step = 0;
};

struct PipelineAnalysis {
  std::string group_name;             // the parallel_group_info role the stages come from ("pp")
  int64_t pipeline_size = 0;          // ranks per pp group
  std::vector<PipelineStage> stages;  // stages with ranks in the input, in stage order
  int64_t slowest_stage = 0;
  int64_t fastest_stage = 0;
  double imbalance = 0;     // (slowest - fastest) / slowest stage time
  double bubble_share = 0;  // Σ bubble / Σ (stage + bubble) over the ranks with a stage
  bool uneven = false;      // imbalance > kStageImbalanceThreshold
};

// nullopt without pp groups, or when fewer than two stages have ranks with steps in the input.
std::optional<PipelineAnalysis> AnalyzePipelineStages(const std::vector<RankCommunication>& ranks);

}  // namespace tuneprof

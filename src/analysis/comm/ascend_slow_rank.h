#pragma once
// msprof's slow-rank rule on Ascend ranks: communication.json already splits each HCCL operation's wait
// from its transit, and the rank with the most wait decides between a slow rank and a slow link. When its
// Sync / (Sync + Transit) is above 0.2, the rank with the smallest wait ratio is the one the others wait
// for (no rank where the ratios lie within kWaitRatioNoise of each other); otherwise the link is slow. Where
// no rank waits at all there is neither: the rule's "most wait" would name the first rank of a tie at zero.
// On a pipeline stage's rank the send / receive waits are the bubble, which the stages' figures charge, so
// only its other operations count, and "a slow link" is the pipeline's bubble there.
//
// Cost: O(HCCL operations + ranks): each rank's waits are summed once, the staged ranks kept in a set.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/pipeline_stages.h"

namespace tuneprof {

struct AscendSlowRank {
  std::string verdict;  // "slow rank", "no clear slow rank", "slow link", "pipeline bubble", "no wait"; "" undecided
  std::optional<int64_t> max_wait_rank;  // the rank with the most wait, unless another ties it
  std::optional<int64_t> slow_rank;      // the rank the others wait for ("slow rank")
};

// Undecided where fewer than two ranks have communication.json's wait ratios. `pipeline`: the stages, where
// the run has them.
AscendSlowRank JudgeAscendSlowRank(const std::vector<RankCommunication>& ranks,
                                   const std::optional<PipelineAnalysis>& pipeline);

}  // namespace tuneprof

#pragma once
// The rank whose figures speak for a run of several ranks: the one that bounds the step, where the run says
// which. The slowest step does not: on a pipeline the last stage has the longest wall step because it waits
// longest, and where every rank waits at a collective each step ends with, every step is the same and the
// first rank of the tie is slowest by no measure.
//
//   - a pipeline (pipeline_stages.h) whose stages differ: a rank of the stage that computes most (the one of
//     its ranks in the input that computes most per step); with the stages even none (the bubble is the
//     schedule's, no stage bounds the step);
//   - else a straggler that stands out beyond the clocks' doubt, has its communication.straggler finding and
//     is not contradicted by the HCCL wait ratios: the others wait for it;
//   - else, where the steps of at least two ranks tie with the slowest (within kTiedStepShare), the tied rank
//     that computes most per step, where it computes more than the least of them by more than that share
//     of the step (ranks that also compute alike name none).
// nullopt otherwise: the slowest rank stands.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/advisor/finding.h"
#include "analysis/advisor/time_split.h"
#include "analysis/comm/comm_cross_rank.h"

namespace tuneprof {

// Ranks whose mean steps differ by less than this share of the slowest's tie.
constexpr double kTiedStepShare = 0.001;

struct BoundingRank {
  int64_t rank = 0;
  // Why, in words that follow the rank: "stage 1 computes most per step", "the last to arrive at the
  // collectives", "computes most per step of the tied ranks".
  std::string reason;
};

// One rank's step as the advisor splits it (time_split.h).
struct RankStep {
  int64_t rank = 0;
  const TimeSplit* split = nullptr;
};

// O(ranks x log ranks).
std::optional<BoundingRank> FindBoundingRank(const std::vector<RankStep>& ranks, const CrossRankCommunication* cross,
                                             const std::vector<Finding>& findings);

}  // namespace tuneprof

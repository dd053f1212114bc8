#include "analysis/comm/ascend_slow_rank.h"

#include <algorithm>
#include <unordered_set>

namespace tuneprof {
namespace {

// Wait ratios closer than this (absolute) do not single out a rank.
constexpr double kWaitRatioNoise = 0.05;

// A rank's HCCL wait as msprof's slow-rank rule weighs it. On a pipeline stage's rank the send / receive
// waits are the bubble, which the stage lines explain, so only its other operations count there.
struct AscendRuleWaits {
  double wait_ms = 0;
  std::optional<double> wait_ratio;
  std::optional<double> synchronization_ratio;
};

AscendRuleWaits AscendRuleWaitsOf(const RankCommunication& r, bool staged) {
  AscendRuleWaits out;
  double transit_ms = 0, synchronization_ms = 0;
  for (const AscendCommOp& op : r.ascend_ops) {
    if (op.total || !SplitKnown(op) || (staged && IsP2pOp(op))) continue;
    out.wait_ms += op.wait_ms;
    synchronization_ms += op.synchronization_ms;
    if (op.transit_ms > 0) transit_ms += op.transit_ms;
  }
  if (!staged || !r.ascend_wait_ratio) {
    out.wait_ratio = r.ascend_wait_ratio;
    out.synchronization_ratio = r.ascend_synchronization_ratio;
    return out;
  }
  if (out.wait_ms + transit_ms > 0) out.wait_ratio = out.wait_ms / (out.wait_ms + transit_ms);
  if (synchronization_ms + transit_ms > 0) {
    out.synchronization_ratio = synchronization_ms / (synchronization_ms + transit_ms);
  }
  return out;
}

// Waits within this share of the most wait tie with it.
constexpr double kWaitTieShare = 0.01;

// Each rank's waits, in the order of `ranks`; a rank at a pipeline stage leaves its send / receive out.
std::vector<AscendRuleWaits> AscendRuleWaitsOfRanks(const std::vector<RankCommunication>& ranks,
                                                    const std::optional<PipelineAnalysis>& pipeline) {
  std::unordered_set<int64_t> staged;
  if (pipeline) {
    for (const PipelineStage& stage : pipeline->stages) staged.insert(stage.ranks.begin(), stage.ranks.end());
  }
  std::vector<AscendRuleWaits> waits;
  waits.reserve(ranks.size());
  for (const RankCommunication& r : ranks) waits.push_back(AscendRuleWaitsOf(r, staged.contains(r.rank)));
  return waits;
}

bool TiesTheMostWait(const std::vector<AscendRuleWaits>& waits, size_t most, double most_ms) {
  for (size_t i = 0; i < waits.size(); ++i) {
    if (i != most && waits[i].wait_ratio && waits[i].wait_ms >= (1 - kWaitTieShare) * most_ms) return true;
  }
  return false;
}

}  // namespace

AscendSlowRank JudgeAscendSlowRank(const std::vector<RankCommunication>& ranks,
                                   const std::optional<PipelineAnalysis>& pipeline) {
  AscendSlowRank out;
  const std::vector<AscendRuleWaits> all_waits = AscendRuleWaitsOfRanks(ranks, pipeline);
  size_t max_wait = ranks.size();
  std::optional<double> max_wait_sync_ratio;
  double max_wait_ms = -1, min_ratio = 0, max_ratio = 0;
  int64_t min_ratio_rank = 0;
  int with_ops = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankCommunication& r = ranks[i];
    const AscendRuleWaits& waits = all_waits[i];
    if (!waits.wait_ratio) continue;
    if (waits.wait_ms > max_wait_ms) {
      max_wait_ms = waits.wait_ms;
      max_wait = i;
      max_wait_sync_ratio = waits.synchronization_ratio;
    }
    if (with_ops == 0 || *waits.wait_ratio < min_ratio) {
      min_ratio = *waits.wait_ratio;
      min_ratio_rank = r.rank;
    }
    max_ratio = std::max(max_ratio, *waits.wait_ratio);
    ++with_ops;
  }
  if (with_ops < 2) return out;  // one rank cannot be slower than the others
  if (max_wait_ms <= 0) {
    out.verdict = "no wait";
    return out;
  }
  // A rank whose wait ties the most (balanced pipeline stages wait alike) is not named by the order of the
  // input: "most wait on rank N" would be a tie-break.
  if (!TiesTheMostWait(all_waits, max_wait, max_wait_ms)) out.max_wait_rank = ranks[max_wait].rank;
  const bool staged = pipeline && !pipeline->stages.empty();
  if (max_wait_sync_ratio && *max_wait_sync_ratio > 0.2) {
    // Wait ratios a few points apart name no rank: the smallest is then chance, not a slow rank.
    if (max_ratio - min_ratio < kWaitRatioNoise) {
      out.verdict = "no clear slow rank";
    } else {
      out.verdict = "slow rank";
      out.slow_rank = min_ratio_rank;
    }
  } else {
    // On a pipeline the stages already charge the send / receive waits, and what the other operations wait
    // is short: "a slow link" would contradict the bubble the same ranks' figures show.
    out.verdict = staged ? "pipeline bubble" : "slow link";
  }
  return out;
}

}  // namespace tuneprof

#include "analysis/advisor/bounding_rank.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tuneprof {
namespace {

// Fused compute + communication kernels are computing the rank runs itself, counted once: in.
double ComputingPerStep(const TimeSplit& split) {
  return split.part(TimePart::kComputeBound) + split.part(TimePart::kMemoryBound) +
         split.part(TimePart::kUnclassified) + split.part(TimePart::kFusedComm);
}

// Of `ranks`, those `keep` accepts, the one that computes most per step (the first of equals); nullptr when
// none is kept.
template <typename Keep>
const RankStep* MostComputing(const std::vector<RankStep>& ranks, Keep keep) {
  const RankStep* most = nullptr;
  for (const RankStep& r : ranks) {
    if (!keep(r)) continue;
    if (most == nullptr || ComputingPerStep(*r.split) > ComputingPerStep(*most->split)) most = &r;
  }
  return most;
}

std::optional<BoundingRank> OfStage(const std::vector<RankStep>& ranks, const PipelineStage& stage,
                                    std::string reason) {
  const std::set<int64_t> members(stage.ranks.begin(), stage.ranks.end());
  const RankStep* most = MostComputing(ranks, [&](const RankStep& r) { return members.contains(r.rank); });
  if (most == nullptr) return std::nullopt;
  return BoundingRank{most->rank, std::move(reason)};
}

std::optional<BoundingRank> OfPipeline(const std::vector<RankStep>& ranks, const PipelineAnalysis& p) {
  return OfStage(ranks, StageNumbered(p, p.slowest_stage),
                 fmt::format("stage {} {} most per step", p.slowest_stage, p.work_is_computing ? "computes" : "works"));
}

bool StragglerNamed(const CrossRankCommunication& cross, const std::vector<Finding>& findings) {
  const bool finding =
      std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.id == "communication.straggler"; });
  return finding && cross.straggler_rank && cross.straggler_stands_out && !cross.straggler_within_clock_uncertainty &&
         !cross.slow_rank_rules_disagree();
}

std::optional<BoundingRank> OfTie(const std::vector<RankStep>& ranks) {
  double slowest = 0;
  for (const RankStep& r : ranks) slowest = std::max(slowest, r.split->step_ns);
  const auto tied = [&](const RankStep& r) { return r.split->step_ns >= slowest * (1 - kTiedStepShare); };
  const size_t count = static_cast<size_t>(std::count_if(ranks.begin(), ranks.end(), tied));
  if (count < 2) return std::nullopt;
  const RankStep* most = MostComputing(ranks, tied);
  double least = ComputingPerStep(*most->split);
  for (const RankStep& r : ranks) {
    if (tied(r)) least = std::min(least, ComputingPerStep(*r.split));
  }
  if (ComputingPerStep(*most->split) - least <= kTiedStepShare * slowest) return std::nullopt;
  return BoundingRank{most->rank, "computes most per step of the tied ranks"};
}

}  // namespace

std::optional<BoundingRank> FindBoundingRank(const std::vector<RankStep>& ranks, const CrossRankCommunication* cross,
                                             const std::vector<Finding>& findings) {
  if (ranks.size() < 2) return std::nullopt;
  if (cross != nullptr && cross->pipeline) {
    // Even stages: none bounds the step, the bubble is the schedule's.
    if (StagesEven(*cross->pipeline)) return std::nullopt;
    if (std::optional<BoundingRank> staged = OfPipeline(ranks, *cross->pipeline)) return staged;
  }
  if (cross != nullptr && StragglerNamed(*cross, findings)) {
    return BoundingRank{*cross->straggler_rank, "the last to arrive at the collectives"};
  }
  return OfTie(ranks);
}

}  // namespace tuneprof

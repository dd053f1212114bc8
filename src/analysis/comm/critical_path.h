#pragma once
// The cross-rank critical path of each step: what bounds the step across the ranks of a synchronizing
// group. A collective completes only after its last rank arrives, so per matched collective the path runs
// through the last arrival's lead-in (its work since the group's previous collective ended on it) and then
// the collective's own time after that arrival (the transfer every rank shares). A collective waits only for
// what it depends on: the previous collective of its own group, and a collective that ended on one of its
// ranks before its last arrival's lead-in began. The path of a step is the longest such chain, never longer
// than the step's span (its first lead-in to its last collective's end): collectives of disjoint groups that
// run at the same time (the pipelines of data-parallel replicas) are not chained. A send / recv matched over
// more than two ranks pairs kernels by their order in the group, not by peer, so it is left off the path.
//
// What-if "rank R on time": had each late rank arrived with the median of the others, every collective it
// held up would have started that much earlier; the explained windows (wait_causes.h) of the step are the
// time the step would lose, charged to the ranks that held it up.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/lead_in.h"
#include "analysis/comm/pipeline_stages.h"

namespace tuneprof {

// One matched collective as the path sees it (comm_cross_rank.h fills these).
struct CriticalLink {
  std::optional<int64_t> step;  // the ProfilerStep the last arrival launched it in
  std::string group;
  int64_t sequence = 0;
  CollectiveType type = CollectiveType::kOther;
  int64_t last_rank = 0;
  int64_t aligned_arrival_ns = 0;   // the last arrival, on the reference rank's clock
  int64_t lead_in_ns = 0;           // the last rank's lead-in (the sum of its causes)
  WaitCauseTimes lead_in_causes{};  // and by cause
  int64_t transfer_ns = 0;          // the last rank's collective duration
  int64_t held_up_ns = 0;           // explained window (0 when it was not late)
  std::vector<int64_t> ranks;       // the ranks matched at it, ascending (empty: unknown)
  int64_t group_size = kNoId;       // as the trace gives it (kNoId: unknown)
};

struct CriticalSegment {
  int64_t rank = kNoId;        // kNoId: every rank of the collective
  std::vector<int64_t> ranks;  // with kNoId, the two ranks of a send / recv (empty: every rank of its group)
  std::string what;            // "before allreduce (group 0 #3): compute 4.1, host_pause 1.2", "allreduce (group 0 #3)"
  int64_t ns = 0;
};

struct CriticalPathStep {
  std::optional<int64_t> step;
  std::vector<CriticalSegment> segments;
  int64_t path_ns = 0;               // Σ segments, at most the step's span
  std::optional<int64_t> late_rank;  // the rank that held the step's collectives up most
  int64_t on_time_gain_ns = 0;       // the step's explained windows of late_rank: the what-if's gain
  int64_t held_up_ns = 0;            // the step's explained windows of every late rank
};

// One entry per step that has matched collectives with lead-ins, in step order (steps unknown last).
std::vector<CriticalPathStep> CriticalPathPerStep(std::vector<CriticalLink> links);

// Pipeline runs (pipeline_stages.h), with or without matched collectives: every micro-batch passes every
// stage, so each step is bounded by the stage that computes most in it (stages within kStageTieShare of
// the most: the one with the longest step, as the run's verdict picks its slowest stage). Per step the path runs through
// that stage (the mean of its ranks): its computing, its own bubble (the schedule's fill and drain), the
// rest of its step (exposed communication, free). Every other stage's bubble is charged once: to the
// bounding stage's compute, min(its bubble, bounding work - its own), the rest to fill and drain.
// What-if "stages balanced" (BalancedStagesGainNs): every stage computing the mean stage's work that step.
struct PipelineSegment {
  int64_t stage = 0;
  std::string what;  // "computing", "bubble (fill / drain)", "rest of the step (exposed communication, free)"
  int64_t ns = 0;
};

struct PipelineStageWait {
  int64_t stage = 0;
  std::vector<int64_t> ranks;
  int64_t bubble_ns = 0;        // its wait this step, mean over its ranks
  int64_t for_bounding_ns = 0;  // charged to the bounding stage's compute
  int64_t fill_drain_ns = 0;    // the rest: the schedule's
};

struct PipelinePathStep {
  std::optional<int64_t> step;
  int64_t bounding_stage = 0;
  std::vector<int64_t> bounding_ranks;
  std::vector<PipelineSegment> segments;
  int64_t path_ns = 0;                   // the bounding stage's step
  std::vector<PipelineStageWait> waits;  // the other stages, in stage order
  int64_t balanced_gain_ns = 0;          // what-if "stages balanced", at most path_ns
};

// One entry per step that at least two stages' ranks have, in step order. Per step, a rank's bubble is its
// step table's where the rank has one (torch_npu); else the stage's mean bubble per step (GPU ranks: the pp
// group's exposed p2p time, known only over the whole run). O(ranks x steps x log steps).
std::vector<PipelinePathStep> PipelineCriticalPath(const PipelineAnalysis& pipeline,
                                                   const std::vector<RankBreakdown>& ranks);

}  // namespace tuneprof

#pragma once
// The cross-rank critical path of each step: what bounds the step across the ranks of a synchronizing
// group. A collective completes only after its last rank arrives, so per matched collective the path runs
// through the last arrival's lead-in (its work since the group's previous collective ended on it) and then
// the collective's own time after that arrival (the transfer every rank shares). A collective waits only for
// what it depends on: the previous collective of its own group, and a collective that ended on one of its
// ranks before its last arrival's lead-in began. The path of a step is the longest such chain, never longer
// than the step's span (its first lead-in to its last collective's end): collectives of disjoint groups that
// run at the same time (the pipelines of data-parallel replicas) are not chained. A send / recv matched over
// more than two ranks pairs kernels by their order in the group, not by peer, so it is left off the path; one
// matched with its peer's kernel (a named peer, a forward chain) is a hand-off between those two ranks.
//
// A group's first collective on its last rank has no measured lead-in. Its lead-in on the path runs from the
// end of the rank's previous collective in the step (any group), else from the rank's start of the step:
// the first micro-batch's compute before a pipeline's first hand-off, the last micro-batch's before the
// stage's first all-reduce. After the path's last collective, the rank of it whose step ends last works on
// to that end (the last stage's last micro-batch). A step's path is then as long as the step of the rank
// that ends it, and never longer: on a pipeline whose ranks share no collective each step, the ranks' steps
// are staggered, and a chain from an earlier rank's start is cut to that rank's step.
//
// What-if "rank R on time": had each late rank arrived with the median of the others, every collective it
// held up would have started that much earlier; the explained windows (wait_causes.h) of the step are the
// time the step would lose, charged to the ranks that held it up.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/clock_alignment.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/lead_in.h"
#include "analysis/comm/pipeline_stages.h"

namespace tuneprof {

// Where a link's lead-in starts.
enum class LeadInFrom : uint8_t {
  kGroupPrevious,  // the end of the group's previous collective on the rank: measured, split by cause
  kUnmeasured,     // the group's first collective on the rank: none measured (comm_cross_rank.h)
  kRankPrevious,   // the path's: the end of the rank's previous collective in the step, of any group
  kStepStart,      // the path's: the rank's start of the step
};

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
  LeadInFrom lead_in_from = LeadInFrom::kGroupPrevious;
  bool paired_by_peer = false;  // a send / recv matched with its peer's kernel: `ranks` is the pair
};

// A rank's step on the reference rank's clock (the clocks comm_cross_rank.h aligns): its device work's
// first start and last end.
struct StepWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
using RankStepWindows = std::map<std::pair<int64_t, int64_t>, StepWindow>;  // (rank, step) -> its window

// From the ranks' step tables and the clocks' corrections (a rank the clocks do not place is on the
// reference clock).
RankStepWindows AlignedStepWindows(const std::vector<RankBreakdown>& ranks, const ClockAlignment& clocks);

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
// `windows`: the ranks' steps (empty: unknown; a step's first lead-in and its last rank's work after the last
// collective are then left out, and the path is at most the span of the step's collectives).
std::vector<CriticalPathStep> CriticalPathPerStep(std::vector<CriticalLink> links, const RankStepWindows& windows = {});

// Pipeline runs (pipeline_stages.h), with or without matched collectives: every micro-batch passes every
// stage, so each step is bounded by the stage that computes most in it (stages within kStageTieShare of
// the most: the one with the longest step, as the run's verdict picks its slowest stage). Per step the path runs through
// that stage (the mean of its ranks): its computing, its own bubble (the schedule's fill and drain), the
// rest of its step (exposed communication, free); and where a rank's step is longer than that (on 1F1B
// stage 0 runs the first forward before the bounding stage starts and the last backward after it ends),
// the difference, charged to the schedule's fill and drain: a step's path is never shorter than its longest
// rank's step. Every other stage's bubble is charged once: to the bounding stage's compute, min(its bubble,
// bounding work - its own), the rest to fill and drain.
// What-if "stages balanced": the step's gain from the run re-timed with every stage computing the mean
// stage's work (pipeline_retime.h) where that was done, else BalancedStagesGainNs / ChainBalancedGainNs.
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
  int64_t path_ns = 0;                   // the step's longest rank's step (at least the bounding stage's)
  int64_t longest_rank = kNoId;          // that rank (the bounding stage's first where none is longer)
  std::vector<PipelineStageWait> waits;  // the other stages, in stage order
  int64_t balanced_gain_ns = 0;          // what-if "stages balanced", at most path_ns
};

// One entry per step that at least two stages' ranks have, in step order. Per step, a rank's bubble is its
// step table's where the rank has one (torch_npu); else the stage's mean bubble per step (GPU ranks: the pp
// group's exposed p2p time, known only over the whole run). O(ranks x steps x log steps).
std::vector<PipelinePathStep> PipelineCriticalPath(const PipelineAnalysis& pipeline,
                                                   const std::vector<RankBreakdown>& ranks);

}  // namespace tuneprof

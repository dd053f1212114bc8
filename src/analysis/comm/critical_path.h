#pragma once
// The cross-rank critical path of each step: what bounds the step across the ranks of a synchronizing
// group. A collective completes only after its last rank arrives, so per matched collective the path runs
// through the last arrival's lead-in (its work since the group's previous collective ended on it) and then
// the collective's own time after that arrival (the transfer every rank shares). Chained over a step's
// collectives in the order the last ranks arrived, these segments are the path.
//
// What-if "rank R on time": had each late rank arrived with the median of the others, every collective it
// held up would have started that much earlier; the explained windows (wait_causes.h) of the step are the
// time the step would lose, charged to the ranks that held it up.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/lead_in.h"

namespace tuneprof {

// One matched collective as the path sees it (comm_cross_rank.h fills these).
struct CriticalLink {
  std::optional<int64_t> step;  // the ProfilerStep the last arrival launched it in
  std::string group;
  int64_t sequence = 0;
  CollectiveType type = CollectiveType::kOther;
  int64_t last_rank = 0;
  int64_t aligned_arrival_ns = 0;  // the last arrival, on the reference rank's clock
  int64_t lead_in_ns = 0;          // the last rank's lead-in (the sum of its causes)
  WaitCauseTimes lead_in_causes{};  // and by cause
  int64_t transfer_ns = 0;          // the last rank's collective duration
  int64_t held_up_ns = 0;           // explained window (0 when it was not late)
};

struct CriticalSegment {
  int64_t rank = kNoId;  // kNoId: every rank of the collective
  std::string what;      // "before allreduce (group 0 #3): compute 4.1, host_pause 1.2", "allreduce (group 0 #3)"
  int64_t ns = 0;
};

struct CriticalPathStep {
  std::optional<int64_t> step;
  std::vector<CriticalSegment> segments;
  int64_t path_ns = 0;              // Σ segments
  std::optional<int64_t> late_rank;  // the rank that held the step's collectives up most
  int64_t on_time_gain_ns = 0;      // the step's explained windows of late_rank: the what-if's gain
  int64_t held_up_ns = 0;           // the step's explained windows of every late rank
};

// One entry per step that has matched collectives with lead-ins, in step order (steps unknown last).
std::vector<CriticalPathStep> CriticalPathPerStep(std::vector<CriticalLink> links);

}  // namespace tuneprof

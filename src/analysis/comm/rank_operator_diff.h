#pragma once
// The slowest rank against the fastest, operator by operator, as msprof-analyze's automatic comparison of
// a cluster's slow and fast ranks does: the rank with the most computing per step against the one with the
// least, each operator's time per step in the rank's lead-ins (what it ran between its collectives,
// lead_in.h: the longest operators of each), and the operators the slow rank spends most more time in.
// Cost: O(ranks + lead-in operators of the two ranks).
#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

struct RankOperatorDiff {
  int64_t slow_rank = 0;
  int64_t fast_rank = 0;
  double slow_computing_ns_per_step = 0;
  double fast_computing_ns_per_step = 0;
  // The operators the slow rank spends more time in per step, most first, at most kMaxOperatorDiffs.
  std::vector<LeadOperator> extra_per_step;
};

inline constexpr size_t kMaxOperatorDiffs = 5;

// nullopt with fewer than two ranks with steps and lead-ins, or ranks that compute alike.
std::optional<RankOperatorDiff> DiffSlowestAndFastestRank(const std::vector<RankCommunication>& ranks);

}  // namespace tuneprof

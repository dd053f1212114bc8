#pragma once
// The slowest rank against the fastest, as msprof-analyze's automatic comparison of a cluster's slow and
// fast ranks does (its kernel compare and API compare): the rank with the most computing per step against
// the one with the least.
//  - Lead-ins: each operator's time per step in what the rank ran between its collectives (lead_in.h: the
//    longest operators of each), and the operators the slow rank spends most more time in there.
//  - Whole steps: each device operator type's time per step over the ranks' whole steps (step_work.h), the
//    largest differences either way; what compute that runs before a step's first collective (no lead-in
//    reaches it) differs in.
//  - Host APIs: each host API's calls, time and self time per step on both ranks, the largest differences
//    in time either way (msprof-analyze's API compare).
// Cost: O(ranks + (lead-in operators + step work names) log of them for the two ranks).
#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

// One name's figures per step on the slow and the fast rank.
struct WorkDiff {
  SharedText name;
  double slow_calls = 0, fast_calls = 0;  // per step
  double slow_ns = 0, fast_ns = 0;        // per step
  double slow_self_ns = 0, fast_self_ns = 0;
  double delta_ns() const { return slow_ns - fast_ns; }
};

struct RankOperatorDiff {
  int64_t slow_rank = 0;
  int64_t fast_rank = 0;
  double slow_computing_ns_per_step = 0;
  double fast_computing_ns_per_step = 0;
  // The two ranks' computing differs by less than kMinComputingGap of the slower's: alike, within noise; the
  // lead-in extras are then left empty, while the whole-step and API differences are still listed.
  bool computes_alike = false;
  // The operators the slow rank spends more time in per step between its collectives, most first, at most
  // kMaxOperatorDiffs.
  std::vector<LeadOperator> extra_per_step;
  // Device operator types over whole steps and host APIs, largest |difference| first (ties by name), at most
  // kMaxOperatorDiffs each; names whose time per step differs by less than kMinDiffNs are left out.
  std::vector<WorkDiff> step_operators;
  std::vector<WorkDiff> host_apis;
};

inline constexpr size_t kMaxOperatorDiffs = 5;
inline constexpr double kMinComputingGap = 0.05;  // msprof-analyze's 5 % gap ratio
inline constexpr double kMinDiffNs = 1000;        // a microsecond per step: below it, the timelines' noise

// nullopt with fewer than two ranks with steps and either lead-ins or step work, or ranks that compute
// exactly alike.
std::optional<RankOperatorDiff> DiffSlowestAndFastestRank(const std::vector<RankCommunication>& ranks);

}  // namespace tuneprof

#pragma once
// Clock offsets between ranks, estimated from the collectives every rank of a group finishes together.
//
// Ranks on different hosts write timestamps from different clocks; Kineto aligns only a fixed epoch, so
// skew of a host's clock shifts every start of that rank. A synchronizing collective (all-reduce,
// all-gather, reduce-scatter, all-to-all, broadcast, reduce, barrier, or of unknown type; not send/recv)
// ends on all its ranks
// together, however late each arrived, so the difference of a matched collective's ends on two ranks is
// their clock offset plus noise. Per rank: offset = the median of those differences against the reference
// rank (the first rank with collectives), or against a rank already placed when the two share no group;
// uncertainty = the differences' interquartile range / 1.349 (a standard deviation for normal noise),
// plus the anchor's. An offset is applied (subtracted from the rank's starts before wait and
// straggler analysis) when at least kMinAlignmentSamples collectives support it, it is at least
// kMinAppliedOffsetNs, and it exceeds three times its uncertainty; smaller offsets are ranks on one clock,
// and what is left of them counts toward the uncertainty the straggler must exceed. Two collectives are
// enough: a profile of two steps with one all-reduce each is common, and two ends that agree on an offset of
// milliseconds are a clock, not noise (noise of a synchronizing collective's end is microseconds). Left
// unapplied there, the offset itself would count as doubt, the straggler would go unnamed and the arrivals
// would be compared on clocks known to be wrong, while the per-rank tests of durations (no clock in them)
// named the late rank.
//
// Cost: O(passes × matched arrivals), passes = the depth of the rank graph groups form (1 when the
// reference rank is in a group with every rank).
#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

constexpr uint64_t kMinAlignmentSamples = 2;      // one end alone gives no uncertainty to test the offset against
constexpr int64_t kMinAppliedOffsetNs = 100'000;  // 100 µs: below this, one host's clock or NTP at its best

struct RankClockOffset {
  int64_t rank = 0;
  std::optional<int64_t> offset_ns;  // this rank's clock minus the reference's; nullopt when unlinked
  int64_t uncertainty_ns = 0;        // of the offset (see above); 0 for the reference rank
  uint64_t collectives = 0;          // matched synchronizing collectives the estimate rests on
  bool applied = false;              // subtracted from the rank's starts
  // The error the rank's aligned starts may still carry: the uncertainty, plus the offset when it was
  // not applied.
  int64_t residual_ns() const { return uncertainty_ns + (applied || !offset_ns ? 0 : std::abs(*offset_ns)); }
  int64_t correction_ns() const { return applied ? *offset_ns : 0; }
};

struct ClockAlignment {
  std::optional<int64_t> reference_rank;  // nullopt when no rank has collectives
  std::vector<RankClockOffset> ranks;     // in the order of the input ranks
  std::optional<int64_t> spread_ns;       // max - min offset over the placed ranks; nullopt below two
  bool applied = false;                   // some rank's offset was applied
};

ClockAlignment EstimateClockOffsets(const std::vector<RankCommunication>& ranks);

}  // namespace tuneprof

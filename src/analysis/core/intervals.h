#pragma once
// Interval sets on one timeline (int64 ns): sorted, disjoint, non-empty half-open [start, end).
// Device time is always measured through these unions, never by summing durations, because kernels on
// different streams overlap.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace tuneprof {

struct Interval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t length() const { return end_ns - start_ns; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Sorted by start, pairwise disjoint and non-touching, every interval non-empty.
using IntervalSet = std::vector<Interval>;

// Sorts and merges `intervals` (overlapping or touching ones become one); empty ones are dropped.
IntervalSet UnionOf(std::vector<Interval> intervals);

int64_t TotalLength(const IntervalSet& set);

IntervalSet Unite(const IntervalSet& a, const IntervalSet& b);
IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b);
// The parts of `a` not covered by `b`.
IntervalSet Subtract(const IntervalSet& a, const IntervalSet& b);

// |a ∩ b| without building the intersection.
int64_t IntersectionLength(const IntervalSet& a, const IntervalSet& b);

// |set ∩ span| in O(log n + k) for the k intervals of `set` that touch `span`.
int64_t OverlapLength(const IntervalSet& set, Interval span);

// The running maximum of the ends of `ranges` (anything with an `end_ns`), in their order: entry k is the
// latest end among ranges 0..k. It never decreases, so a binary search over it skips every range that
// ends before a time, however the ranges overlap.
template <typename Range>
std::vector<int64_t> RunningMaxEnds(const std::vector<Range>& ranges) {
  std::vector<int64_t> max_ends;
  max_ends.reserve(ranges.size());
  int64_t max_end = std::numeric_limits<int64_t>::min();
  for (const Range& range : ranges) {
    max_end = std::max(max_end, range.end_ns);
    max_ends.push_back(max_end);
  }
  return max_ends;
}

}  // namespace tuneprof

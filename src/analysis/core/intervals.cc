#include "analysis/core/intervals.h"

#include <algorithm>
#include <iterator>

#include "analysis/core/mostly_sorted.h"

namespace tuneprof {

IntervalSet UnionOf(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end_ns <= i.start_ns; });
  // Many callers pass intervals already by start (Unite's merge, a track's events), or nearly so.
  // The union does not depend on the order of equal starts.
  SortMostlySorted(&intervals, [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  // Merged in place: the union is never longer than its input, and a second buffer as long as the input
  // would be freshly faulted for every large union.
  size_t size = 0;
  for (const Interval& i : intervals) {
    if (size > 0 && i.start_ns <= intervals[size - 1].end_ns) {
      intervals[size - 1].end_ns = std::max(intervals[size - 1].end_ns, i.end_ns);
    } else {
      intervals[size++] = i;
    }
  }
  // A union much shorter than its input is kept in room of its own size, as the sets live on.
  const bool shrink = size <= intervals.size() / 2;
  intervals.resize(size);
  if (shrink) intervals.shrink_to_fit();
  return intervals;
}

int64_t TotalLength(const IntervalSet& set) {
  int64_t total = 0;
  for (const Interval& i : set) total += i.length();
  return total;
}

IntervalSet Unite(const IntervalSet& a, const IntervalSet& b) {
  std::vector<Interval> both;
  both.reserve(a.size() + b.size());
  // Both inputs are sorted: a linear merge keeps this O(n) before UnionOf's (then trivial) sort.
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both),
             [](const Interval& x, const Interval& y) { return x.start_ns < y.start_ns; });
  return UnionOf(std::move(both));
}

IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t start = std::max(a[i].start_ns, b[j].start_ns);
    const int64_t end = std::min(a[i].end_ns, b[j].end_ns);
    if (end > start) out.push_back(Interval{start, end});
    (a[i].end_ns < b[j].end_ns) ? ++i : ++j;
  }
  return out;
}

IntervalSet Subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t j = 0;
  for (const Interval& piece : a) {
    int64_t cursor = piece.start_ns;
    while (j < b.size() && b[j].end_ns <= cursor) ++j;
    // b[k] for k >= j may cut this piece; later pieces start after it, so j only moves forward.
    for (size_t k = j; k < b.size() && b[k].start_ns < piece.end_ns; ++k) {
      if (b[k].start_ns > cursor) out.push_back(Interval{cursor, b[k].start_ns});
      cursor = std::max(cursor, b[k].end_ns);
    }
    if (cursor < piece.end_ns) out.push_back(Interval{cursor, piece.end_ns});
  }
  return out;
}

// Each interval of the smaller set is looked up in the larger one: O(small log large + overlaps), so that the
// many callers that measure one span against a whole trace's set do not walk it from its start each time.
int64_t IntersectionLength(const IntervalSet& a, const IntervalSet& b) {
  const IntervalSet& small = a.size() <= b.size() ? a : b;
  const IntervalSet& large = a.size() <= b.size() ? b : a;
  int64_t total = 0;
  for (const Interval& span : small) total += OverlapLength(large, span);
  return total;
}

int64_t OverlapLength(const IntervalSet& set, Interval span) {
  auto it = std::upper_bound(set.begin(), set.end(), span.start_ns,
                             [](int64_t t, const Interval& interval) { return t < interval.end_ns; });
  int64_t total = 0;
  for (; it != set.end() && it->start_ns < span.end_ns; ++it) {
    total += std::min(it->end_ns, span.end_ns) - std::max(it->start_ns, span.start_ns);
  }
  return total;
}

}  // namespace tuneprof

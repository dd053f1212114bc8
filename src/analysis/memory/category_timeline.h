#pragma once
// Memory by PyTorch's categories over time, from torch's `export_memory_timeline` file: the peak, what
// each category holds at it, each category's own largest, and what to try against the category that
// holds the peak.
//
// As torch's plot and HTA's memory timeline coalesce it: changes at one time form one point (the totals
// after all of them); what existed before profiling (time -1) counts from the first real time. The
// peak is the point with the largest total, the first one reaching it.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/memory/snapshot_analysis.h"
#include "model/memory_categories.h"

namespace tuneprof {

// Bytes per category. Sums wrap rather than overflow: a hostile trace's byte counts may be anything, and
// the categories still sum to the total they are taken from.
struct CategoryBytes {
  int64_t bytes[kMemoryCategories] = {};
  int64_t Total() const;
  void Add(MemoryCategory category, int64_t delta);
};

// a + b, wrapping (two's complement) instead of overflowing.
inline int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

struct CategoryTimelinePoint {
  int64_t ts_ns = 0;
  CategoryBytes held;
};

inline constexpr size_t kCategoryTimelinePoints = 200;

struct CategoryTimeline {
  std::string path;
  bool raw = true;
  int64_t changes = 0;
  int64_t points = 0;  // distinct times
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  int64_t preexisting_bytes = 0;  // held before profiling began
  int64_t peak_bytes = 0;
  int64_t peak_ns = 0;
  CategoryBytes at_peak;  // sums to peak_bytes
  CategoryBytes largest;  // each category's own largest, at whatever point
  CategoryBytes at_end;
  // At most kCategoryTimelinePoints, in order: the points cut into that many equal runs, each run
  // standing as its point with the largest total, so the peak is one of them.
  std::vector<CategoryTimelinePoint> timeline;
  std::vector<SnapshotStrategy> strategies;  // snapshot_strategies.h, on the categories at the peak
};

CategoryTimeline AnalyzeCategoryTimeline(const MemoryTimelineExport& file);

// The strategies for memory held by these categories at a peak of `peak` bytes (inputs, autograd detail
// and unknown get none, as temporaries).
std::vector<SnapshotStrategy> CategoryStrategies(const CategoryBytes& at_peak, int64_t peak);

}  // namespace tuneprof

#include "analysis/memory/category_timeline.h"

#include <algorithm>

#include "analysis/memory/snapshot_strategies.h"

namespace tuneprof {
namespace {

// The snapshot categories (kSnapshotCategoryNames) each profiler category's strategy is found under.
constexpr size_t kSnapshotIndexOf[kMemoryCategories] = {
    0,  // parameters
    2,  // optimizer_state
    5,  // inputs: unknown
    4,  // temporaries
    3,  // activations
    1,  // gradients
    5,  // autograd_detail: unknown
    5,  // unknown
};

// The first real time, where what existed before profiling is placed (0 where no time is real).
int64_t FirstRealTime(const std::vector<CategoryChange>& changes) {
  for (const CategoryChange& change : changes) {
    if (change.ts_ns != kPreexistingTime) return change.ts_ns;
  }
  return 0;
}

// Keeps one point per equal run of `points`: the run's largest total (the first of equals).
std::vector<CategoryTimelinePoint> DownSample(const std::vector<CategoryTimelinePoint>& points) {
  if (points.size() <= kCategoryTimelinePoints) return points;
  std::vector<CategoryTimelinePoint> out;
  out.reserve(kCategoryTimelinePoints);
  for (size_t run = 0; run < kCategoryTimelinePoints; ++run) {
    const size_t begin = run * points.size() / kCategoryTimelinePoints;
    const size_t end = (run + 1) * points.size() / kCategoryTimelinePoints;
    size_t best = begin;
    for (size_t i = begin + 1; i < end; ++i) {
      if (points[i].held.Total() > points[best].held.Total()) best = i;
    }
    out.push_back(points[best]);
  }
  return out;
}

}  // namespace

int64_t CategoryBytes::Total() const {
  int64_t total = 0;
  for (const int64_t b : bytes) total = WrappingAdd(total, b);
  return total;
}

void CategoryBytes::Add(MemoryCategory category, int64_t delta) {
  int64_t& held = bytes[static_cast<size_t>(category)];
  held = WrappingAdd(held, delta);
}

std::vector<SnapshotStrategy> CategoryStrategies(const CategoryBytes& at_peak, int64_t peak) {
  SnapshotDeviceMemory device;
  device.peak_allocated = static_cast<uint64_t>(std::max<int64_t>(peak, 0));
  for (size_t c = 0; c < kMemoryCategories; ++c) {
    device.categories[kSnapshotIndexOf[c]] += static_cast<uint64_t>(std::max<int64_t>(at_peak.bytes[c], 0));
  }
  return SnapshotStrategies(device, /*npu=*/false, /*expandable=*/false);
}

CategoryTimeline AnalyzeCategoryTimeline(const MemoryTimelineExport& file) {
  CategoryTimeline out;
  out.path = file.path;
  out.raw = file.raw;
  out.changes = static_cast<int64_t>(file.changes.size());
  const int64_t first_real = FirstRealTime(file.changes);
  std::vector<CategoryTimelinePoint> points;
  CategoryBytes held;
  // A new point wherever the file's time changes, as torch and HTA cut them: what existed before
  // profiling is a point of its own, at the first real time.
  int64_t point_time = 0;
  for (const CategoryChange& change : file.changes) {
    if (change.ts_ns == kPreexistingTime) out.preexisting_bytes = WrappingAdd(out.preexisting_bytes, change.bytes);
    held.Add(change.category, change.bytes);
    if (points.empty() || point_time != change.ts_ns) {
      point_time = change.ts_ns;
      points.push_back({change.ts_ns == kPreexistingTime ? first_real : change.ts_ns, held});
    }
    points.back().held = held;
  }
  out.points = static_cast<int64_t>(points.size());
  if (points.empty()) return out;
  out.first_ns = points.front().ts_ns;
  out.last_ns = points.back().ts_ns;
  out.at_end = points.back().held;
  const CategoryTimelinePoint* peak = &points.front();
  for (const CategoryTimelinePoint& point : points) {
    if (point.held.Total() > peak->held.Total()) peak = &point;
    for (size_t c = 0; c < kMemoryCategories; ++c) {
      out.largest.bytes[c] = std::max(out.largest.bytes[c], point.held.bytes[c]);
    }
  }
  out.peak_bytes = peak->held.Total();
  out.peak_ns = peak->ts_ns;
  out.at_peak = peak->held;
  out.timeline = DownSample(points);
  out.strategies = CategoryStrategies(out.at_peak, out.peak_bytes);
  return out;
}

}  // namespace tuneprof

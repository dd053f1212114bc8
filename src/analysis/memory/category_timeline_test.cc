#include "analysis/memory/category_timeline.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

MemoryTimelineExport Changes(std::vector<CategoryChange> changes) {
  MemoryTimelineExport file;
  file.path = "t.json";
  file.changes = std::move(changes);
  return file;
}

TEST(CategoryTimeline, PeakIsTheLargestPointAfterAllItsChanges) {
  const CategoryTimeline t = AnalyzeCategoryTimeline(Changes({
      {kPreexistingTime, 100 * kMiB, MemoryCategory::kParameters},
      {1000, 300 * kMiB, MemoryCategory::kActivations},
      {2000, 50 * kMiB, MemoryCategory::kTemporaries},  // both changes at 2000 form one point
      {2000, -50 * kMiB, MemoryCategory::kTemporaries},
      {3000, -300 * kMiB, MemoryCategory::kActivations},
      {3000, 100 * kMiB, MemoryCategory::kGradients},
  }));
  EXPECT_EQ(t.points, 4);
  EXPECT_EQ(t.first_ns, 1000);  // what existed before profiling counts from the first real time
  EXPECT_EQ(t.preexisting_bytes, 100 * kMiB);
  EXPECT_EQ(t.peak_bytes, 400 * kMiB);
  EXPECT_EQ(t.peak_ns, 1000);
  EXPECT_EQ(t.at_peak.bytes[static_cast<size_t>(MemoryCategory::kActivations)], 300 * kMiB);
  EXPECT_EQ(t.at_peak.Total(), t.peak_bytes);
  EXPECT_EQ(t.largest.bytes[static_cast<size_t>(MemoryCategory::kTemporaries)], 0);
  EXPECT_EQ(t.at_end.Total(), 200 * kMiB);
  ASSERT_FALSE(t.strategies.empty());
  EXPECT_EQ(t.strategies.front().category, "activations");
  EXPECT_TRUE(t.strategies.front().holds_peak);
}

TEST(CategoryTimeline, DownSamplesKeepingThePeak) {
  std::vector<CategoryChange> changes;
  for (int64_t i = 0; i < 1000; ++i) changes.push_back({i, i == 617 ? 5000 : 1, MemoryCategory::kActivations});
  const CategoryTimeline t = AnalyzeCategoryTimeline(Changes(changes));
  EXPECT_EQ(t.timeline.size(), kCategoryTimelinePoints);
  EXPECT_EQ(t.peak_ns, 999);
  bool kept = false;
  for (const CategoryTimelinePoint& p : t.timeline) kept |= p.ts_ns == t.peak_ns && p.held.Total() == t.peak_bytes;
  EXPECT_TRUE(kept);
}

TEST(CategoryTimeline, EmptyFileHoldsNothing) {
  const CategoryTimeline t = AnalyzeCategoryTimeline(Changes({}));
  EXPECT_EQ(t.points, 0);
  EXPECT_EQ(t.peak_bytes, 0);
  EXPECT_TRUE(t.strategies.empty());
}

}  // namespace
}  // namespace tuneprof

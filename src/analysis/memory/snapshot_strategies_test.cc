#include "analysis/memory/snapshot_strategies.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A device whose peak of `peak` MiB holds `held` MiB in `category` and the rest before the trace.
SnapshotDeviceMemory PeakHeldBy(size_t category, uint64_t held, uint64_t peak = 1000) {
  SnapshotDeviceMemory d;
  d.peak_allocated = peak * kMiB;
  d.reserved_at_dump = peak * kMiB;
  d.categories[category] = held * kMiB;
  d.categories[kSnapshotCategories - 1] = (peak - held) * kMiB;
  return d;
}

SnapshotStrategy Only(const std::vector<SnapshotStrategy>& strategies) {
  EXPECT_EQ(strategies.size(), 1u);
  return strategies.empty() ? SnapshotStrategy{} : strategies.front();
}

// A peak held by one category (an index into SnapshotDeviceMemory::categories) and the one strategy it asks
// for: the category's name, what the strategy saves, and what its advice names.
struct HeldByCategoryCase {
  size_t category;
  uint64_t held_mib;
  std::string_view name;
  uint64_t saving_mib;
  std::vector<std::string_view> why_names;
};

TEST(SnapshotStrategies, EachCategoryHoldingThePeakAsksForItsOwnRemedy) {
  const HeldByCategoryCase cases[] = {
      {3, 400, "activations", 200, {"torch.utils.checkpoint", "40 % of the peak"}},
      {2, 400, "optimizer_state", 300, {"ZeRO-1/2", "--use-distributed-optimizer"}},
      {0, 600, "parameters", 300, {"FSDP, ZeRO-3"}},
      {1, 200, "gradients", 100, {"--gradient-accumulation-fusion", "bucket_cap_mb"}},
  };
  for (const HeldByCategoryCase& c : cases) {
    SCOPED_TRACE(c.name);
    const SnapshotStrategy s = Only(SnapshotStrategies(PeakHeldBy(c.category, c.held_mib), false, false));
    EXPECT_EQ(s.category, c.name);
    EXPECT_TRUE(s.holds_peak);
    EXPECT_EQ(s.bytes, c.held_mib * kMiB);
    EXPECT_EQ(s.saving, c.saving_mib * kMiB);
    for (const std::string_view name : c.why_names) EXPECT_NE(s.why.find(name), std::string::npos) << name;
  }
}

TEST(SnapshotStrategies, SmallCategoriesTemporariesAndUnknownGetNone) {
  EXPECT_TRUE(SnapshotStrategies(PeakHeldBy(3, 99), false, false).empty());
  EXPECT_TRUE(SnapshotStrategies(PeakHeldBy(4, 900), false, false).empty());
  EXPECT_TRUE(SnapshotStrategies(PeakHeldBy(5, 900), false, false).empty());
  EXPECT_TRUE(SnapshotStrategies(SnapshotDeviceMemory{}, false, false).empty());
}

TEST(SnapshotStrategies, TheLargestCategoryHoldsThePeakAndComesFirst) {
  SnapshotDeviceMemory d = PeakHeldBy(2, 300);
  d.categories[3] = 500 * kMiB;
  d.categories[5] = 200 * kMiB;
  const auto strategies = SnapshotStrategies(d, false, false);
  ASSERT_EQ(strategies.size(), 2u);
  EXPECT_EQ(strategies[0].category, "activations");
  EXPECT_TRUE(strategies[0].holds_peak);
  EXPECT_EQ(strategies[1].category, "optimizer_state");
  EXPECT_FALSE(strategies[1].holds_peak);
}

SnapshotDeviceMemory Fragmented() {
  SnapshotDeviceMemory d;
  d.reserved_at_dump = 1000 * kMiB;
  d.inactive_split_bytes = 200 * kMiB;
  d.largest_free_block = 20 * kMiB;
  d.largest_request = 40 * kMiB;
  return d;
}

TEST(SnapshotStrategies, FragmentationAsksForExpandableSegments) {
  const SnapshotStrategy s = Only(SnapshotStrategies(Fragmented(), false, false));
  EXPECT_EQ(s.category, "fragmentation");
  EXPECT_EQ(s.action, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  EXPECT_EQ(s.bytes, 200 * kMiB);
  EXPECT_NE(s.why.find("garbage_collection_threshold"), std::string::npos);
  EXPECT_NE(s.why.find("no free block serves the largest request"), std::string::npos);
}

TEST(SnapshotStrategies, FragmentationOnAscendNamesTheNpuVariable) {
  EXPECT_EQ(Only(SnapshotStrategies(Fragmented(), true, false)).action,
            "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True");
}

TEST(SnapshotStrategies, FragmentationWithExpandableSegmentsOnAsksForGarbageCollection) {
  EXPECT_EQ(Only(SnapshotStrategies(Fragmented(), false, true)).action,
            "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.8");
}

TEST(SnapshotStrategies, LittleSplitFreeMemoryIsNoFragmentation) {
  SnapshotDeviceMemory d = Fragmented();
  d.inactive_split_bytes = 49 * kMiB;
  EXPECT_TRUE(SnapshotStrategies(d, false, false).empty());
}

TEST(SnapshotStrategies, GrowingLeaksNameTheirFrames) {
  SnapshotDeviceMemory d;
  d.leaks.push_back({{FrameKind::kPython, "train_step", "/home/u/train.py", 12}, 30 * kMiB, 3, 3, true});
  d.leaks.push_back({{FrameKind::kPython, "step", "/home/u/optim.py", 7}, 900 * kMiB, 10, 1, false});
  const SnapshotStrategy s = Only(SnapshotStrategies(d, false, false));
  EXPECT_EQ(s.category, "leak_suspects");
  EXPECT_EQ(s.bytes, 30 * kMiB);
  EXPECT_EQ(s.saving, 30 * kMiB);
  EXPECT_NE(s.why.find("train_step (/home/u/train.py:12) (3 iterations)"), std::string::npos);
  EXPECT_EQ(s.why.find("optim.py"), std::string::npos);
}

}  // namespace
}  // namespace tuneprof

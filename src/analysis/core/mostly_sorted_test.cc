#include "analysis/core/mostly_sorted.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace tuneprof {
namespace {

using Pair = std::pair<int64_t, uint32_t>;  // a key with repeats, made total by an index

std::vector<Pair> NearlySorted(std::mt19937* random, size_t n, unsigned moved_per_mille) {
  std::vector<Pair> out;
  int64_t key = 0;
  for (uint32_t i = 0; i < n; ++i) {
    key += static_cast<int64_t>((*random)() % 3);
    out.emplace_back(key, i);
  }
  for (size_t i = 0; i < n; ++i) {
    if ((*random)() % 1000 < moved_per_mille) std::swap(out[i], out[(*random)() % n]);
  }
  return out;
}

// Under a total order every way of sorting gives one result: a few entries out of place are merged back, many
// run out of levels into the plain sort, and an early entry greater than all others puts every later one
// out of place.
TEST(MostlySortedTest, GivesWhatStdSortGivesUnderATotalOrder) {
  std::mt19937 random(11);
  for (int round = 0; round < 400; ++round) {
    std::vector<Pair> items = NearlySorted(&random, random() % 700, std::array<unsigned, 4>{0, 4, 50, 400}[round % 4]);
    if (round % 7 == 0 && !items.empty()) items.front().first = INT64_MAX;
    std::vector<Pair> expected = items;
    std::sort(expected.begin(), expected.end());
    SortMostlySorted(&items, std::less<Pair>{});
    ASSERT_EQ(items, expected) << "round " << round;
  }
}

// Device work as profilers list it: one stream's kernels after another's, each stream nearly by start.
TEST(MostlySortedTest, StreamsOneAfterAnotherEachNearlySorted) {
  std::mt19937 random(3);
  for (int round = 0; round < 100; ++round) {
    std::vector<Pair> items;
    const size_t streams = 1 + random() % 12;
    for (size_t s = 0; s < streams; ++s) {
      for (Pair p : NearlySorted(&random, random() % 300, 10)) {
        items.emplace_back(p.first, static_cast<uint32_t>(items.size()));
      }
    }
    std::vector<Pair> expected = items;
    std::sort(expected.begin(), expected.end());
    SortMostlySorted(&items, std::less<Pair>{});
    ASSERT_EQ(items, expected) << "round " << round;
  }
}

TEST(MostlySortedTest, EmptyAndSingleAndReversed) {
  std::vector<int> empty;
  SortMostlySorted(&empty, std::less<int>{});
  EXPECT_TRUE(empty.empty());
  std::vector<int> one = {5};
  SortMostlySorted(&one, std::less<int>{});
  EXPECT_EQ(one, std::vector<int>{5});
  std::vector<int> reversed = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  SortMostlySorted(&reversed, std::less<int>{});
  EXPECT_EQ(reversed, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  std::vector<int> one_late = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0};
  SortMostlySorted(&one_late, std::less<int>{});
  EXPECT_EQ(one_late, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
}

}  // namespace
}  // namespace tuneprof

// The sequence miner on symbol runs with known repeats: exact windows, non-overlapping occurrences,
// nothing across a break, and a long input mined in bounded time.
#include "analysis/advisor/sequence_mining.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

namespace tuneprof {
namespace {

using Found = std::map<std::vector<uint32_t>, std::vector<uint32_t>>;  // window -> starts

Found Mine(const std::vector<uint32_t>& symbols, size_t min_occurrences = 5) {
  Found found;
  SequenceMiningLimits limits;
  limits.min_occurrences = min_occurrences;
  ForEachRepeatedWindow(symbols, limits, [&](size_t length, std::span<const uint32_t> starts) {
    const std::vector<uint32_t> window(symbols.begin() + starts[0], symbols.begin() + starts[0] + length);
    EXPECT_EQ(found.count(window), 0u) << "a window reported twice";
    found[window].assign(starts.begin(), starts.end());
  });
  return found;
}

TEST(SequenceMining, FindsARepeatedBlockAndItsPieces) {
  std::vector<uint32_t> symbols;
  for (int i = 0; i < 6; ++i) symbols.insert(symbols.end(), {1, 2, 3, 9u + i});  // 9+i never repeats
  const Found found = Mine(symbols);
  ASSERT_TRUE(found.count({1, 2, 3}));
  EXPECT_EQ(found.at({1, 2, 3}), (std::vector<uint32_t>{0, 4, 8, 12, 16, 20}));
  EXPECT_TRUE(found.count({1, 2}));
  EXPECT_TRUE(found.count({2, 3}));
  EXPECT_EQ(found.size(), 3u);  // nothing with the unique symbols, no single symbols
}

TEST(SequenceMining, OccurrencesDoNotOverlap) {
  const std::vector<uint32_t> symbols(11, 4);  // 4 4 4 ...: "4 4" fits 5 times apart, "4 4 4" 3 times
  const Found found = Mine(symbols);
  ASSERT_TRUE(found.count({4, 4}));
  EXPECT_EQ(found.at({4, 4}), (std::vector<uint32_t>{0, 2, 4, 6, 8}));
  EXPECT_FALSE(found.count({4, 4, 4}));
}

TEST(SequenceMining, BelowTheCountOrAcrossABreakIsNothing) {
  std::vector<uint32_t> symbols;
  for (int i = 0; i < 4; ++i) symbols.insert(symbols.end(), {1, 2});
  EXPECT_TRUE(Mine(symbols).empty());
  symbols.clear();
  for (int i = 0; i < 6; ++i) symbols.insert(symbols.end(), {1, kSequenceBreak, 2, kSequenceBreak});
  EXPECT_TRUE(Mine(symbols).empty());
}

TEST(SequenceMining, StopsAtTheMaximumLength) {
  std::vector<uint32_t> symbols;
  for (int i = 0; i < 5; ++i) {
    for (uint32_t s = 0; s < 12; ++s) symbols.push_back(s);
    symbols.push_back(100 + i);
  }
  size_t longest = 0;
  SequenceMiningLimits limits;
  ForEachRepeatedWindow(symbols, limits,
                        [&](size_t length, std::span<const uint32_t>) { longest = std::max(longest, length); });
  EXPECT_EQ(longest, limits.max_length);
}

TEST(SequenceMining, ALongPeriodicRun) {
  std::vector<uint32_t> symbols;
  for (uint32_t i = 0; i < 200'000; ++i) symbols.push_back(i % 7);
  size_t windows = 0;
  ForEachRepeatedWindow(symbols, SequenceMiningLimits{}, [&](size_t, std::span<const uint32_t> starts) {
    ++windows;
    EXPECT_GE(starts.size(), 5u);
  });
  EXPECT_EQ(windows, 9u * 7u);  // every rotation at every length 2..10
}

// Small symbols are sorted by counting, large ones by comparison: the same run spelled either way (an
// order-keeping relabelling) gives the same windows, in the same order.
TEST(SequenceMining, CountingAndComparisonSortsAgree) {
  std::vector<uint32_t> small;
  uint32_t state = 12345;
  for (int i = 0; i < 5'000; ++i) {
    state = state * 1103515245u + 12345u;
    small.push_back((state >> 16) % 4 == 0 ? kSequenceBreak : (state >> 16) % 6);
  }
  std::vector<uint32_t> large;
  for (const uint32_t s : small) large.push_back(s == kSequenceBreak ? s : 0x40000000u + s * 1'000'003u);
  using Calls = std::vector<std::pair<size_t, std::vector<uint32_t>>>;
  const auto mine = [](const std::vector<uint32_t>& symbols) {
    Calls calls;
    ForEachRepeatedWindow(symbols, SequenceMiningLimits{}, [&](size_t length, std::span<const uint32_t> starts) {
      calls.emplace_back(length, std::vector<uint32_t>(starts.begin(), starts.end()));
    });
    return calls;
  };
  const Calls from_small = mine(small);
  EXPECT_GT(from_small.size(), 10u);
  EXPECT_EQ(from_small, mine(large));
}

}  // namespace
}  // namespace tuneprof

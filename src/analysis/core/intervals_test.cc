#include "analysis/core/intervals.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

namespace tuneprof {
namespace {

TEST(IntervalsTest, UnionMergesOverlappingAndTouchingAndDropsEmpty) {
  const IntervalSet u = UnionOf({{30, 40}, {0, 10}, {5, 12}, {12, 15}, {20, 20}, {25, 24}});
  EXPECT_EQ(u, (IntervalSet{{0, 15}, {30, 40}}));
  EXPECT_EQ(TotalLength(u), 25);
}

TEST(IntervalsTest, UnionKeepsContainedIntervalsInside) {
  EXPECT_EQ(UnionOf({{0, 100}, {10, 20}, {30, 40}}), (IntervalSet{{0, 100}}));
}

TEST(IntervalsTest, IntersectSubtractUnite) {
  const IntervalSet a = {{0, 10}, {20, 30}};
  const IntervalSet b = {{5, 25}, {28, 40}};
  EXPECT_EQ(Intersect(a, b), (IntervalSet{{5, 10}, {20, 25}, {28, 30}}));
  EXPECT_EQ(IntersectionLength(a, b), 12);
  EXPECT_EQ(Subtract(a, b), (IntervalSet{{0, 5}, {25, 28}}));
  EXPECT_EQ(Subtract(b, a), (IntervalSet{{10, 20}, {30, 40}}));
  EXPECT_EQ(Unite(a, b), (IntervalSet{{0, 40}}));
}

TEST(IntervalsTest, SubtractWithOneCutterSpanningSeveralPieces) {
  EXPECT_EQ(Subtract({{0, 10}, {12, 14}, {16, 30}}, {{5, 20}}), (IntervalSet{{0, 5}, {20, 30}}));
  EXPECT_EQ(Subtract({{0, 10}}, {}), (IntervalSet{{0, 10}}));
  EXPECT_EQ(Subtract({}, {{0, 10}}), IntervalSet{});
}

TEST(IntervalsTest, OverlapLengthWithOneSpan) {
  const IntervalSet set = {{0, 10}, {20, 30}, {40, 50}};
  EXPECT_EQ(OverlapLength(set, {5, 45}), 5 + 10 + 5);
  EXPECT_EQ(OverlapLength(set, {10, 20}), 0);
  EXPECT_EQ(OverlapLength(set, {60, 70}), 0);
  EXPECT_EQ(OverlapLength({}, {0, 10}), 0);
}

// Every operation against a brute-force count of covered unit slots on a small timeline.
TEST(IntervalsTest, AgreesWithSlotCountingOnRandomSets) {
  constexpr int kSpan = 200;
  std::mt19937 random(42);
  auto random_intervals = [&] {
    std::vector<Interval> out;
    const int n = static_cast<int>(random() % 12);
    for (int i = 0; i < n; ++i) {
      const int64_t start = random() % kSpan;
      out.push_back(Interval{start, start + static_cast<int64_t>(random() % 40)});
    }
    return out;
  };
  auto slots = [](const std::vector<Interval>& intervals) {
    std::vector<bool> covered(kSpan + 40, false);
    for (const Interval& i : intervals) {
      for (int64_t t = i.start_ns; t < i.end_ns; ++t) covered[t] = true;
    }
    return covered;
  };
  auto count = [](const std::vector<bool>& covered, auto keep) {
    int64_t n = 0;
    for (size_t t = 0; t < covered.size(); ++t) n += keep(t) ? 1 : 0;
    return n;
  };
  for (int round = 0; round < 500; ++round) {
    const std::vector<Interval> raw_a = random_intervals(), raw_b = random_intervals();
    const IntervalSet a = UnionOf(raw_a), b = UnionOf(raw_b);
    const std::vector<bool> in_a = slots(raw_a), in_b = slots(raw_b);
    for (size_t k = 1; k < a.size(); ++k) ASSERT_LT(a[k - 1].end_ns, a[k].start_ns);
    ASSERT_EQ(TotalLength(a), count(in_a, [&](size_t t) { return in_a[t]; }));
    ASSERT_EQ(IntersectionLength(a, b), count(in_a, [&](size_t t) { return in_a[t] && in_b[t]; }));
    ASSERT_EQ(TotalLength(Intersect(a, b)), IntersectionLength(a, b));
    ASSERT_EQ(TotalLength(Subtract(a, b)), count(in_a, [&](size_t t) { return in_a[t] && !in_b[t]; }));
    ASSERT_EQ(TotalLength(Unite(a, b)), count(in_a, [&](size_t t) { return in_a[t] || in_b[t]; }));
    for (const Interval& span : raw_b) ASSERT_EQ(OverlapLength(a, span), IntersectionLength(a, UnionOf({span})));
  }
}

// The union of a sorted copy, merged the plain way: what UnionOf must give whatever order it is handed.
IntervalSet ReferenceUnion(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  IntervalSet out;
  for (const Interval& i : intervals) {
    if (i.end_ns <= i.start_ns) continue;
    if (!out.empty() && i.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// Inputs in order but for a share of entries moved elsewhere (a few late ones take the merge path, many
// the plain sort), with equal starts, empty intervals and an early entry that starts after all others.
TEST(IntervalsTest, UnionOfNearlySortedInputsMatchesASortedOne) {
  std::mt19937 random(7);
  for (int round = 0; round < 400; ++round) {
    const size_t n = 1 + random() % 600;
    std::vector<Interval> in;
    int64_t t = 0;
    for (size_t i = 0; i < n; ++i) {
      t += static_cast<int64_t>(random() % 5);
      in.push_back(Interval{t, t + static_cast<int64_t>(random() % 7) - 1});
    }
    const unsigned moved_per_mille = std::array<unsigned, 4>{5, 60, 120, 500}[round % 4];
    for (size_t i = 0; i < n; ++i) {
      if (random() % 1000 < moved_per_mille) std::swap(in[i], in[random() % n]);
    }
    if (round % 5 == 0) in.front() = Interval{t + 10, t + 20};
    ASSERT_EQ(UnionOf(in), ReferenceUnion(in)) << "round " << round;
  }
}

// A long range early keeps the running maximum up past the shorter ones after it.
TEST(IntervalsTest, RunningMaxEndsNeverDecrease) {
  const std::vector<Interval> ranges = {{0, 10}, {5, 50}, {20, 30}, {40, 60}};
  EXPECT_EQ(RunningMaxEnds(ranges), (std::vector<int64_t>{10, 50, 50, 60}));
  EXPECT_TRUE(RunningMaxEnds(std::vector<Interval>{}).empty());
}

}  // namespace
}  // namespace tuneprof

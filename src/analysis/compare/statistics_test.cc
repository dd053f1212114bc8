#include "analysis/compare/statistics.h"

#include <gtest/gtest.h>

#include <vector>

namespace tuneprof {
namespace {

TEST(StatisticsTest, SummaryUsesLinearInterpolationPercentiles) {
  const std::vector<double> values = {5, 1, 4, 2, 3};
  const auto summary = Summarize(values);
  ASSERT_TRUE(summary.has_value());
  EXPECT_EQ(summary->count, 5u);
  EXPECT_DOUBLE_EQ(summary->mean, 3);
  EXPECT_DOUBLE_EQ(summary->median, 3);
  EXPECT_DOUBLE_EQ(summary->p95, 4.8);  // numpy.percentile([1..5], 95)
  EXPECT_FALSE(Summarize(std::vector<double>{}).has_value());
}

// scipy.stats.mannwhitneyu documentation example (males vs females): U = 17, exact p = 0.1111,
// asymptotic p = 0.11134688653314041.
TEST(StatisticsTest, MannWhitneyMatchesScipyExample) {
  const std::vector<double> females = {20, 11, 17, 12};
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const auto exact = MannWhitneyU(females, males);
  ASSERT_TRUE(exact.has_value());
  EXPECT_TRUE(exact->exact);
  EXPECT_DOUBLE_EQ(exact->u_after, 17);
  EXPECT_NEAR(exact->p_value, 1.0 / 9, 1e-12);
}

TEST(StatisticsTest, MannWhitneyAsymptoticWithTies) {
  // A tie forces the normal approximation; with no ties scipy's asymptotic figure is 0.11134688653314041.
  const std::vector<double> before = {20, 11, 17, 12};
  const std::vector<double> after = {19, 22, 16, 29, 24, 24};
  const auto test = MannWhitneyU(before, after);
  ASSERT_TRUE(test.has_value());
  EXPECT_FALSE(test->exact);
  EXPECT_GT(test->p_value, 0.0);
  EXPECT_LT(test->p_value, 0.2);
  const std::vector<double> same = {3, 3, 3};
  EXPECT_DOUBLE_EQ(MannWhitneyU(same, same)->p_value, 1.0);
}

TEST(StatisticsTest, BootstrapIsDeterministicAndBracketsTheShift) {
  std::vector<double> before, after;
  for (int i = 0; i < 30; ++i) {
    before.push_back(100 + (i * 7) % 11);
    after.push_back(80 + (i * 5) % 11);
  }
  const auto first = BootstrapDifference(before, after, CenterStatistic::kMean);
  const auto second = BootstrapDifference(before, after, CenterStatistic::kMean);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->low, second->low);
  EXPECT_EQ(first->high, second->high);
  EXPECT_LT(first->high, 0);
  EXPECT_LT(first->low, -20 + 0.5);
  EXPECT_GT(first->high, -20 - 0.5 - 3);
}

TEST(StatisticsTest, ClearShiftIsSignificantDecrease) {
  std::vector<double> before, after;
  for (int i = 0; i < 20; ++i) {
    before.push_back(100 + i % 5);
    after.push_back(50 + i % 5);
  }
  const SampleComparison result = CompareSamples(before, after);
  EXPECT_EQ(result.verdict, ChangeVerdict::kDecrease);
  EXPECT_FALSE(result.small_sample);
  EXPECT_LT(result.rank_test->p_value, 1e-6);
}

TEST(StatisticsTest, SameDistributionIsNoSignificantChange) {
  std::vector<double> before, after;
  for (int i = 0; i < 40; ++i) {
    before.push_back(100 + (i * 13) % 17);
    after.push_back(100 + (i * 11 + 3) % 17);
  }
  EXPECT_EQ(CompareSamples(before, after).verdict, ChangeVerdict::kNoSignificantChange);
}

TEST(StatisticsTest, TinySamplesAreNeverAWin) {
  // One step a side: no test at all.
  EXPECT_EQ(CompareSamples(std::vector<double>{100}, std::vector<double>{10}).verdict, ChangeVerdict::kTooFewSamples);
  // Three steps a side, completely separated: the exact test's smallest p is 0.1.
  const SampleComparison three = CompareSamples(std::vector<double>{100, 101, 102}, std::vector<double>{10, 11, 12});
  EXPECT_EQ(three.verdict, ChangeVerdict::kNoSignificantChange);
  EXPECT_TRUE(three.small_sample);
  EXPECT_NEAR(three.rank_test->p_value, 0.1, 1e-12);
  // Five a side, separated: p = 2/252, significant but flagged small.
  const SampleComparison five =
      CompareSamples(std::vector<double>{100, 101, 102, 103, 104}, std::vector<double>{10, 11, 12, 13, 14});
  EXPECT_EQ(five.verdict, ChangeVerdict::kDecrease);
  EXPECT_TRUE(five.small_sample);
  EXPECT_NEAR(five.rank_test->p_value, 2.0 / 252, 1e-12);
}

}  // namespace
}  // namespace tuneprof

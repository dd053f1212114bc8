#include "analysis/comm/comm_outliers.h"

#include <gtest/gtest.h>

#include <vector>

#include "analysis/comm/comm_cross_rank.h"

namespace tuneprof {
namespace {

TEST(DixonTableTest, IsMsprofAnalyzesTable) {
  EXPECT_DOUBLE_EQ(*DixonCritical995(3), 0.994);
  EXPECT_DOUBLE_EQ(*DixonCritical995(4), 0.920);
  EXPECT_DOUBLE_EQ(*DixonCritical995(8), 0.723);   // r11 band starts: the value jumps up again
  EXPECT_DOUBLE_EQ(*DixonCritical995(11), 0.707);  // r21
  EXPECT_DOUBLE_EQ(*DixonCritical995(14), 0.672);  // r22
  EXPECT_DOUBLE_EQ(*DixonCritical995(64), 0.382);
  EXPECT_DOUBLE_EQ(*DixonCritical995(100), 0.341);
  EXPECT_FALSE(DixonCritical995(2));
  EXPECT_FALSE(DixonCritical995(101));
}

// Dixon's Q at the shortest end, one case per ratio msprof-analyze picks by the number of ranks n.
struct DixonCase {
  const char* name;
  std::vector<double> comm;
  const char* ratio;
  double statistic;
  double critical_value;
  std::vector<size_t> outliers;
};

const DixonCase kDixonCases[] = {
    // sorted 2, 10, 10.2, 10.4, 10.5: r10 = (10 − 2) / (10.5 − 2) = 8 / 8.5 = 0.941176 > 0.823 (n = 5).
    {"r10 flags the shortest rank", {10, 10.5, 10.2, 10.4, 2}, "r10", 8.0 / 8.5, 0.823, {4}},
    // sorted 4, 5, 7, 9: r10 = (5 − 4) / (9 − 4) = 0.2 ≤ 0.920 (n = 4).
    {"r10 below the critical value flags none", {9, 4, 7, 5}, "r10", 0.2, 0.920, {}},
    // n = 8: r11 = (x2 − x1) / (x7 − x1) = (9 − 1) / (11.5 − 1) = 0.761905 > 0.723; the 30 at the top is left out.
    {"r11 ignores the largest value", {9, 9.5, 10, 10.5, 11, 11.5, 30, 1}, "r11", 8.0 / 10.5, 0.723, {7}},
    // n = 12: r21 = (x3 − x1) / (x11 − x1) = (20 − 1) / (28 − 1) = 0.703704 > 0.675.
    {"r21 uses the third smallest", {1, 2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 100}, "r21", 19.0 / 27.0, 0.675, {0}},
    // n = 20: 0, 50, 100..117; r22 = (x3 − x1) / (x18 − x1) = (100 − 0) / (115 − 0) = 0.869565 > 0.568.
    {"r22 above thirteen ranks",
     {50, 0, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117},
     "r22",
     100.0 / 115.0,
     0.568,
     {1}},
};

TEST(DixonTest, EachRatioAtTheShortestEnd) {
  for (const DixonCase& c : kDixonCases) {
    SCOPED_TRACE(c.name);
    const OutlierTest t = TestOutliers(c.comm, SuspectEnd::kShortest);
    EXPECT_EQ(t.test, OutlierTestKind::kDixonQ);
    EXPECT_EQ(t.ratio, c.ratio);
    EXPECT_EQ(t.samples, c.comm.size());
    ASSERT_TRUE(t.statistic && t.critical_value);
    EXPECT_NEAR(*t.statistic, c.statistic, 1e-12);
    EXPECT_DOUBLE_EQ(*t.critical_value, c.critical_value);
    EXPECT_EQ(t.outliers, c.outliers);
  }
}

TEST(DixonTest, LongestEndForComputingTime) {
  // negated, sorted −30, −10.3, −10.2, −10.1, −10: r10 = (−10.3 + 30) / (−10 + 30) = 19.7 / 20 = 0.985 > 0.823.
  const std::vector<double> compute = {10, 10.1, 10.3, 10.2, 30};
  const OutlierTest t = TestOutliers(compute, SuspectEnd::kLongest);
  EXPECT_EQ(t.suspect_end, SuspectEnd::kLongest);
  EXPECT_NEAR(*t.statistic, 0.985, 1e-12);
  EXPECT_EQ(t.outliers, std::vector<size_t>{4});
  // The same sample at the shortest end: sorted 10, 10.1, 10.2, 10.3, 30: r10 = 0.1 / 20 = 0.005.
  const OutlierTest shortest = TestOutliers(compute, SuspectEnd::kShortest);
  EXPECT_NEAR(*shortest.statistic, 0.005, 1e-12);
  EXPECT_TRUE(shortest.outliers.empty());
}

TEST(DixonTest, RecipeGuardsSkipTheTest) {
  const std::vector<double> three_distinct = {1, 1, 2, 3};
  const OutlierTest t = TestOutliers(three_distinct, SuspectEnd::kShortest);
  EXPECT_EQ(t.test, OutlierTestKind::kDixonQ);
  EXPECT_FALSE(t.statistic);
  EXPECT_EQ(t.why_not, "fewer than 4 distinct values");
  const std::vector<double> two = {1, 5};
  EXPECT_EQ(TestOutliers(two, SuspectEnd::kShortest).why_not, "fewer than 3 ranks");
  EXPECT_TRUE(TestOutliers(two, SuspectEnd::kShortest).outliers.empty());
}

TEST(ThreeSigmaTest, FlagsTheLowValueAboveOneHundredRanks) {
  // 100 × 10 and one 0: mean = 1000/101 = 9.90099, σ = 0.990099, z of the 0 = 9.90099 / 0.990099 = 10.
  std::vector<double> comm(100, 10.0);
  comm.push_back(0);
  const OutlierTest t = TestOutliers(comm, SuspectEnd::kShortest);
  EXPECT_EQ(t.test, OutlierTestKind::kThreeSigma);
  EXPECT_EQ(t.samples, 101u);
  EXPECT_NEAR(*t.statistic, 10.0, 1e-9);
  EXPECT_DOUBLE_EQ(*t.critical_value, 3.0);
  EXPECT_EQ(t.outliers, std::vector<size_t>{100});
}

TEST(ThreeSigmaTest, AHighValueNamesTheShortestRank) {
  // 100 and 100 × 10: mean 10.8911, σ 8.91089; 100 > mean + 3σ = 37.62, so the first minimum (index 1) is named.
  std::vector<double> comm = {100};
  comm.insert(comm.end(), 100, 10.0);
  const OutlierTest t = TestOutliers(comm, SuspectEnd::kShortest);
  EXPECT_NEAR(*t.statistic, 0.1, 1e-9);
  EXPECT_EQ(t.outliers, std::vector<size_t>{1});
}

// 1,024 ranks computing exactly as long: nothing to test (their mean, a few ulps off, gave z = 1).
TEST(ThreeSigmaTest, IdenticalValuesAreNotTested) {
  const std::vector<double> computing(1024, -7.2);
  const OutlierTest t = TestOutliers(computing, SuspectEnd::kShortest);
  EXPECT_EQ(t.test, OutlierTestKind::kThreeSigma);
  EXPECT_FALSE(t.statistic.has_value());
  EXPECT_TRUE(t.outliers.empty());
  EXPECT_EQ(t.why_not, "all values equal");
}

TEST(ClusterViewTest, StepSpreadAndOutlierTestsOverTheRanks) {
  // Communication (ms) 10, 10.5, 10.2, 10.4, 2 on ranks 10..14: r10 = 8 / 8.5 flags rank 14 (others waited for it).
  // Computing (ms) 50, 50, 51, 52, 80: negated r10 = (−52 + 80) / (−50 + 80) = 28 / 30 = 0.9333 > 0.823: rank 14.
  const double comm_ms[] = {10, 10.5, 10.2, 10.4, 2};
  const double compute_ms[] = {50, 50, 51, 52, 80};
  std::vector<RankCommunication> ranks(5);
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].rank = 10 + static_cast<int64_t>(i);
    ranks[i].communication_ns = static_cast<int64_t>(comm_ms[i] * 1e6);
    ranks[i].computing_ns = static_cast<int64_t>(compute_ms[i] * 1e6);
    ranks[i].exposed_communication_ns = ranks[i].communication_ns / 2;
    ranks[i].free_ns = 1000000;
    ranks[i].wall_ns = 100000000;  // 100 ms
  }
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  ASSERT_EQ(x.outliers.size(), 2u);
  EXPECT_EQ(x.outliers[0].metric, "communication");
  EXPECT_NEAR(*x.outliers[0].test.statistic, 8.0 / 8.5, 1e-9);
  EXPECT_EQ(x.outliers[0].outlier_ranks, std::vector<int64_t>{14});
  EXPECT_EQ(x.outliers[1].metric, "computing");
  EXPECT_EQ(x.outliers[1].test.suspect_end, SuspectEnd::kLongest);
  EXPECT_NEAR(*x.outliers[1].test.statistic, 28.0 / 30.0, 1e-9);
  EXPECT_EQ(x.outliers[1].outlier_ranks, std::vector<int64_t>{14});
  ASSERT_EQ(x.step_spread.size(), 3u);
  EXPECT_EQ(x.step_spread[0].metric, "computing");
  EXPECT_EQ(x.step_spread[0].max_rank, 14);
  EXPECT_NEAR(*x.step_spread[0].share_of_step, 0.30, 1e-9);  // (80 − 50) / 100
  EXPECT_TRUE(x.step_spread[0].uneven);
  EXPECT_NEAR(*x.step_spread[1].share_of_step, 0.0425, 1e-9);  // (5.25 − 1) / 100
  EXPECT_FALSE(x.step_spread[1].uneven);
  EXPECT_FALSE(x.step_spread[2].uneven);
}

// The spread is a share of the steps each rank reports (its steps_ns), not of its trace's wall; a rank
// without them counts with its wall.
TEST(ClusterViewTest, TheSpreadIsAShareOfTheRanksReportedSteps) {
  std::vector<RankCommunication> ranks(3);
  const int64_t computing_ms[] = {50, 70, 55};
  const int64_t steps_ms[] = {200, 100, 0};
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].rank = static_cast<int64_t>(i);
    ranks[i].computing_ns = computing_ms[i] * 1'000'000;
    ranks[i].wall_ns = 300'000'000;
    ranks[i].steps_ns = steps_ms[i] * 1'000'000;
  }
  EXPECT_NEAR(MeanReportedStepsNs(ranks), 200e6, 1);  // (200 + 100 + rank 2's wall 300) / 3
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  ASSERT_EQ(x.step_spread.size(), 3u);
  EXPECT_NEAR(*x.step_spread[0].share_of_step, 20.0 / 200.0, 1e-9);  // not 20 / 300, the walls' mean
  EXPECT_TRUE(x.step_spread[0].uneven);
}

}  // namespace
}  // namespace tuneprof

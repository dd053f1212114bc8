#pragma once
// Is a before/after difference real or noise? Sample summaries, a bootstrap confidence interval of the
// change in mean or median, and the Mann-Whitney U rank test, for per-step samples (step times, decode
// steps). Deterministic: the bootstrap draws from a fixed-seed std::mt19937_64 (whose sequence the C++
// standard fixes) and maps draws to indices without library distributions, so every platform prints
// the same interval.
//
// Verdict: a change counts as significant only when the bootstrap interval of (after - before) excludes
// 0 AND the rank test's two-sided p < alpha. With fewer than kMinSamples per side no test is run; the
// exact U distribution keeps tiny samples honest (3 vs 3 steps can never reach p < 0.05).
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tuneprof {

struct SampleSummary {
  size_t count = 0;
  double mean = 0;
  double median = 0;
  double p95 = 0;  // linear interpolation between closest ranks (numpy's default)
  double min = 0;
  double max = 0;
};

// nullopt for an empty sample.
std::optional<SampleSummary> Summarize(std::span<const double> values);

// Percentile q in [0, 100] with linear interpolation; `sorted` must be sorted and non-empty.
double PercentileOfSorted(std::span<const double> sorted, double q);

enum class CenterStatistic : uint8_t { kMean, kMedian };

struct ConfidenceInterval {
  double low = 0;  // of after - before, in the samples' unit
  double high = 0;
  double confidence = 0.95;
  int resamples = 0;
};

constexpr uint64_t kBootstrapSeed = 0x7475'6e65'7072'6f66ULL;  // "tuneprof"
constexpr int kBootstrapResamples = 10000;

// Percentile bootstrap of statistic(after) - statistic(before), resampling each side independently.
// nullopt when a side is empty.
std::optional<ConfidenceInterval> BootstrapDifference(std::span<const double> before, std::span<const double> after,
                                                      CenterStatistic statistic, double confidence = 0.95,
                                                      int resamples = kBootstrapResamples,
                                                      uint64_t seed = kBootstrapSeed);

struct RankTest {
  double u_after = 0;  // U of the after sample: pairs (after, before) with after > before, ties 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // exact U distribution (small samples without ties) or normal approximation
};

// Mann-Whitney U. Exact when both sides have <= 20 values and no ties; otherwise the normal
// approximation with tie correction and continuity correction (scipy.stats.mannwhitneyu's
// "asymptotic"). nullopt when a side is empty.
std::optional<RankTest> MannWhitneyU(std::span<const double> before, std::span<const double> after);

constexpr size_t kMinSamples = 2;   // below this per side: no test at all
constexpr size_t kSmallSample = 5;  // at or below this per side: results flagged as a small sample
constexpr double kDefaultAlpha = 0.05;

enum class ChangeVerdict : uint8_t {
  kTooFewSamples,        // a side has fewer than kMinSamples values
  kNoSignificantChange,  // interval includes 0 or p >= alpha
  kIncrease,             // significant: after is larger
  kDecrease,             // significant: after is smaller
};

std::string_view ChangeVerdictName(ChangeVerdict verdict);

struct SampleComparison {
  std::optional<SampleSummary> before;
  std::optional<SampleSummary> after;
  std::optional<ConfidenceInterval> mean_change;  // after - before
  std::optional<ConfidenceInterval> median_change;
  std::optional<RankTest> rank_test;
  ChangeVerdict verdict = ChangeVerdict::kTooFewSamples;
  bool small_sample = false;  // a side has <= kSmallSample values: read the verdict with care
  double alpha = kDefaultAlpha;
};

SampleComparison CompareSamples(std::span<const double> before, std::span<const double> after,
                                double alpha = kDefaultAlpha);

}  // namespace tuneprof

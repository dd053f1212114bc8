#include "analysis/compare/statistics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "base/enum_names.h"

namespace tuneprof {

namespace {

std::vector<double> Sorted(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

double Mean(std::span<const double> values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double Center(std::vector<double>* values, CenterStatistic statistic) {
  if (statistic == CenterStatistic::kMean) return Mean(*values);
  std::sort(values->begin(), values->end());
  return PercentileOfSorted(*values, 50);
}

// Uniform index in [0, n) by rejection (no library distribution, whose algorithm the standard leaves
// to each implementation): draws below 2^64 mod n would favour the small indices.
size_t DrawIndex(std::mt19937_64* rng, size_t n) {
  const uint64_t bound = static_cast<uint64_t>(n);
  const uint64_t threshold = (0 - bound) % bound;
  uint64_t draw = (*rng)();
  while (draw < threshold) draw = (*rng)();
  return static_cast<size_t>(draw % bound);
}

void Resample(std::span<const double> from, std::mt19937_64* rng, std::vector<double>* into) {
  into->resize(from.size());
  for (double& value : *into) value = from[DrawIndex(rng, from.size())];
}

double StandardNormalSurvival(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// Number of orderings of m "after" and n "before" values giving each U, for U = 0..m*n.
std::vector<double> ExactUCounts(size_t m, size_t n) {
  // counts[j][u] for the current i: orderings of i after-values and j before-values with statistic u.
  std::vector<std::vector<double>> previous(n + 1), current(n + 1);
  for (size_t j = 0; j <= n; ++j) previous[j] = {1.0};  // i = 0: U is 0
  for (size_t i = 1; i <= m; ++i) {
    current[0] = {1.0};
    for (size_t j = 1; j <= n; ++j) {
      // The largest value is an after-value (beats all j before-values) or a before-value.
      std::vector<double> counts(i * j + 1, 0.0);
      for (size_t u = 0; u < previous[j].size(); ++u) counts[u + j] += previous[j][u];
      for (size_t u = 0; u < current[j - 1].size(); ++u) counts[u] += current[j - 1][u];
      current[j] = std::move(counts);
    }
    std::swap(previous, current);
  }
  return previous[n];
}

bool HasTies(std::span<const double> before, std::span<const double> after) {
  std::vector<double> all(before.begin(), before.end());
  all.insert(all.end(), after.begin(), after.end());
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

// Midranks of the pooled sample; returns the rank sum of `after` and Σ(t³ - t) over tie groups.
void RankSums(std::span<const double> before, std::span<const double> after, double* after_rank_sum, double* tie_term) {
  struct Item {
    double value;
    bool is_after;
  };
  std::vector<Item> items;
  for (double v : before) items.push_back({v, false});
  for (double v : after) items.push_back({v, true});
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.value < b.value; });
  *after_rank_sum = 0;
  *tie_term = 0;
  for (size_t i = 0; i < items.size();) {
    size_t j = i;
    while (j < items.size() && items[j].value == items[i].value) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (items[k].is_after) *after_rank_sum += midrank;
    }
    const double t = static_cast<double>(j - i);
    *tie_term += t * t * t - t;
    i = j;
  }
}

}  // namespace

double PercentileOfSorted(std::span<const double> sorted, double q) {
  const double position = q / 100 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

std::optional<SampleSummary> Summarize(std::span<const double> values) {
  if (values.empty()) return std::nullopt;
  const std::vector<double> sorted = Sorted(values);
  SampleSummary summary;
  summary.count = sorted.size();
  summary.mean = Mean(sorted);
  summary.median = PercentileOfSorted(sorted, 50);
  summary.p95 = PercentileOfSorted(sorted, 95);
  summary.min = sorted.front();
  summary.max = sorted.back();
  return summary;
}

std::optional<ConfidenceInterval> BootstrapDifference(std::span<const double> before, std::span<const double> after,
                                                      CenterStatistic statistic, double confidence, int resamples,
                                                      uint64_t seed) {
  if (before.empty() || after.empty() || resamples < 1) return std::nullopt;
  std::mt19937_64 rng(seed);
  std::vector<double> differences;
  differences.reserve(static_cast<size_t>(resamples));
  std::vector<double> before_draw, after_draw;
  for (int r = 0; r < resamples; ++r) {
    Resample(before, &rng, &before_draw);
    Resample(after, &rng, &after_draw);
    differences.push_back(Center(&after_draw, statistic) - Center(&before_draw, statistic));
  }
  std::sort(differences.begin(), differences.end());
  const double tail = (1 - confidence) / 2 * 100;
  ConfidenceInterval interval;
  interval.low = PercentileOfSorted(differences, tail);
  interval.high = PercentileOfSorted(differences, 100 - tail);
  interval.confidence = confidence;
  interval.resamples = resamples;
  return interval;
}

std::optional<RankTest> MannWhitneyU(std::span<const double> before, std::span<const double> after) {
  if (before.empty() || after.empty()) return std::nullopt;
  const double m = static_cast<double>(after.size());
  const double n = static_cast<double>(before.size());
  double rank_sum = 0, tie_term = 0;
  RankSums(before, after, &rank_sum, &tie_term);
  RankTest test;
  test.u_after = rank_sum - m * (m + 1) / 2;
  const double u_high = std::max(test.u_after, m * n - test.u_after);
  if (after.size() <= 20 && before.size() <= 20 && !HasTies(before, after)) {
    const std::vector<double> counts = ExactUCounts(after.size(), before.size());
    double total = 0, at_least = 0;
    for (size_t u = 0; u < counts.size(); ++u) {
      total += counts[u];
      if (static_cast<double>(u) >= u_high) at_least += counts[u];
    }
    test.exact = true;
    test.p_value = std::min(1.0, 2 * at_least / total);
    return test;
  }
  const double total = m + n;
  const double variance = m * n / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (variance <= 0) {  // every value equal: nothing to rank
    test.p_value = 1;
    return test;
  }
  const double z = (u_high - m * n / 2 - 0.5) / std::sqrt(variance);
  test.p_value = std::min(1.0, 2 * StandardNormalSurvival(z));
  return test;
}

std::string_view ChangeVerdictName(ChangeVerdict verdict) {
  static constexpr std::array<std::string_view, 4> kNames = {"too_few_samples", "no_significant_change", "increase",
                                                             "decrease"};
  return EnumName(verdict, kNames, "unknown");
}

SampleComparison CompareSamples(std::span<const double> before, std::span<const double> after, double alpha) {
  SampleComparison result;
  result.alpha = alpha;
  result.before = Summarize(before);
  result.after = Summarize(after);
  result.small_sample = before.size() <= kSmallSample || after.size() <= kSmallSample;
  if (before.size() < kMinSamples || after.size() < kMinSamples) return result;
  result.mean_change = BootstrapDifference(before, after, CenterStatistic::kMean);
  result.median_change = BootstrapDifference(before, after, CenterStatistic::kMedian);
  result.rank_test = MannWhitneyU(before, after);
  const ConfidenceInterval& ci = *result.mean_change;
  const bool interval_excludes_zero = ci.low > 0 || ci.high < 0;
  if (!interval_excludes_zero || result.rank_test->p_value >= alpha) {
    result.verdict = ChangeVerdict::kNoSignificantChange;
  } else {
    result.verdict = ci.low > 0 ? ChangeVerdict::kIncrease : ChangeVerdict::kDecrease;
  }
  return result;
}

}  // namespace tuneprof

#pragma once
// Slow-rank outlier tests across ranks, as msprof-analyze's slow_rank recipe runs them
// (Ascend/msprof-analyze msprof_analyze/cluster_analyse/recipes/slow_rank/slow_rank.py and
// dixon_table.py):
//
// - n ≤ 100 samples: Dixon's Q test, one-sided at 99.5 % confidence, on the sorted sample x1 ≤ … ≤ xn with
//   the ratio that fits n: r10 = (x2−x1)/(xn−x1) for n ≤ 7, r11 = (x2−x1)/(x(n−1)−x1) for n ≤ 10,
//   r21 = (x3−x1)/(x(n−1)−x1) for n ≤ 13, r22 = (x3−x1)/(x(n−2)−x1) above. x1 is an outlier when the ratio
//   exceeds the table's critical value for n (DIXON_TABLE_995, copied in comm_outliers.cc). Like the recipe,
//   no test runs with fewer than 4 distinct values (its guard against a zero denominator), so n = 3 never
//   flags and n = 4 needs four different values.
// - n > 100: 3-sigma (population σ): every value below mean − 3σ is an outlier, and when the largest value
//   is above mean + 3σ the smallest joins them (the recipe's judge_norm).
//
// Which end is suspect depends on the metric: in communication time the SHORTEST rank is the suspect (it
// arrived last, the others spent their time waiting for it: the recipe's rule); in computing time the
// LONGEST. The longest end is tested by running the same test on the negated sample.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tuneprof {

enum class OutlierTestKind : uint8_t { kNone, kDixonQ, kThreeSigma };
std::string_view OutlierTestName(OutlierTestKind kind);  // "none", "dixon_q", "3_sigma"

enum class SuspectEnd : uint8_t { kShortest, kLongest };
std::string_view SuspectEndName(SuspectEnd end);  // "shortest", "longest"

// Above this many samples the 3-sigma rule replaces Dixon's Q (the recipe's MAX_DIXON_NUM).
constexpr size_t kMaxDixonSamples = 100;
constexpr double kDixonConfidence = 0.995;
constexpr double kSigmaThreshold = 3.0;

struct OutlierTest {
  OutlierTestKind test = OutlierTestKind::kNone;
  SuspectEnd suspect_end = SuspectEnd::kShortest;
  size_t samples = 0;
  std::string_view ratio;                // Dixon: "r10", "r11", "r21", "r22"; 3-sigma: "z"; "" when none
  std::optional<double> statistic;       // Dixon: the ratio; 3-sigma: the suspect end's |x − mean| / σ
  std::optional<double> critical_value;  // Dixon: the table's value for n; 3-sigma: 3
  std::vector<size_t> outliers;          // indices into the sample, in the recipe's order
  std::string_view why_not;              // why no test ran ("" when one did)
};

// The one-sided 99.5 % critical value for n samples, nullopt outside 3..100.
std::optional<double> DixonCritical995(size_t n);

// The recipe's test on `values` (one per rank, any unit), the suspect at `end`.
OutlierTest TestOutliers(std::span<const double> values, SuspectEnd end);

}  // namespace tuneprof

#include "analysis/comm/comm_outliers.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "base/enum_names.h"

namespace tuneprof {
namespace {

// One-sided Dixon critical values at 99.5 % for n = 3..100, as msprof-analyze's
// recipes/slow_rank/dixon_table.py (DIXON_TABLE_995) lists them; index n − 3.
constexpr std::array<double, 98> kDixonTable995 = {
    0.994, 0.920, 0.823, 0.744, 0.680, 0.723, 0.676, 0.638, 0.707, 0.675,  // n = 3..12
    0.649, 0.672, 0.649, 0.629, 0.611, 0.595, 0.580, 0.568, 0.556, 0.545,  // 13..22
    0.536, 0.526, 0.519, 0.510, 0.503, 0.496, 0.489, 0.484, 0.478, 0.473,  // 23..32
    0.468, 0.463, 0.458, 0.454, 0.450, 0.446, 0.442, 0.439, 0.435, 0.432,  // 33..42
    0.429, 0.425, 0.423, 0.420, 0.417, 0.414, 0.412, 0.409, 0.407, 0.405,  // 43..52
    0.402, 0.400, 0.398, 0.396, 0.394, 0.392, 0.391, 0.388, 0.387, 0.385,  // 53..62
    0.383, 0.382, 0.380, 0.379, 0.377, 0.376, 0.374, 0.372, 0.371, 0.370,  // 63..72
    0.368, 0.368, 0.366, 0.365, 0.364, 0.363, 0.361, 0.360, 0.359, 0.358,  // 73..82
    0.356, 0.356, 0.355, 0.353, 0.352, 0.352, 0.351, 0.350, 0.349, 0.348,  // 83..92
    0.347, 0.346, 0.345, 0.344, 0.344, 0.343, 0.341, 0.341,                // 93..100
};

// The recipe's ratio bands (Constant.DIXON_THRESHOLD_1/2/3 = 7, 10, 13).
struct DixonRatio {
  std::string_view name;
  size_t numerator_index;       // 0-based into the sorted sample: x2 → 1, x3 → 2
  size_t denominator_from_top;  // 0 → xn, 1 → x(n−1), 2 → x(n−2)
};

DixonRatio RatioFor(size_t n) {
  if (n <= 7) return {"r10", 1, 0};
  if (n <= 10) return {"r11", 1, 1};
  if (n <= 13) return {"r21", 2, 1};
  return {"r22", 2, 2};
}

size_t IndexOf(std::span<const double> values, double value) {
  return static_cast<size_t>(std::find(values.begin(), values.end(), value) - values.begin());
}

OutlierTest Dixon(std::span<const double> values) {
  OutlierTest out;
  out.test = OutlierTestKind::kDixonQ;
  out.samples = values.size();
  if (values.size() < 3) {
    out.why_not = "fewer than 3 ranks";
    return out;
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::set<double>(sorted.begin(), sorted.end()).size() <= 3) {
    out.why_not = "fewer than 4 distinct values";
    return out;
  }
  const size_t n = sorted.size();
  const DixonRatio ratio = RatioFor(n);
  const double range = sorted[n - 1 - ratio.denominator_from_top] - sorted[0];
  out.ratio = ratio.name;
  out.statistic = range != 0 ? (sorted[ratio.numerator_index] - sorted[0]) / range : 0.0;
  out.critical_value = DixonCritical995(n);
  if (*out.statistic > *out.critical_value) out.outliers.push_back(IndexOf(values, sorted[0]));
  return out;
}

OutlierTest ThreeSigma(std::span<const double> values) {
  OutlierTest out;
  out.test = OutlierTestKind::kThreeSigma;
  out.samples = values.size();
  out.ratio = "z";
  out.critical_value = kSigmaThreshold;
  // Identical values have no outlier; tested, they would print the z of a rounding error (their mean, a
  // few ulps off every one of them, puts each exactly one "sigma" away: z = 1).
  if (const auto [low, high] = std::minmax_element(values.begin(), values.end()); *low == *high) {
    out.why_not = "all values equal";
    return out;
  }
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double variance = 0;
  for (double v : values) variance += (v - mean) * (v - mean);
  const double sigma = std::sqrt(variance / static_cast<double>(values.size()));  // numpy's np.std
  const auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
  out.statistic = sigma > 0 ? (mean - *min_it) / sigma : 0.0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < mean - kSigmaThreshold * sigma) out.outliers.push_back(i);
  }
  // A rank far above the rest means the others waited for the fastest one: the recipe names the minimum.
  const size_t min_index = IndexOf(values, *min_it);
  if (*max_it > mean + kSigmaThreshold * sigma &&
      std::find(out.outliers.begin(), out.outliers.end(), min_index) == out.outliers.end()) {
    out.outliers.push_back(min_index);
  }
  return out;
}

}  // namespace

std::string_view OutlierTestName(OutlierTestKind kind) {
  static constexpr std::array<std::string_view, 3> kNames = {"none", "dixon_q", "3_sigma"};
  return EnumName(kind, kNames, "none");
}

std::string_view SuspectEndName(SuspectEnd end) { return end == SuspectEnd::kShortest ? "shortest" : "longest"; }

std::optional<double> DixonCritical995(size_t n) {
  if (n < 3 || n > kMaxDixonSamples) return std::nullopt;
  return kDixonTable995[n - 3];
}

OutlierTest TestOutliers(std::span<const double> values, SuspectEnd end) {
  // The longest end is the shortest end of the negated sample; indices do not change.
  std::vector<double> sample(values.begin(), values.end());
  if (end == SuspectEnd::kLongest) {
    for (double& v : sample) v = -v;
  }
  OutlierTest out = sample.size() <= kMaxDixonSamples ? Dixon(sample) : ThreeSigma(sample);
  out.suspect_end = end;
  return out;
}

}  // namespace tuneprof

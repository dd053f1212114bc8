#include "analysis/hta/hta_kernels.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

#include "analysis/core/intervals.h"
#include "analysis/hta/hta_rows.h"

namespace tuneprof {
namespace {

// HTA's order of the analysed types; a type's bit is 1 << its position.
constexpr HtaKernelType kAnalysedTypes[] = {HtaKernelType::kComputation, HtaKernelType::kCommunication,
                                            HtaKernelType::kMemory};

int TypePosition(HtaKernelType type) {
  for (int i = 0; i < 3; ++i) {
    if (kAnalysedTypes[i] == type) return i;
  }
  return -1;
}

// "COMPUTATION overlapping COMMUNICATION": the types whose bit is set, in HTA's order.
std::string MaskLabel(int mask) {
  std::string label;
  for (int i = 0; i < 3; ++i) {
    if ((mask & (1 << i)) == 0) continue;
    if (!label.empty()) label += " overlapping ";
    label += HtaKernelTypeName(kAnalysedTypes[i]);
  }
  return label;
}

// _get_gpu_kernel_type_time: +bit / -bit at each merged group's edges, cumulative sum; the time from
// one edge to the next belongs to the mask running after it. Within a tie only the last edge's span is
// non-zero, and the sum after all edges at a time does not depend on their order.
void AddTypeTime(const std::vector<std::vector<Interval>>& rows_by_type, std::map<int, int64_t>* ns_by_mask) {
  std::vector<std::pair<int64_t, int>> edges;
  for (int i = 0; i < 3; ++i) {
    for (const Interval& g : MergeLikeHta(rows_by_type[i])) {
      edges.emplace_back(g.start_ns, 1 << i);
      edges.emplace_back(g.end_ns, -(1 << i));
    }
  }
  std::sort(edges.begin(), edges.end());
  int running = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    running += edges[i].second;
    const bool last_at_time = i + 1 == edges.size() || edges[i + 1].first != edges[i].first;
    if (!last_at_time || i + 1 == edges.size() || running <= 0) continue;
    (*ns_by_mask)[running] += edges[i + 1].first - edges[i].first;
  }
}

std::vector<HtaKernelTypeShare> TypeShares(const std::map<int, int64_t>& ns_by_mask) {
  std::vector<HtaKernelTypeShare> shares;
  int64_t total = 0;
  for (const auto& [mask, ns] : ns_by_mask) total += ns;
  for (const auto& [mask, ns] : ns_by_mask) {
    HtaKernelTypeShare share;
    share.kernel_type = MaskLabel(mask);
    share.sum_us = static_cast<double>(ns) / kHtaNsPerUs;
    share.percentage = total == 0 ? 0 : RoundLikePandas(static_cast<double>(ns) / static_cast<double>(total) * 100, 1);
    shares.push_back(std::move(share));
  }
  std::stable_sort(shares.begin(), shares.end(),
                   [](const HtaKernelTypeShare& a, const HtaKernelTypeShare& b) { return a.sum_us > b.sum_us; });
  return shares;
}

struct NameGroup {
  std::string name;
  std::vector<double> durations_us;
  uint64_t rows = 0;
  double sum_us = 0;
};

HtaKernelStats StatsOf(const std::string& name, const std::vector<double>& values, uint64_t rows) {
  HtaKernelStats s;
  s.name = name;
  s.count = rows;
  const HtaDescribe d = DescribeLikePandas(values);
  s.sum_us = std::accumulate(values.begin(), values.end(), 0.0);
  s.max_us = d.max;
  s.min_us = d.min;
  s.mean_us = d.mean;
  s.stddev_us = d.has_std ? d.std : 0;  // fillna({"std": 0})
  return s;
}

// pandas Series.quantile (linear) of the cumulative sums.
double CumsumQuantile(const std::vector<double>& cumsum, double q) {
  std::vector<double> sorted = cumsum;
  std::sort(sorted.begin(), sorted.end());
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - static_cast<double>(below));
}

// _aggr_gpu_kernel_time: per-name statistics, folded into "others" past num_kernels names.
std::vector<HtaKernelStats> AggregateLikeHta(std::vector<NameGroup> groups, uint64_t num_kernels,
                                             double duration_ratio) {
  // groupby sorts by name; sort_values(sum, descending) then reorders (stable here).
  std::sort(groups.begin(), groups.end(), [](const NameGroup& a, const NameGroup& b) { return a.name < b.name; });
  std::stable_sort(groups.begin(), groups.end(),
                   [](const NameGroup& a, const NameGroup& b) { return a.sum_us > b.sum_us; });
  std::vector<HtaKernelStats> stats;
  if (groups.size() <= num_kernels) {
    for (const NameGroup& g : groups) stats.push_back(StatsOf(g.name, g.durations_us, g.rows));
    return stats;
  }
  std::vector<double> cumsum;
  double running = 0;
  for (const NameGroup& g : groups) cumsum.push_back(running += g.sum_us);
  const double threshold = CumsumQuantile(cumsum, duration_ratio);
  std::map<std::string, std::pair<std::vector<double>, uint64_t>> folded;  // name -> (per-name sums, rows)
  for (size_t i = 0; i < groups.size(); ++i) {
    const bool to_others = cumsum[i] > threshold || i >= num_kernels;
    auto& entry = folded[to_others ? std::string("others") : groups[i].name];
    entry.first.push_back(groups[i].sum_us);
    entry.second += groups[i].rows;
  }
  for (const auto& [name, entry] : folded) stats.push_back(StatsOf(name, entry.first, entry.second));
  return stats;
}

}  // namespace

HtaKernelBreakdown ComputeHtaKernelBreakdown(std::span<const Trace> traces, uint64_t num_kernels,
                                             double duration_ratio) {
  HtaKernelBreakdown result;
  std::map<int, int64_t> ns_by_mask;
  for (const HtaRankRows& rank : LoadLikeHta(traces)) {
    std::vector<std::vector<Interval>> rows_by_type(3);
    std::vector<std::map<std::string, NameGroup, std::less<>>> names_by_type(3);
    for (const HtaRow& row : rank.rows) {
      if (!row.carries_stream) continue;
      const std::string_view name = HtaRowName(rank, row);
      const int position = TypePosition(HtaKernelTypeOf(name));
      if (position < 0) continue;
      rows_by_type[position].push_back(row.time);
      auto it = names_by_type[position].find(name);
      if (it == names_by_type[position].end()) {
        it = names_by_type[position].emplace(std::string(name), NameGroup{std::string(name), {}, 0, 0}).first;
      }
      const double dur_us = static_cast<double>(row.time.length()) / kHtaNsPerUs;
      it->second.durations_us.push_back(dur_us);
      it->second.sum_us += dur_us;
      ++it->second.rows;
    }
    std::map<int, int64_t> rank_ns_by_mask;
    AddTypeTime(rows_by_type, &rank_ns_by_mask);
    for (const auto& [mask, ns] : rank_ns_by_mask) ns_by_mask[mask] += ns;
    result.types_by_rank.push_back(TypeShares(rank_ns_by_mask));
    for (int i = 0; i < 3; ++i) {
      std::vector<NameGroup> groups;
      for (auto& [name, group] : names_by_type[i]) groups.push_back(std::move(group));
      for (HtaKernelStats& s : AggregateLikeHta(std::move(groups), num_kernels, duration_ratio)) {
        s.kernel_type = std::string(HtaKernelTypeName(kAnalysedTypes[i]));
        s.rank = rank.trace->metadata().rank;
        result.kernels.push_back(std::move(s));
      }
    }
  }
  result.types = TypeShares(ns_by_mask);
  std::stable_sort(result.kernels.begin(), result.kernels.end(), [](const HtaKernelStats& a, const HtaKernelStats& b) {
    if (a.kernel_type != b.kernel_type) return a.kernel_type < b.kernel_type;
    if (a.name != b.name) return a.name < b.name;
    return a.rank < b.rank;
  });
  return result;
}

}  // namespace tuneprof

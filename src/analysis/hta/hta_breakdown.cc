#include "analysis/hta/hta_breakdown.h"

#include <algorithm>
#include <utility>

#include "analysis/core/intervals.h"
#include "analysis/hta/hta_rows.h"

namespace tuneprof {
namespace {

// communication_analysis.py: +1/-1 at communication group edges, +2/-2 at computation ones; time with a
// running sum of 3 is overlap. The sum after the last edge at a time does not depend on tie order.
int64_t OverlapLikeHta(const std::vector<Interval>& compute, const std::vector<Interval>& communication) {
  std::vector<std::pair<int64_t, int>> edges;
  edges.reserve(2 * (compute.size() + communication.size()));
  for (const Interval& g : communication) {
    edges.emplace_back(g.start_ns, 1);
    edges.emplace_back(g.end_ns, -1);
  }
  for (const Interval& g : compute) {
    edges.emplace_back(g.start_ns, 2);
    edges.emplace_back(g.end_ns, -2);
  }
  std::sort(edges.begin(), edges.end());
  int64_t overlap = 0;
  int running = 0;
  for (size_t i = 0; i + 1 < edges.size(); ++i) {
    running += edges[i].second;
    if (running == 3) overlap += edges[i + 1].first - edges[i].first;
  }
  return overlap;
}

double RoundPercent(double percent) { return RoundLikePandas(percent, 2); }

double Micros(int64_t ns) { return static_cast<double>(ns) / kHtaNsPerUs; }

void MeasureLikeHta(const HtaRankRows& rank, const std::vector<HtaRow>& gpu_rows, HtaRankBreakdown* out) {
  std::vector<Interval> all, compute, communication;
  for (const HtaRow& row : gpu_rows) {
    all.push_back(row.time);
    const HtaKernelType type = HtaKernelTypeOf(HtaRowName(rank, row));
    if (type == HtaKernelType::kComputation) compute.push_back(row.time);
    if (type == HtaKernelType::kCommunication) communication.push_back(row.time);
  }
  const std::vector<Interval> all_groups = MergeLikeHta(std::move(all));
  const std::vector<Interval> compute_groups = MergeLikeHta(std::move(compute));
  const std::vector<Interval> communication_groups = MergeLikeHta(std::move(communication));

  const int64_t kernel_time = all_groups.back().end_ns - all_groups.front().start_ns;
  const int64_t idle = kernel_time - SumOfLengths(all_groups);
  const int64_t compute_time = SumOfLengths(compute_groups);
  HtaTemporalBreakdown t;
  t.kernel_time_us = Micros(kernel_time);
  t.idle_us = Micros(idle);
  t.compute_us = Micros(compute_time);
  t.non_compute_us = Micros(kernel_time - compute_time - idle);
  // Same operation order as HTA: ratio first, then 100 * ratio, then round.
  t.idle_pct = RoundPercent(100 * (static_cast<double>(idle) / kernel_time));
  t.compute_pct = RoundPercent(100 * (static_cast<double>(compute_time) / kernel_time));
  t.non_compute_pct = RoundPercent(100 * (static_cast<double>(kernel_time - compute_time - idle) / kernel_time));
  out->temporal = t;

  const int64_t communication_time = SumOfLengths(communication_groups);
  if (communication_time != 0) {
    const double ratio = static_cast<double>(OverlapLikeHta(compute_groups, communication_groups)) / communication_time;
    out->comm_comp_overlap_pct = RoundPercent(100 * ratio);
  }
}

}  // namespace

std::vector<HtaRankBreakdown> ComputeHtaBreakdown(std::span<const Trace> traces) {
  std::vector<HtaRankBreakdown> results;
  for (const HtaRankRows& rank : LoadLikeHta(traces)) {
    HtaRankBreakdown result;
    result.rank = rank.trace->metadata().rank;
    result.path = rank.trace->metadata().path;
    result.rounded_to_us = rank.rounded_to_us;
    result.last_step_dropped = rank.last_step_dropped;
    std::vector<HtaRow> gpu_rows;
    for (const HtaRow& row : rank.rows) {
      if (row.carries_stream) gpu_rows.push_back(row);
    }
    result.gpu_events = gpu_rows.size();
    if (!gpu_rows.empty()) MeasureLikeHta(rank, gpu_rows, &result);
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace tuneprof

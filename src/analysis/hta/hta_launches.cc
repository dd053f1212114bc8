#include "analysis/hta/hta_launches.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace tuneprof {
namespace {

// cuda_kernel_analysis.py: the launches whose correlation ids select the rows joined.
bool IsLaunchStatsCall(std::string_view name) {
  return name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" ||
         name == "runFunction - job_prep_and_submit_for_execution" || name == "cudaMemcpyAsync" ||
         name == "cudaMemsetAsync";
}

// trace_symbol_table.py get_runtime_launch_events_mask.
bool IsQueueingCall(std::string_view name) {
  return name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" || name == "cuLaunchKernel" ||
         name == "cuLaunchKernelEx" || name == "cudaMemcpyAsync" || name == "cudaMemsetAsync" ||
         name == "runFunction - job_prep_and_submit_for_execution" || name == "hipLaunchKernel" ||
         name == "hipExtModuleLaunchKernel" || name == "hipMemsetAsync" || name == "hipMemcpyAsync" ||
         name == "hipMemcpyWithStream";
}

double Us(int64_t ns) { return static_cast<double>(ns) / kHtaNsPerUs; }

void AddLaunchStats(const HtaRankRows& rank, HtaLaunchAnalysis* out) {
  const int64_t rank_id = rank.trace->metadata().rank;
  std::unordered_set<int64_t> launch_correlations;
  for (const HtaRow& row : rank.rows) {
    // A launch without a correlation id would join every uncorrelated row; Kineto always writes one.
    if (row.correlation >= 0 && IsLaunchStatsCall(HtaRowName(rank, row))) launch_correlations.insert(row.correlation);
  }
  std::unordered_multimap<int64_t, const HtaRow*> gpu_rows;
  for (const HtaRow& row : rank.rows) {
    if (row.carries_stream && launch_correlations.contains(row.correlation)) gpu_rows.emplace(row.correlation, &row);
  }
  HtaLaunchSummary summary;
  summary.rank = rank_id;
  std::vector<double> cpu, gpu, delay;
  const size_t first = out->launches.size();
  for (const HtaRow& cpu_row : rank.rows) {
    if (cpu_row.carries_stream || !launch_correlations.contains(cpu_row.correlation)) continue;
    auto [begin, end] = gpu_rows.equal_range(cpu_row.correlation);
    for (auto it = begin; it != end; ++it) {
      const HtaRow& gpu_row = *it->second;
      HtaLaunchRow launch;
      launch.rank = rank_id;
      launch.correlation = cpu_row.correlation;
      launch.cpu_duration_us = Us(cpu_row.time.length());
      launch.gpu_duration_us = Us(gpu_row.time.length());
      launch.launch_delay_us = std::max(0.0, Us(gpu_row.time.start_ns - cpu_row.time.end_ns));
      cpu.push_back(launch.cpu_duration_us);
      gpu.push_back(launch.gpu_duration_us);
      delay.push_back(launch.launch_delay_us);
      summary.short_kernels +=
          launch.cpu_duration_us <= kHtaRuntimeCutoffUs && launch.gpu_duration_us < launch.cpu_duration_us;
      summary.runtime_outliers += launch.cpu_duration_us > kHtaRuntimeCutoffUs;
      summary.launch_delay_outliers += launch.launch_delay_us > kHtaLaunchDelayCutoffUs;
      out->launches.push_back(launch);
    }
  }
  std::sort(out->launches.begin() + static_cast<std::ptrdiff_t>(first), out->launches.end(),
            [](const HtaLaunchRow& a, const HtaLaunchRow& b) { return a.correlation < b.correlation; });
  if (cpu.empty()) return;
  summary.cpu_duration_us = DescribeLikePandas(std::move(cpu));
  summary.gpu_duration_us = DescribeLikePandas(std::move(gpu));
  summary.launch_delay_us = DescribeLikePandas(std::move(delay));
  out->summaries.push_back(summary);
}

// trace_counters.py _get_queue_length_time_series_for_rank: the launches (file order, one per GPU row of
// their correlation) followed by the GPU rows (file order), sorted by ts with pandas' unstable quicksort,
// whose order of equal timestamps changes the values seen at the change points.
void AddQueueLengths(const HtaRankRows& rank, HtaLaunchAnalysis* out) {
  const std::vector<const HtaRow*> rows = InFileOrder(rank);
  std::unordered_map<int64_t, std::vector<const HtaRow*>> gpu_rows_of;
  for (const HtaRow* row : rows) {
    if (row->carries_stream && row->correlation >= 0) gpu_rows_of[row->correlation].push_back(row);
  }
  std::vector<int64_t> ts;
  std::vector<std::pair<int, int64_t>> change;  // (delta, stream)
  std::unordered_set<int64_t> launched;
  for (const HtaRow* row : rows) {
    if (row->carries_stream || row->correlation < 0 || !IsQueueingCall(HtaRowName(rank, *row))) continue;
    auto it = gpu_rows_of.find(row->correlation);
    if (it == gpu_rows_of.end()) continue;  // index_correlation > 0: a GPU row exists
    launched.insert(row->correlation);
    for (const HtaRow* gpu : it->second) {
      ts.push_back(row->time.start_ns);
      change.emplace_back(+1, gpu->stream);
    }
  }
  for (const HtaRow* row : rows) {
    if (!row->carries_stream || !launched.contains(row->correlation)) continue;
    ts.push_back(row->time.start_ns);
    change.emplace_back(-1, row->stream);
  }
  std::map<int64_t, std::pair<int64_t, std::vector<double>>> by_stream;  // stream -> (running, values)
  for (size_t i : ArgsortLikeNumpy(ts)) {
    auto& [running, values] = by_stream[change[i].second];
    running += change[i].first;
    values.push_back(static_cast<double>(running));
  }
  for (auto& [stream, entry] : by_stream) {
    out->queues.push_back({rank.trace->metadata().rank, stream, DescribeLikePandas(std::move(entry.second))});
  }
}

}  // namespace

HtaLaunchAnalysis ComputeHtaLaunches(std::span<const Trace> traces) {
  HtaLaunchAnalysis result;
  for (const HtaRankRows& rank : LoadLikeHta(traces)) {
    AddLaunchStats(rank, &result);
    AddQueueLengths(rank, &result);
  }
  return result;
}

}  // namespace tuneprof

#pragma once
// `--semantics hta`: HTA's get_cuda_kernel_launch_stats (hta/analyzers/cuda_kernel_analysis.py) and
// get_queue_length_summary (hta/analyzers/trace_counters.py), f4d0062, on the rows HTA keeps
// (analysis/hta/hta_rows.h):
// - launch stats: host rows with the correlation of a cudaLaunchKernel / cudaLaunchKernelExC / MTIA
//   runFunction launch (plus cudaMemcpyAsync / cudaMemsetAsync: include_memory_events=True) joined with
//   the GPU rows of that correlation; launch_delay = max(0, gpu start - (cpu start + cpu dur));
// - queue length: +1 at each launch call (also cuLaunchKernel and the hip calls) that has a GPU row,
//   -1 at that GPU row's start, cumulative per stream; the summary is pandas' describe() of the values
//   at the change points (not time-weighted).
#include <cstdint>
#include <span>
#include <vector>

#include "analysis/hta/hta_rows.h"
#include "model/trace.h"

namespace tuneprof {

struct HtaLaunchRow {
  int64_t rank = 0;
  int64_t correlation = 0;
  double cpu_duration_us = 0;
  double gpu_duration_us = 0;
  double launch_delay_us = 0;
};

// HTA's plot cut-offs (runtime_cutoff=50, launch_delay_cutoff=100), counted instead of plotted.
constexpr double kHtaRuntimeCutoffUs = 50;
constexpr double kHtaLaunchDelayCutoffUs = 100;

struct HtaLaunchSummary {
  int64_t rank = 0;
  HtaDescribe cpu_duration_us;
  HtaDescribe gpu_duration_us;
  HtaDescribe launch_delay_us;
  uint64_t short_kernels = 0;          // cpu_dur <= runtime_cutoff and gpu_dur < cpu_dur
  uint64_t runtime_outliers = 0;       // cpu_dur > runtime_cutoff
  uint64_t launch_delay_outliers = 0;  // launch_delay > launch_delay_cutoff
};

struct HtaQueueLength {
  int64_t rank = 0;
  int64_t stream = 0;
  HtaDescribe queue_length;
};

struct HtaLaunchAnalysis {
  std::vector<HtaLaunchRow> launches;       // by (rank, correlation)
  std::vector<HtaLaunchSummary> summaries;  // one per rank with launches, in trace order
  std::vector<HtaQueueLength> queues;       // by (rank, stream)
};

HtaLaunchAnalysis ComputeHtaLaunches(std::span<const Trace> traces);

}  // namespace tuneprof

#pragma once
// `--semantics hta`: HTA's get_gpu_kernel_breakdown (hta/analyzers/breakdown_analysis.py, f4d0062), with
// include_memory_kernels=True, on the rows HTA keeps (analysis/hta/hta_rows.h):
// - kernel-type breakdown: per rank, the COMPUTATION, COMMUNICATION and MEMORY rows are merged per type
//   (HTA's merge), and every stretch of time is labelled by the set of types running ("COMPUTATION
//   overlapping COMMUNICATION"); durations summed over all ranks, percentage of the sum (1 decimal);
// - kernel breakdown: per rank, type and full name, count / sum / max / min / mean / sample stddev of
//   the durations; with more than `num_kernels` names HTA folds the tail into "others" and then shows
//   statistics over the per-name sums (so a kept row reads max = min = mean = sum, stddev 0).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct HtaKernelTypeShare {
  std::string kernel_type;  // "COMPUTATION", "COMMUNICATION overlapping MEMORY", ...
  double sum_us = 0;
  double percentage = 0;  // rounded to 1 decimal, as HTA prints it
};

struct HtaKernelStats {
  std::string name;         // "others" for the folded tail
  std::string kernel_type;  // COMPUTATION, COMMUNICATION or MEMORY
  int64_t rank = 0;
  uint64_t count = 0;  // kernels behind the row (not in HTA's table; for "others", of every folded name)
  double sum_us = 0, max_us = 0, min_us = 0, mean_us = 0;
  double stddev_us = 0;  // ddof 1; 0 where pandas gives NaN (a single value)
};

struct HtaKernelBreakdown {
  std::vector<HtaKernelTypeShare> types;                       // all ranks summed (HTA's table), by sum, largest first
  std::vector<std::vector<HtaKernelTypeShare>> types_by_rank;  // the same for each trace alone, in order
  std::vector<HtaKernelStats> kernels;                         // by (kernel_type, name, rank), as HTA sorts them
};

constexpr uint64_t kHtaDefaultNumKernels = 10;
constexpr double kHtaDefaultDurationRatio = 0.8;

// One HTA run over all `traces` (one per rank). Pass num_kernels = UINT64_MAX for no folding.
HtaKernelBreakdown ComputeHtaKernelBreakdown(std::span<const Trace> traces, uint64_t num_kernels,
                                             double duration_ratio = kHtaDefaultDurationRatio);

}  // namespace tuneprof

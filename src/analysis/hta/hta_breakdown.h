#pragma once
// `--semantics hta`: Holistic Trace Analysis' temporal breakdown and comm/compute overlap, reproduced
// exactly as HTA computes them (facebookresearch/HolisticTraceAnalysis f4d0062, hta/analyzers/
// breakdown_analysis.py and communication_analysis.py):
// - HTA's loading (last step dropped, unlaunched GPU rows dropped, µs rounding): analysis/hta/hta_rows.h;
// - "GPU events" are the rows that carry a stream (kernels, memcpy, memset, syncs), typed by HTA's name
//   regexes (not by ours: device_work.h), and measured with HTA's interval merge.
// Kept faithful on purpose, including HTA's known oddities (NaN overlap without communication kernels;
// communication hidden under compute counted as compute).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct HtaTemporalBreakdown {
  double idle_us = 0;
  double compute_us = 0;
  double non_compute_us = 0;
  double kernel_time_us = 0;  // last GPU end - first GPU start (HTA's name; not a sum of kernel times)
  double idle_pct = 0;        // rounded to 2 decimals, as HTA prints them
  double compute_pct = 0;
  double non_compute_pct = 0;
};

struct HtaRankBreakdown {
  int64_t rank = 0;
  std::string path;
  uint64_t gpu_events = 0;                       // the rows HTA keeps for these analyses
  bool last_step_dropped = false;                // HTA's load filter applied (>= 2 ProfilerStep names)
  bool rounded_to_us = false;                    // sub-µs timestamps rounded as HTA does
  std::optional<HtaTemporalBreakdown> temporal;  // nullopt when no GPU event is left
  std::optional<double> comm_comp_overlap_pct;   // nullopt where HTA gives NaN (no communication)
};

// One result per trace, in order. All traces form one HTA run (the step-name count is global).
std::vector<HtaRankBreakdown> ComputeHtaBreakdown(std::span<const Trace> traces);

}  // namespace tuneprof

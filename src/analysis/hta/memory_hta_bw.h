#pragma once
// HTA's memory-bandwidth summary, computed as HTA computes it (facebookresearch/HolisticTraceAnalysis
// f4d0062, hta/analyzers/trace_counters.py get_memory_bw_summary), so that `memory --json` can be checked
// against HTA's memory_bw_summary.csv:
// - the rows are HTA's loaded GPU rows (analysis/hta/hta_rows.h) whose kernel type is MEMORY, named
//   "Memset" or the first 11 characters of the name ("Memcpy DtoH");
// - each row adds its "memory bandwidth (GB/s)" arg at its start and subtracts it at its end (a 0 µs row
//   lasts 1 µs); the start points, then the end points, are sorted by time with numpy's quicksort;
// - per name the running sum is taken and described (pandas describe) over its positive values.
// Note that the figure is a concurrency-weighted level, not one copy's bandwidth (memory_copies.h).
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/hta/hta_rows.h"
#include "model/trace.h"

namespace tuneprof {

struct HtaMemoryBwRow {
  int64_t rank = 0;
  std::string name;  // "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memset"
  HtaDescribe memory_bw_gbps;
};

// All traces form one HTA run; rows by rank, then name (HTA's groupby order).
std::vector<HtaMemoryBwRow> ComputeHtaMemoryBw(std::span<const Trace> traces);

// One rank's rows under each of the run's possible shapes (hta_rows.h HtaRunShape), for a run read one
// rank at a time: the run's rows are each rank's under CombineHtaShapes of its ranks, in the run's order.
std::array<std::vector<HtaMemoryBwRow>, kHtaRunShapes> ComputeRankHtaMemoryBw(const Trace& trace);

}  // namespace tuneprof

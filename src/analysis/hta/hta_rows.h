#pragma once
// The rows Holistic Trace Analysis computes on, shared by every `--semantics hta` analysis
// (facebookresearch/HolisticTraceAnalysis f4d0062, hta/common/trace.py, hta/utils/utils.py):
// - HTA's rows are the X events with a category other than "Trace";
// - with >= 2 distinct ProfilerStep#N names over all ranks, host rows from the last step on are dropped
//   and a GPU row survives only if a kept host row has its correlation id; on MTIA (hta/common/trace.py
//   filter_mtia_kernels_for_one_rank) every step is kept instead, with the host rows inside the steps'
//   time range, the kernels they launched and the copy rows that start inside a step;
// - a row's stream is its stream arg; where kernels carry one, a kernel without it has none (HTA's -1);
// - traces whose timestamps have sub-µs digits are read as HTA reads them (Python floats, ts rounded up,
//   ends rounded down to whole µs);
// - kernel types come from HTA's name regexes (hta/common/types.py), not from device_work.h.
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/core/intervals.h"
#include "model/trace.h"

namespace tuneprof {

// HTA's rows are in µs, ours in ns.
constexpr int64_t kHtaNsPerUs = 1000;

enum class HtaKernelType : uint8_t { kCommunication, kMemory, kComputation, kOther };

HtaKernelType HtaKernelTypeOf(std::string_view name);
std::string_view HtaKernelTypeName(HtaKernelType type);  // "COMPUTATION", as HTA prints it

struct HtaRow {
  uint32_t event = 0;
  Interval time;                // HTA's [ts, ts + dur) in ns of the trace's text clock (whole µs when rounded)
  int64_t correlation = -1;     // HTA's default for rows without one
  bool gpu_kernel_row = false;  // HTA's GPUKernelFilter: stream and correlation >= 0, or a device sync
  bool carries_stream = false;  // HTA's "stream != -1": kernel, memcpy, memset and sync rows
  int64_t stream = -1;          // the row's stream arg, else its tid (the same on CUDA); -1 on host rows
};

struct HtaRankRows {
  const Trace* trace = nullptr;
  bool last_step_dropped = false;  // HTA's load filter applied (>= 2 ProfilerStep names, not MTIA)
  bool rounded_to_us = false;      // sub-µs timestamps rounded as HTA does
  std::vector<HtaRow> rows;        // every row HTA keeps after loading, host and GPU, in event order
};

// One entry per trace, in order; all traces form one HTA run (the step-name count is global).
std::vector<HtaRankRows> LoadLikeHta(std::span<const Trace> traces);

// What HTA's load decides for the whole run before it keeps any row: its step filter (two or more
// ProfilerStep names over the run) and which one (MTIA, read off the first rank).
enum class HtaRunShape : uint8_t {
  kAllRows,  // fewer than two step names: nothing filtered
  kLastStepDropped,
  kMtiaFiltered,
};
inline constexpr size_t kHtaRunShapes = 3;

// One rank's part of that decision, so that a run read one rank at a time can take it afterwards.
struct HtaRankShape {
  std::vector<std::string> step_names;  // two of its distinct ProfilerStep names (all when fewer), sorted
  bool mtia = false;                    // an MTIA run, if this rank is the run's first
};
HtaRankShape ShapeOfRankForHta(const Trace& trace);
// `ranks` in the run's order; an empty run keeps every row.
HtaRunShape CombineHtaShapes(std::span<const HtaRankShape> ranks);

// The rows HTA keeps of one rank under each shape, handed to `each` one shape at a time (the events read
// once; at most two shapes' rows held at once).
void ForEachRankShapeLikeHta(const Trace& trace, const std::function<void(HtaRunShape, const HtaRankRows&)>& each);

// Every interval event of `trace` (not only those HTA keeps) read as HTA reads a row: its clock, its
// correlation default and its stream. In event order. For the events table handed to HTA-style notebooks.
std::vector<HtaRow> ReadIntervalsLikeHta(const Trace& trace);

std::string_view HtaRowName(const HtaRankRows& rank, const HtaRow& row);

// hta/utils/utils.py merge_kernel_intervals: sort by ts; a row opens a new group when it starts after
// every earlier end. Unlike UnionOf it keeps zero-length groups (they bound kernel_time) and lets
// rounding produce negative ones.
std::vector<Interval> MergeLikeHta(std::vector<Interval> rows);
int64_t SumOfLengths(const std::vector<Interval>& groups);

// The rows of `rank` in the order of the trace file (HTA's row order: pandas keeps traceEvents' order).
std::vector<const HtaRow*> InFileOrder(const HtaRankRows& rank);

// The permutation numpy 1.24's argsort(kind="quicksort") gives (HTA sorts with pandas' sort_values, whose
// default quicksort is not stable: equal values come out in an order only this algorithm reproduces).
std::vector<size_t> ArgsortLikeNumpy(const std::vector<int64_t>& values);

// numpy's round-half-to-even at `decimals` places, as pandas' round() does it.
double RoundLikePandas(double value, int decimals);

// pandas Series.describe() of numeric values: count, mean, std (ddof 1), min, quartiles (linear), max.
// std is absent below 2 values and every statistic but count is absent without values (NaN in pandas).
struct HtaDescribe {
  uint64_t count = 0;
  double mean = 0, std = 0, min = 0, p25 = 0, p50 = 0, p75 = 0, max = 0;
  bool has_std = false;
};
HtaDescribe DescribeLikePandas(std::vector<double> values);

}  // namespace tuneprof

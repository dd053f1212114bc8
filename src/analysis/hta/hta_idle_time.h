#pragma once
// `--semantics hta`: HTA's get_idle_time_breakdown (hta/analyzers/breakdown_analysis.py, f4d0062) with
// show_idle_interval_stats=True, on the rows HTA keeps (analysis/hta/hta_rows.h). Per rank and stream, over
// the kernel / memcpy / memset rows (not syncs) sorted by start: the idle interval before a row is its
// start minus the previous row's end on the stream (the previous row only, not the latest end), typed
//   host_wait    the row's runtime call started after the previous row ended (the host was late),
//   kernel_wait  otherwise, when the interval is below `consecutive_kernel_delay` (µs, although HTA's
//                docstring says ns),
//   other        the rest; the stream's first row has no interval but still counts as one "other" row.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/hta/hta_rows.h"
#include "model/trace.h"

namespace tuneprof {

enum class HtaIdleCategory : uint8_t { kHostWait, kKernelWait, kOther };
std::string_view HtaIdleCategoryName(HtaIdleCategory category);  // host_wait, kernel_wait, other

struct HtaIdleRow {
  int64_t rank = 0;
  int64_t stream = 0;
  HtaIdleCategory category = HtaIdleCategory::kOther;
  double idle_us = 0;
  std::optional<double> ratio;  // share of the stream's idle time, 2 decimals; nullopt when it has none
  HtaDescribe intervals;        // statistics of the category's intervals (µs), HTA's idle_interval_stats
};

constexpr int64_t kHtaConsecutiveKernelDelayUs = 30;

// Rows per rank in trace order, streams in order of first appearance, categories in the order above
// (only those with at least one row, as HTA's groupby gives them).
std::vector<HtaIdleRow> ComputeHtaIdleTime(std::span<const Trace> traces,
                                           int64_t consecutive_kernel_delay_us = kHtaConsecutiveKernelDelayUs);

}  // namespace tuneprof

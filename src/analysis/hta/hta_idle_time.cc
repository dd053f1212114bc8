#include "analysis/hta/hta_idle_time.h"

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>

#include "base/enum_names.h"

namespace tuneprof {
namespace {

constexpr int64_t kNoRuntime = std::numeric_limits<int64_t>::min();

// HTA's kernel_cats: the sync rows that also carry a stream are left out.
bool IsIdleTimeCategory(std::string_view category) {
  return category == "kernel" || category == "Kernel" || category == "gpu_memset" || category == "Memset" ||
         category == "gpu_memcpy" || category == "Memcpy" || category == "mtia_ccp_events";
}

struct StreamRow {
  Interval time;
  int64_t runtime_start_ns = kNoRuntime;  // HTA's ts_runtime (NaN without a correlated host row)
};

struct CategoryIntervals {
  bool present = false;
  std::vector<double> intervals_us;
};

// ts_runtime: the start of the host row carrying the GPU row's correlation (HTA's index_correlation).
std::unordered_map<int64_t, int64_t> RuntimeStarts(const HtaRankRows& rank) {
  std::unordered_map<int64_t, int64_t> starts;
  for (const HtaRow& row : rank.rows) {
    if (!row.carries_stream && row.correlation >= 0) starts[row.correlation] = row.time.start_ns;
  }
  return starts;
}

void AnalyseStream(int64_t rank, int64_t stream, std::vector<StreamRow> rows, int64_t delay_ns,
                   std::vector<HtaIdleRow>* out) {
  std::vector<int64_t> starts;
  for (const StreamRow& r : rows) starts.push_back(r.time.start_ns);
  std::vector<StreamRow> sorted;  // sort_values(by="ts"): pandas' unstable quicksort, reproduced
  for (size_t i : ArgsortLikeNumpy(starts)) sorted.push_back(rows[i]);
  rows = std::move(sorted);
  std::array<CategoryIntervals, 3> categories;
  categories[static_cast<int>(HtaIdleCategory::kOther)].present = true;  // the first row
  for (size_t i = 1; i < rows.size(); ++i) {
    const int64_t previous_end = rows[i - 1].time.end_ns;
    const int64_t interval = rows[i].time.start_ns - previous_end;
    HtaIdleCategory category = HtaIdleCategory::kOther;
    if (rows[i].runtime_start_ns != kNoRuntime && rows[i].runtime_start_ns > previous_end) {
      category = HtaIdleCategory::kHostWait;
    } else if (interval < delay_ns) {
      category = HtaIdleCategory::kKernelWait;
    }
    CategoryIntervals& c = categories[static_cast<int>(category)];
    c.present = true;
    c.intervals_us.push_back(static_cast<double>(interval) / kHtaNsPerUs);
  }
  double total_us = 0;
  for (const CategoryIntervals& c : categories) {
    for (double v : c.intervals_us) total_us += v;
  }
  for (int i = 0; i < 3; ++i) {
    if (!categories[i].present) continue;
    HtaIdleRow row;
    row.rank = rank;
    row.stream = stream;
    row.category = static_cast<HtaIdleCategory>(i);
    for (double v : categories[i].intervals_us) row.idle_us += v;
    if (total_us != 0) row.ratio = RoundLikePandas(row.idle_us / total_us, 2);
    row.intervals = DescribeLikePandas(categories[i].intervals_us);
    out->push_back(std::move(row));
  }
}

}  // namespace

std::string_view HtaIdleCategoryName(HtaIdleCategory category) {
  static constexpr std::array<std::string_view, 3> kNames = {"host_wait", "kernel_wait", "other"};
  return EnumName(category, kNames, "other");
}

std::vector<HtaIdleRow> ComputeHtaIdleTime(std::span<const Trace> traces, int64_t consecutive_kernel_delay_us) {
  std::vector<HtaIdleRow> result;
  for (const HtaRankRows& rank : LoadLikeHta(traces)) {
    const std::unordered_map<int64_t, int64_t> runtime_starts = RuntimeStarts(rank);
    const EventTable& e = rank.trace->events();
    std::vector<int64_t> stream_order;
    std::unordered_map<int64_t, std::vector<StreamRow>> by_stream;
    for (const HtaRow* row_in_file : InFileOrder(rank)) {
      const HtaRow& row = *row_in_file;
      if (!row.carries_stream || !IsIdleTimeCategory(rank.trace->str(e.category[row.event]))) continue;
      auto [it, inserted] = by_stream.try_emplace(row.stream);
      if (inserted) stream_order.push_back(row.stream);
      StreamRow stream_row{row.time, kNoRuntime};
      const auto runtime = runtime_starts.find(row.correlation);
      if (row.correlation >= 0 && runtime != runtime_starts.end()) stream_row.runtime_start_ns = runtime->second;
      it->second.push_back(stream_row);
    }
    for (int64_t stream : stream_order) {
      AnalyseStream(rank.trace->metadata().rank, stream, std::move(by_stream[stream]),
                    consecutive_kernel_delay_us * 1000, &result);
    }
  }
  return result;
}

}  // namespace tuneprof

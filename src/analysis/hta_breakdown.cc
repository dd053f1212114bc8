#include "analysis/hta_breakdown.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>

#include "analysis/intervals.h"

namespace tuneprof {
namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr int64_t kNsPerUs = 1000;

// ---- HTA's kernel types: hta/common/types.py patterns, applied with Python's re.match (anchored at
// the start; '.' does not cross a newline, hence "on the first line").

enum class HtaKernelType : uint8_t { kCommunication, kMemory, kComputation, kOther };

std::string_view FirstLine(std::string_view name) { return name.substr(0, name.find('\n')); }

bool HasOnFirstLine(std::string_view name, std::string_view part) {
  return FirstLine(name).find(part) != std::string_view::npos;
}

bool StartsWithAny(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return name.starts_with(p); });
}

// (^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)
bool IsHtaCommunication(std::string_view name) {
  return StartsWithAny(name, {"nccl", "hip", "hccl"}) || HasOnFirstLine(name, "ncclKernel");
}

// (^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)
bool IsHtaMemory(std::string_view name) {
  return StartsWithAny(name, {"Memcpy", "hipMemcpy", "Memset", "hipMemset", "dma"});
}

// Compute = the name matches none of: (^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait
// Event)|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|
// (^hccl)|(^collective_subgraph_execution)
bool IsHtaComputation(std::string_view name) {
  if (StartsWithAny(name, {"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe", "packet", "pe_exe",
                           "cpum_exe_subgraph", "hccl", "collective_subgraph_execution"})) {
    return false;
  }
  for (std::string_view part : {"Memcpy", "Memset", "dma", "Sync"}) {
    if (HasOnFirstLine(name, part)) return false;
  }
  return !(name.starts_with("cuda") && HasOnFirstLine(name.substr(4), "LaunchKernel"));
}

HtaKernelType HtaKernelTypeOf(std::string_view name) {
  if (IsHtaCommunication(name)) return HtaKernelType::kCommunication;
  if (IsHtaMemory(name)) return HtaKernelType::kMemory;
  if (IsHtaComputation(name)) return HtaKernelType::kComputation;
  return HtaKernelType::kOther;
}

// ---- HTA's rows and times.

// HTA keeps the X events that have a category other than "Trace".
bool IsHtaRow(const Trace& trace, uint32_t i) {
  const EventTable& e = trace.events();
  if (e.dur_ns[i] < 0 || e.category[i].value == 0) return false;
  return trace.str(e.category[i]) != "Trace";
}

// HTA's "stream != -1": the Kineto categories written with a stream arg (kernel, gpu_memcpy, gpu_memset,
// cuda_sync). The model does not keep the arg, so the kind stands for it.
bool CarriesStream(EventKind kind) {
  return kind == EventKind::kKernel || kind == EventKind::kMemcpy || kind == EventKind::kMemset ||
         kind == EventKind::kSync;
}

bool IsProfilerStepName(std::string_view name) {
  return name.size() > kStepPrefix.size() && name.starts_with(kStepPrefix) &&
         name[kStepPrefix.size()] >= '0' && name[kStepPrefix.size()] <= '9';
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The double Python's float() gives for the µs text of `ns` (at most 3 decimals): the integer part is
// exact below 2^53 and the fraction correctly rounded, so one more rounding matches the decimal parse.
double MicrosAsPythonFloat(int64_t ns) {
  const int64_t whole = FloorDiv(ns, kNsPerUs);
  return static_cast<double>(whole) + static_cast<double>(ns - whole * kNsPerUs) / 1000.0;
}

// The timeline HTA sees: text timestamps (baseTimeNanoseconds is ignored by HTA), and for traces with
// sub-µs digits, ts = ceil(ts), end = floor(ts + dur) computed on Python floats.
class HtaClock {
 public:
  explicit HtaClock(const Trace& trace) {
    const int64_t base = trace.metadata().base_time_ns;
    base_ns_ = base == kNoId ? 0 : base;
    round_ = HasSubMicroTimestamps(trace);
  }
  bool rounds() const { return round_; }

  Interval Of(int64_t ts_ns, int64_t dur_ns) const {
    const int64_t text_ns = ts_ns - base_ns_;
    if (!round_) return Interval{text_ns, text_ns + dur_ns};
    const double ts_us = MicrosAsPythonFloat(text_ns);
    const double end_us = ts_us + MicrosAsPythonFloat(dur_ns);
    return Interval{static_cast<int64_t>(std::ceil(ts_us)) * kNsPerUs,
                    static_cast<int64_t>(std::floor(end_us)) * kNsPerUs};
  }

 private:
  // pandas makes the ts column float64 (and HTA then rounds) when any entry has a fraction.
  bool HasSubMicroTimestamps(const Trace& trace) const {
    auto fractional = [&](int64_t ns) { return (ns - base_ns_) % kNsPerUs != 0; };
    for (int64_t ts : trace.events().ts_ns) {
      if (fractional(ts)) return true;
    }
    for (const FlowPoint& p : trace.flow_points()) {
      if (fractional(p.ts_ns)) return true;
    }
    for (const CounterSample& s : trace.counter_samples()) {
      if (fractional(s.ts_ns)) return true;
    }
    return false;
  }

  int64_t base_ns_ = 0;
  bool round_ = false;
};

struct Row {
  uint32_t event = 0;
  Interval time;
  int64_t correlation = -1;  // HTA's default for rows without one
  bool gpu_kernel_row = false;  // HTA's GPUKernelFilter: stream and correlation >= 0, or a device sync
};

std::vector<Row> ReadRows(const Trace& trace, const HtaClock& clock) {
  const EventTable& e = trace.events();
  std::vector<Row> rows;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (!IsHtaRow(trace, i)) continue;
    Row row;
    row.event = i;
    row.time = clock.Of(e.ts_ns[i], e.dur_ns[i]);
    row.correlation = e.correlation[i] == kNoId ? -1 : e.correlation[i];
    const std::string_view name = trace.str(e.name[i]);
    row.gpu_kernel_row = (CarriesStream(e.kind[i]) && row.correlation >= 0) || name == "Event Sync" ||
                         name == "Context Sync";
    rows.push_back(row);
  }
  return rows;
}

// hta/common/trace.py _filter_irrelevant_gpu_kernels: host rows before the last step's start survive;
// a GPU row survives when some surviving host row shares its correlation id.
std::vector<Row> DropLastStepLikeHta(const Trace& trace, std::vector<Row> rows) {
  int64_t last_step_start = std::numeric_limits<int64_t>::min();
  int64_t first_host_start = std::numeric_limits<int64_t>::max();
  bool any_host = false, any_step = false;
  for (const Row& row : rows) {
    if (row.gpu_kernel_row) continue;
    any_host = true;
    first_host_start = std::min(first_host_start, row.time.start_ns);
    if (IsProfilerStepName(trace.str(trace.events().name[row.event]))) {
      any_step = true;
      last_step_start = std::max(last_step_start, row.time.start_ns);
    }
  }
  if (!any_host) return rows;
  const int64_t cutoff = any_step ? last_step_start : first_host_start;
  std::unordered_set<int64_t> kept_correlations;
  for (const Row& row : rows) {
    if (!row.gpu_kernel_row && row.time.start_ns < cutoff) kept_correlations.insert(row.correlation);
  }
  std::erase_if(rows, [&](const Row& row) {
    return row.gpu_kernel_row ? !kept_correlations.contains(row.correlation) : row.time.start_ns >= cutoff;
  });
  return rows;
}

// ---- HTA's interval arithmetic.

// hta/utils/utils.py merge_kernel_intervals: sort by ts; a row opens a new group when it starts after
// every earlier end. Unlike UnionOf it keeps zero-length groups (they bound kernel_time) and lets
// rounding produce negative ones; ties are ordered by end, as in the reference re-derivation.
std::vector<Interval> MergeLikeHta(std::vector<Interval> rows) {
  std::sort(rows.begin(), rows.end(), [](const Interval& a, const Interval& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  });
  std::vector<Interval> groups;
  int64_t max_end = std::numeric_limits<int64_t>::min();
  for (const Interval& row : rows) {
    if (groups.empty() || row.start_ns > max_end) {
      groups.push_back(row);
    } else {
      groups.back().end_ns = std::max(groups.back().end_ns, row.end_ns);
    }
    max_end = std::max(max_end, row.end_ns);
  }
  return groups;
}

int64_t SumOfLengths(const std::vector<Interval>& groups) {
  int64_t total = 0;
  for (const Interval& g : groups) total += g.length();
  return total;
}

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

// pandas Series.round(2): numpy's round-half-to-even on value * 100.
double RoundPercent(double percent) { return std::nearbyint(percent * 100.0) / 100.0; }

double Micros(int64_t ns) { return static_cast<double>(ns) / kNsPerUs; }

void MeasureLikeHta(const Trace& trace, const std::vector<Row>& gpu_rows, HtaRankBreakdown* out) {
  std::vector<Interval> all, compute, communication;
  for (const Row& row : gpu_rows) {
    all.push_back(row.time);
    const HtaKernelType type = HtaKernelTypeOf(trace.str(trace.events().name[row.event]));
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

// Distinct ProfilerStep#N symbols over every rank (HTA's symbol table is shared by all ranks and holds
// names and categories alike).
size_t CountStepNames(std::span<const Trace> traces) {
  std::set<std::string, std::less<>> names;
  for (const Trace& trace : traces) {
    const EventTable& e = trace.events();
    for (uint32_t i = 0; i < e.size() && names.size() < 2; ++i) {
      if (!IsHtaRow(trace, i)) continue;
      for (StringId id : {e.name[i], e.category[i]}) {
        std::string_view text = trace.str(id);
        if (IsProfilerStepName(text) && !names.contains(text)) names.emplace(text);
      }
    }
  }
  return names.size();
}

}  // namespace

std::vector<HtaRankBreakdown> ComputeHtaBreakdown(std::span<const Trace> traces) {
  const bool drop_last_step = CountStepNames(traces) >= 2;
  std::vector<HtaRankBreakdown> results;
  for (const Trace& trace : traces) {
    HtaRankBreakdown result;
    result.rank = trace.metadata().rank;
    result.path = trace.metadata().path;
    const HtaClock clock(trace);
    result.rounded_to_us = clock.rounds();
    result.last_step_dropped = drop_last_step;
    std::vector<Row> rows = ReadRows(trace, clock);
    if (drop_last_step) rows = DropLastStepLikeHta(trace, std::move(rows));
    std::erase_if(rows, [&](const Row& row) { return !CarriesStream(trace.events().kind[row.event]); });
    result.gpu_events = rows.size();
    if (!rows.empty()) MeasureLikeHta(trace, rows, &result);
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace tuneprof

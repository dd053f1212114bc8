#include "analysis/hta/hta_rows.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "analysis/core/side_rows_by_event.h"
#include "base/enum_names.h"
#include "base/huge_pages.h"
namespace tuneprof {
namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";

// ---- HTA's kernel types: hta/common/types.py patterns, applied with Python's re.match (anchored at
// the start; '.' does not cross a newline, hence "on the first line").

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

// ---- HTA's rows and times.

// The strings HTA tests rows by, resolved to ids once per trace: comparing text per event was most of
// the time spent reading rows.
class HtaRowNames {
 public:
  explicit HtaRowNames(const Trace& trace) {
    has_trace_category_ = trace.strings().Find("Trace", &trace_category_);
    has_event_sync_ = trace.strings().Find("Event Sync", &event_sync_);
    has_context_sync_ = trace.strings().Find("Context Sync", &context_sync_);
  }
  // HTA keeps the X events that have a category other than "Trace".
  bool IsRow(const EventTable& e, uint32_t i) const {
    if (e.dur_ns[i] < 0 || e.category[i].value == 0) return false;
    return !(has_trace_category_ && e.category[i] == trace_category_);
  }
  bool IsDeviceSync(StringId name) const {
    return (has_event_sync_ && name == event_sync_) || (has_context_sync_ && name == context_sync_);
  }

 private:
  StringId trace_category_, event_sync_, context_sync_;
  bool has_trace_category_ = false, has_event_sync_ = false, has_context_sync_ = false;
};

// HTA's "stream != -1": the Kineto categories written with a stream arg (kernel, gpu_memcpy, gpu_memset,
// cuda_sync). The model does not keep the arg, so the kind stands for it.
bool CarriesStream(EventKind kind) {
  return kind == EventKind::kKernel || kind == EventKind::kMemcpy || kind == EventKind::kMemset ||
         kind == EventKind::kSync;
}

bool IsProfilerStepName(std::string_view name) {
  return name.size() > kStepPrefix.size() && name.starts_with(kStepPrefix) && name[kStepPrefix.size()] >= '0' &&
         name[kStepPrefix.size()] <= '9';
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The double Python's float() gives for the µs text of `ns` (at most 3 decimals): the integer part is
// exact below 2^53 and the fraction correctly rounded, so one more rounding matches the decimal parse.
double MicrosAsPythonFloat(int64_t ns) {
  const int64_t whole = FloorDiv(ns, kHtaNsPerUs);
  return static_cast<double>(whole) + static_cast<double>(ns - whole * kHtaNsPerUs) / 1000.0;
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
    return Interval{static_cast<int64_t>(std::ceil(ts_us)) * kHtaNsPerUs,
                    static_cast<int64_t>(std::floor(end_us)) * kHtaNsPerUs};
  }

 private:
  // pandas makes the ts column float64 (and HTA then rounds) when any entry has a fraction.
  bool HasSubMicroTimestamps(const Trace& trace) const {
    auto fractional = [&](int64_t ns) { return (ns - base_ns_) % kHtaNsPerUs != 0; };
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

std::vector<HtaRow> ReadRows(const Trace& trace, const HtaClock& clock, bool every_interval = false) {
  const EventTable& e = trace.events();
  const HtaRowNames names(trace);
  // HTA's stream column is the row's `stream` arg; Kineto writes it as the tid on CUDA and ROCm, but MTIA
  // rows carry a stream that is not their tid.
  SideRowsByEvent<KernelInfo> kernel_info(trace.kernels());
  const bool any_stream_arg = std::any_of(trace.kernels().begin(), trace.kernels().end(),
                                          [](const KernelInfo& info) { return info.stream != kNoId; });
  // Most events are rows: room for all of them costs address space only, and the rows are written once
  // into advised pages instead of being copied on every doubling.
  std::vector<HtaRow> rows;
  ReserveAdvised(&rows, e.size());
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (every_interval ? e.dur_ns[i] < 0 : !names.IsRow(e, i)) continue;
    HtaRow row;
    row.event = i;
    row.time = clock.Of(e.ts_ns[i], e.dur_ns[i]);
    row.correlation = e.correlation[i] == kNoId ? -1 : e.correlation[i];
    row.carries_stream = CarriesStream(e.kind[i]);
    if (row.carries_stream) {
      const KernelInfo* info = kernel_info.Next(i);
      if (info != nullptr && info->stream != kNoId) {
        row.stream = info->stream;
      } else if (any_stream_arg && e.kind[i] == EventKind::kKernel) {
        // Where kernels carry stream args, one without (MTIA's dma_request rows) is HTA's stream -1: no
        // kernel, left out of every breakdown.
        row.carries_stream = false;
      } else {
        row.stream = trace.tracks()[e.track[i]].tid.value;
      }
    }
    row.gpu_kernel_row = (row.carries_stream && row.correlation >= 0) || names.IsDeviceSync(e.name[i]);
    rows.push_back(row);
  }
  return rows;
}

// hta/common/trace.py _filter_irrelevant_gpu_kernels: host rows before the last step's start survive;
// a GPU row survives when some surviving host row shares its correlation id.
std::vector<HtaRow> DropLastStepLikeHta(const Trace& trace, std::vector<HtaRow> rows) {
  int64_t last_step_start = std::numeric_limits<int64_t>::min();
  int64_t first_host_start = std::numeric_limits<int64_t>::max();
  bool any_host = false, any_step = false;
  for (const HtaRow& row : rows) {
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
  for (const HtaRow& row : rows) {
    if (!row.gpu_kernel_row && row.time.start_ns < cutoff) kept_correlations.insert(row.correlation);
  }
  std::erase_if(rows, [&](const HtaRow& row) {
    return row.gpu_kernel_row ? !kept_correlations.contains(row.correlation) : row.time.start_ns >= cutoff;
  });
  return rows;
}

// hta/common/trace_parser.py infer_gpu_type on the first rank: a "mtia:hccl" backend, else a trace with
// MTIA's launch call and neither CUDA's nor ROCm's.
bool IsMtiaRun(std::span<const Trace> traces) {
  if (traces.empty()) return false;
  const Trace& trace = traces.front();
  if (trace.str(trace.metadata().distributed.backend).find("mtia:hccl") != std::string_view::npos) return true;
  bool mtia_launch = false;
  for (StringId name : trace.events().name) {
    const std::string_view text = trace.str(name);
    if (text == "cudaLaunchKernel" || text == "hipLaunchKernel") return false;
    mtia_launch = mtia_launch || text == "runFunction - job_prep_and_submit_for_execution";
  }
  return mtia_launch;
}

// HTA's CPU event categories: (^cpu_op)|(^user_annotation$)|(^(.+)_runtime).
bool IsHtaCpuEventCategory(std::string_view category) {
  const size_t runtime = category.find("_runtime");
  return category.starts_with("cpu_op") || category == "user_annotation" ||
         (runtime != std::string_view::npos && runtime > 0);
}

// HTA's GPU kernel categories, matched at the start: (kernel)|(gpu_mem.+)|(mtia_ccp_events).
bool IsHtaKernelCategory(std::string_view category) {
  return category.starts_with("kernel") || (category.starts_with("gpu_mem") && category.size() > 7) ||
         category.starts_with("mtia_ccp_events");
}

// hta/common/trace.py filter_mtia_kernels_for_one_rank: MTIA keeps every step. Host rows inside the steps'
// time range survive, with the kernels their correlation ids launched, and so do copy rows (HTA's memory
// names) that start inside a step; a copy row without a stream arg takes its tid as the stream.
std::vector<HtaRow> FilterLikeHtaMtia(const Trace& trace, std::vector<HtaRow> rows) {
  const EventTable& e = trace.events();
  auto category = [&](const HtaRow& row) { return trace.str(e.category[row.event]); };
  auto is_step = [&](const HtaRow& row) { return IsProfilerStepName(trace.str(e.name[row.event])); };
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  std::vector<Interval> steps;
  for (const HtaRow& row : rows) {
    if (!is_step(row)) continue;
    steps.push_back(Interval{row.time.start_ns, row.time.end_ns + 1});  // closed [ts, end] in whole ns
    if (!IsHtaCpuEventCategory(category(row))) continue;
    first = std::min(first, row.time.start_ns);
    last = std::max(last, row.time.end_ns);
  }
  std::unordered_set<int64_t> launched;
  std::vector<char> keep(rows.size(), 0);
  for (size_t i = 0; i < rows.size(); ++i) {
    const HtaRow& row = rows[i];
    if (!IsHtaCpuEventCategory(category(row)) || row.time.start_ns < first || row.time.end_ns > last) continue;
    keep[i] = 1;
    if (row.correlation != -1) launched.insert(row.correlation);
  }
  const IntervalSet covered = UnionOf(std::move(steps));
  auto in_a_step = [&](int64_t ts) {  // pandas' between(): both ends included
    auto after = std::upper_bound(covered.begin(), covered.end(), ts,
                                  [](int64_t t, const Interval& s) { return t < s.start_ns; });
    return after != covered.begin() && ts < std::prev(after)->end_ns;
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    HtaRow& row = rows[i];
    if (IsHtaKernelCategory(category(row)) && launched.contains(row.correlation)) keep[i] = 1;
    if (IsHtaMemory(trace.str(e.name[row.event])) && in_a_step(row.time.start_ns)) {
      keep[i] = 1;
      if (!row.carries_stream) {
        row.carries_stream = true;
        row.stream = trace.tracks()[e.track[row.event]].tid.value;
      }
    }
  }
  std::vector<HtaRow> kept;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (keep[i]) kept.push_back(rows[i]);
  }
  return kept;
}

// Distinct ProfilerStep#N symbols over every rank (HTA's symbol table is shared by all ranks and holds
// names and categories alike).
// Adds the trace's ProfilerStep names (HTA's rows' names and categories) to `names`, until it holds two:
// HTA filters steps when a run has two or more.
void AddStepNames(const Trace& trace, std::set<std::string, std::less<>>* names) {
  const EventTable& e = trace.events();
  const HtaRowNames row_names(trace);
  for (uint32_t i = 0; i < e.size() && names->size() < 2; ++i) {
    if (!row_names.IsRow(e, i)) continue;
    for (StringId id : {e.name[i], e.category[i]}) {
      std::string_view text = trace.str(id);
      if (IsProfilerStepName(text) && !names->contains(text)) names->emplace(text);
    }
  }
}

size_t CountStepNames(std::span<const Trace> traces) {
  std::set<std::string, std::less<>> names;
  for (const Trace& trace : traces) AddStepNames(trace, &names);
  return names.size();
}

// numpy.percentile's linear interpolation (numpy 1.24 _lerp, exact at both ends).
double Quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double t = position - static_cast<double>(below);
  const double a = sorted[below], b = sorted[above];
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

// Moves `tmp` down the 1-based heap a[1..n] from slot `i` to a slot whose children it is not less than.
template <typename Less>
void SiftDown(size_t* a, std::ptrdiff_t i, std::ptrdiff_t n, size_t tmp, Less less) {
  for (std::ptrdiff_t j = i << 1; j <= n; j += j) {
    if (j < n && less(a[j], a[j + 1])) j += 1;
    if (!less(tmp, a[j])) break;
    a[i] = a[j];
    i = j;
  }
  a[i] = tmp;
}

// numpy/core/src/npysort/heapsort.cpp aheapsort_: the fallback when quicksort recurses too deep.
void HeapsortIndices(const std::vector<int64_t>& v, size_t* tosort, std::ptrdiff_t n) {
  size_t* a = tosort - 1;  // 1-based heap
  auto less = [&](size_t x, size_t y) { return v[x] < v[y]; };
  for (std::ptrdiff_t l = n >> 1; l > 0; --l) SiftDown(a, l, n, a[l], less);
  while (n > 1) {
    const size_t tmp = a[n];
    a[n] = a[1];
    n -= 1;
    SiftDown(a, 1, n, tmp, less);
  }
}

int MostSignificantBit(size_t n) {
  int depth = 0;
  while (n >>= 1) ++depth;
  return depth;
}

}  // namespace

std::vector<const HtaRow*> InFileOrder(const HtaRankRows& rank) {
  std::vector<const HtaRow*> rows;
  rows.reserve(rank.rows.size());
  for (const HtaRow& row : rank.rows) rows.push_back(&row);
  const std::vector<uint64_t>& offset = rank.trace->events().source_offset;
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const HtaRow* a, const HtaRow* b) { return offset[a->event] < offset[b->event]; });
  return rows;
}

// numpy/core/src/npysort/quicksort.cpp aquicksort_ (numpy 1.24), step for step: median-of-3
// partitioning while a range has more than SMALL_QUICKSORT (15) + 1 elements, insertion sort below,
// heapsort past 2 * log2(n) levels.
std::vector<size_t> ArgsortLikeNumpy(const std::vector<int64_t>& v) {
  constexpr std::ptrdiff_t kSmallQuicksort = 15;
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (v.size() < 2) return order;
  auto less = [&](size_t x, size_t y) { return v[x] < v[y]; };
  size_t* pl = order.data();
  size_t* pr = order.data() + order.size() - 1;
  std::vector<std::pair<size_t*, size_t*>> stack;
  std::vector<int> depths;
  int cdepth = MostSignificantBit(v.size()) * 2;
  for (;;) {
    if (cdepth < 0) {
      HeapsortIndices(v, pl, pr - pl + 1);
    } else {
      while (pr - pl > kSmallQuicksort) {
        size_t* pm = pl + ((pr - pl) >> 1);
        if (less(*pm, *pl)) std::swap(*pm, *pl);
        if (less(*pr, *pm)) std::swap(*pr, *pm);
        if (less(*pm, *pl)) std::swap(*pm, *pl);
        const size_t vp = *pm;
        size_t* pi = pl;
        size_t* pj = pr - 1;
        std::swap(*pm, *pj);
        for (;;) {
          do ++pi;
          while (less(*pi, vp));
          do --pj;
          while (less(vp, *pj));
          if (pi >= pj) break;
          std::swap(*pi, *pj);
        }
        std::swap(*pi, *(pr - 1));
        if (pi - pl < pr - pi) {  // the larger part waits on the stack
          stack.emplace_back(pi + 1, pr);
          pr = pi - 1;
        } else {
          stack.emplace_back(pl, pi - 1);
          pl = pi + 1;
        }
        depths.push_back(--cdepth);
      }
      for (size_t* pi = pl + 1; pi <= pr; ++pi) {
        const size_t vi = *pi;
        size_t* pj = pi;
        size_t* pk = pi - 1;
        while (pj > pl && v[vi] < v[*pk]) *pj-- = *pk--;
        *pj = vi;
      }
    }
    if (stack.empty()) break;
    std::tie(pl, pr) = stack.back();
    stack.pop_back();
    cdepth = depths.back();
    depths.pop_back();
  }
  return order;
}

HtaKernelType HtaKernelTypeOf(std::string_view name) {
  if (IsHtaCommunication(name)) return HtaKernelType::kCommunication;
  if (IsHtaMemory(name)) return HtaKernelType::kMemory;
  if (IsHtaComputation(name)) return HtaKernelType::kComputation;
  return HtaKernelType::kOther;
}

std::string_view HtaKernelTypeName(HtaKernelType type) {
  static constexpr std::array<std::string_view, 4> kNames = {"COMMUNICATION", "MEMORY", "COMPUTATION", "OTHER"};
  return EnumName(type, kNames, "OTHER");
}

std::vector<HtaRow> ReadIntervalsLikeHta(const Trace& trace) {
  return ReadRows(trace, HtaClock(trace), /*every_interval=*/true);
}

std::vector<HtaRankRows> LoadLikeHta(std::span<const Trace> traces) {
  const bool filter_steps = CountStepNames(traces) >= 2;
  const bool mtia = IsMtiaRun(traces);
  std::vector<HtaRankRows> ranks;
  for (const Trace& trace : traces) {
    HtaRankRows rank;
    rank.trace = &trace;
    const HtaClock clock(trace);
    rank.rounded_to_us = clock.rounds();
    rank.last_step_dropped = filter_steps && !mtia;
    rank.rows = ReadRows(trace, clock);
    if (filter_steps) {
      rank.rows =
          mtia ? FilterLikeHtaMtia(trace, std::move(rank.rows)) : DropLastStepLikeHta(trace, std::move(rank.rows));
    }
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

HtaRankShape ShapeOfRankForHta(const Trace& trace) {
  HtaRankShape shape;
  shape.mtia = IsMtiaRun(std::span<const Trace>(&trace, 1));
  std::set<std::string, std::less<>> names;
  AddStepNames(trace, &names);
  shape.step_names.assign(names.begin(), names.end());
  return shape;
}

HtaRunShape CombineHtaShapes(std::span<const HtaRankShape> ranks) {
  std::set<std::string_view> names;
  for (const HtaRankShape& rank : ranks) names.insert(rank.step_names.begin(), rank.step_names.end());
  if (names.size() < 2) return HtaRunShape::kAllRows;
  return ranks.front().mtia ? HtaRunShape::kMtiaFiltered : HtaRunShape::kLastStepDropped;
}

// Each filtered shape is made from a copy of every row and dropped once handed over: three shapes held
// together were most of `memory --json`'s peak on a large trace.
void ForEachRankShapeLikeHta(const Trace& trace, const std::function<void(HtaRunShape, const HtaRankRows&)>& each) {
  const HtaClock clock(trace);
  HtaRankRows all;
  all.trace = &trace;
  all.rounded_to_us = clock.rounds();
  all.rows = ReadRows(trace, clock);
  {
    HtaRankRows dropped = all;
    dropped.last_step_dropped = true;
    dropped.rows = DropLastStepLikeHta(trace, std::move(dropped.rows));
    each(HtaRunShape::kLastStepDropped, dropped);
  }
  {
    HtaRankRows mtia = all;
    mtia.rows = FilterLikeHtaMtia(trace, std::move(mtia.rows));
    each(HtaRunShape::kMtiaFiltered, mtia);
  }
  each(HtaRunShape::kAllRows, all);
}

std::string_view HtaRowName(const HtaRankRows& rank, const HtaRow& row) {
  return rank.trace->str(rank.trace->events().name[row.event]);
}

// Ties are ordered by end, as in the reference re-derivation.
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

double RoundLikePandas(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::nearbyint(value * scale) / scale;
}

// pandas nanops: mean = sum / n; variance by two passes around the mean.
HtaDescribe DescribeLikePandas(std::vector<double> values) {
  HtaDescribe d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (values.size() >= 2) {
    double squares = 0;
    for (double v : values) squares += (v - d.mean) * (v - d.mean);
    d.std = std::sqrt(squares / (n - 1));
    d.has_std = true;
  }
  d.min = values.front();
  d.max = values.back();
  d.p25 = Quantile(values, 0.25);
  d.p50 = Quantile(values, 0.5);
  d.p75 = Quantile(values, 0.75);
  return d;
}

}  // namespace tuneprof

// The kernel / operator tables and HTA's kernel types, idle time, launch stats and queue length.
#include "report/console/profile_report_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "base/enum_names.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"
#include "report/common/names.h"

namespace tuneprof::profile_sections {
namespace {

constexpr size_t kTextTopRows = 10;
constexpr size_t kJsonTopRows = 50;

std::string_view ShortWork(WorkClass work) {
  static constexpr std::array<std::string_view, 5> kShort = {"comp", "comm", "mem", "other", "fused"};
  static_assert(kShort.size() == static_cast<size_t>(WorkClass::kCount));
  return EnumName(work, kShort, "other");
}

// The names of the rows a table shows, told apart (names.h); whole with `wide`.
std::vector<std::string> ShownNames(const std::vector<KernelRow>& rows, size_t limit, size_t width, bool wide) {
  std::vector<std::string> names;
  for (size_t i = 0; i < rows.size() && i < limit; ++i) names.push_back(EscapeText(rows[i].name));
  return DistinctShortNames(names, wide ? 0 : width);
}

void AppendDeviceKernelRows(std::string_view title, const std::vector<KernelRow>& rows, size_t limit, bool wide,
                            std::string* out) {
  const std::vector<std::string> names = ShownNames(rows, limit, 31, wide);
  *out += fmt::format("  {:<32}{:>6}{:>8}{:>10}{:>9}{:>9}{:>9}{:>8}{:>7}\n", title, "type", "count", "total ms",
                      "mean us", "min us", "max us", "std us", "share");
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    const KernelRow& r = rows[i];
    // Each number after a space of its own: one too wide for its column (a 3 s operator's mean in us)
    // shifts the row instead of running into its neighbour.
    *out += fmt::format("  {:<32}{:>6} {:>7} {:>9.3f} {:>8.1f} {:>8.1f} {:>8.1f} {:>7.1f}{:>6.1f}%\n", names[i],
                        r.mixed_work ? "mixed" : ShortWork(r.work), r.count, Millis(r.total_ns), Micros(r.mean_ns),
                        Micros(r.min_ns), Micros(r.max_ns), Micros(r.stddev_ns), r.share * 100);
  }
  if (rows.size() > limit) *out += fmt::format("  ... {} more\n", rows.size() - limit);
}

void AppendHostOpRows(const std::vector<KernelRow>& rows, bool wide, std::string* out) {
  const std::vector<std::string> names = ShownNames(rows, kTextTopRows, 37, wide);
  *out += fmt::format("  {:<38}{:>8}{:>11}{:>11}{:>9}{:>9}{:>7}\n", "host op (no device work)", "count", "self ms",
                      "incl ms", "mean us", "max us", "share");
  for (size_t i = 0; i < rows.size() && i < kTextTopRows; ++i) {
    const KernelRow& r = rows[i];
    *out += fmt::format("  {:<38} {:>7} {:>10.3f} {:>10.3f} {:>8.1f} {:>8.1f}{:>6.1f}%\n", names[i], r.count,
                        Millis(r.total_ns), Millis(r.inclusive_ns), Micros(r.mean_ns), Micros(r.max_ns), r.share * 100);
  }
  if (rows.size() > kTextTopRows) *out += fmt::format("  ... {} more\n", rows.size() - kTextTopRows);
}

void WriteKernelRowsJson(const std::vector<KernelRow>& rows, bool host_ops, JsonWriter* w) {
  w->BeginArray();
  for (size_t i = 0; i < rows.size() && i < kJsonTopRows; ++i) {
    const KernelRow& r = rows[i];
    w->BeginObject().Key("name").String(r.name);
    w->Key("work").String(host_ops       ? std::string_view("host_op")
                          : r.mixed_work ? std::string_view("mixed")
                                         : WorkClassName(r.work));
    w->Key("count").Uint(r.count);
    w->Key("total_us").Double(Micros(r.total_ns));
    w->Key("mean_us").Double(Micros(r.mean_ns));
    w->Key("min_us").Double(Micros(r.min_ns));
    w->Key("max_us").Double(Micros(r.max_ns));
    w->Key("stddev_us").Double(Micros(r.stddev_ns));
    w->Key("share").Double(r.share);
    if (host_ops) w->Key("inclusive_us").Double(Micros(r.inclusive_ns));
    w->EndObject();
  }
  w->EndArray();
}

// pandas' describe() as HTA writes it, after the count.
constexpr std::pair<std::string_view, double HtaDescribe::*> kDescribeFields[] = {
    {"mean", &HtaDescribe::mean}, {"std", &HtaDescribe::std}, {"min", &HtaDescribe::min}, {"p25", &HtaDescribe::p25},
    {"p50", &HtaDescribe::p50},   {"p75", &HtaDescribe::p75}, {"max", &HtaDescribe::max},
};

void WriteDescribeJson(const HtaDescribe& d, JsonWriter* w) {
  const bool any = d.count > 0;
  w->BeginObject().Key("count").Uint(d.count);
  for (const auto& [key, field] : kDescribeFields) {
    // pandas leaves the standard deviation of one value undefined; every figure of no values.
    const bool present = field == &HtaDescribe::std ? d.has_std : any;
    JsonNumberField(*w, key, present ? std::optional<double>(d.*field) : std::nullopt);
  }
  w->EndObject();
}

}  // namespace

void AppendKernelText(const KernelBreakdown& k, bool wide, std::string* out) {
  if (k.kernels.empty()) return;
  if (k.source == KernelTableSource::kHostOps) {
    AppendHostOpRows(k.kernels, wide, out);
    return;
  }
  AppendDeviceKernelRows("top kernels (device time)", k.kernels, kTextTopRows, wide, out);
  AppendDeviceKernelRows("by work type", k.by_work, k.by_work.size(), wide, out);
  AppendDeviceKernelRows("by launching host op", k.by_host_op, 5, wide, out);
}

void AppendHtaExtrasText(const ProfileResult& result, size_t rank_index, std::string* out) {
  const int64_t rank = result.ranks[rank_index].rank;
  if (rank_index < result.hta_kernels.types_by_rank.size()) {
    std::string types;
    for (const HtaKernelTypeShare& t : result.hta_kernels.types_by_rank[rank_index]) {
      types += fmt::format("\n      {:<58}{:>12.0f} us {:>6.1f}%", EscapeText(t.kernel_type), t.sum_us, t.percentage);
    }
    if (!types.empty()) *out += "    kernel types:" + types + "\n";
  }
  std::string idle;
  for (const HtaIdleRow& r : result.hta_idle) {
    if (r.rank != rank) continue;
    idle += fmt::format("\n      stream {:<8} {:<12}{:>12.0f} us  gaps: {}", r.stream, HtaIdleCategoryName(r.category),
                        r.idle_us, r.intervals.count);
  }
  if (!idle.empty()) *out += "    idle time (gap before each kernel, 30 us threshold):" + idle + "\n";
  for (const HtaLaunchSummary& l : result.hta_launches.summaries) {
    if (l.rank != rank) continue;
    *out += fmt::format(
        "    launches: {}  cpu mean {:.1f} us  gpu mean {:.1f} us  launch delay mean {:.1f} / max {:.0f} us\n"
        "      runtime > 50 us: {}  launch delay > 100 us: {}  short kernels: {}\n",
        l.cpu_duration_us.count, l.cpu_duration_us.mean, l.gpu_duration_us.mean, l.launch_delay_us.mean,
        l.launch_delay_us.max, l.runtime_outliers, l.launch_delay_outliers, l.short_kernels);
  }
  for (const HtaQueueLength& q : result.hta_launches.queues) {
    if (q.rank != rank) continue;
    *out += fmt::format("    queue length stream {}: max {:.0f}  median {:.1f}  mean {:.2f} ({} changes)\n", q.stream,
                        q.queue_length.max, q.queue_length.p50, q.queue_length.mean, q.queue_length.count);
  }
}

// `kernels`: top device kernels (or host ops by self time for CPU-only traces), at most 50 rows each.
void WriteKernelsJson(const KernelBreakdown& k, JsonWriter* w) {
  const bool host_ops = k.source == KernelTableSource::kHostOps;
  w->Key("kernels");
  WriteKernelRowsJson(k.kernels, host_ops, w);
  w->Key("kernel_table").BeginObject();
  w->Key("source").String(host_ops ? "host_ops_self_time" : "device_work");
  w->Key("total_us").Double(Micros(k.total_ns));
  w->Key("names").Uint(k.kernels.size());
  w->Key("by_work");
  WriteKernelRowsJson(k.by_work, false, w);
  w->Key("by_host_op");
  WriteKernelRowsJson(k.by_host_op, false, w);
  w->EndObject();
}

void WriteKernelTypesJson(const std::vector<HtaKernelTypeShare>& types, JsonWriter* w) {
  w->BeginArray();
  for (const HtaKernelTypeShare& t : types) {
    w->BeginObject().Key("kernel_type").String(t.kernel_type).Key("sum_us").Double(t.sum_us);
    w->Key("percentage").Double(t.percentage).EndObject();
  }
  w->EndArray();
}

// HTA's kernel types (this rank alone), idle time per stream, launch stats summary and queue length.
void WriteHtaExtrasJson(const ProfileResult& result, size_t rank_index, JsonWriter* w) {
  const int64_t rank = result.ranks[rank_index].rank;
  w->Key("kernel_type_breakdown");
  if (rank_index < result.hta_kernels.types_by_rank.size()) {
    WriteKernelTypesJson(result.hta_kernels.types_by_rank[rank_index], w);
  } else {
    w->Null();
  }
  w->Key("idle_time_breakdown").BeginArray();
  for (const HtaIdleRow& r : result.hta_idle) {
    if (r.rank != rank) continue;
    w->BeginObject().Key("stream").Int(r.stream).Key("idle_category").String(HtaIdleCategoryName(r.category));
    w->Key("idle_us").Double(r.idle_us).Key("idle_time_ratio");
    JsonNumberOrNull(*w, r.ratio);
    w->Key("intervals_us");
    WriteDescribeJson(r.intervals, w);
    w->EndObject();
  }
  w->EndArray();
  w->Key("launch_stats");
  auto summary = std::find_if(result.hta_launches.summaries.begin(), result.hta_launches.summaries.end(),
                              [&](const HtaLaunchSummary& l) { return l.rank == rank; });
  if (summary == result.hta_launches.summaries.end()) {
    w->Null();
  } else {
    w->BeginObject().Key("launches").Uint(summary->cpu_duration_us.count);
    w->Key("cpu_duration_us");
    WriteDescribeJson(summary->cpu_duration_us, w);
    w->Key("gpu_duration_us");
    WriteDescribeJson(summary->gpu_duration_us, w);
    w->Key("launch_delay_us");
    WriteDescribeJson(summary->launch_delay_us, w);
    w->Key("runtime_outliers").Uint(summary->runtime_outliers);
    w->Key("launch_delay_outliers").Uint(summary->launch_delay_outliers);
    w->Key("short_kernels").Uint(summary->short_kernels);
    w->EndObject();
  }
  w->Key("queue_length_summary").BeginArray();
  for (const HtaQueueLength& q : result.hta_launches.queues) {
    if (q.rank != rank) continue;
    w->BeginObject().Key("stream").Int(q.stream).Key("queue_length");
    WriteDescribeJson(q.queue_length, w);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace tuneprof::profile_sections

#include "report/console/memory_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"
#include "base/json_writer.h"
#include "report/console/category_report.h"
#include "report/console/snapshot_report.h"

namespace tuneprof {
namespace {

constexpr size_t kTextHolders = 8;
constexpr size_t kTextSuspects = 5;
constexpr size_t kTextInPlace = 5;
constexpr size_t kJsonHolders = 20;
constexpr size_t kHardwareRoom = 88;  // "  hardware: " + a line of this fits 100 columns

std::string OrNone(std::string_view op) { return op.empty() ? std::string("(no enclosing op)") : std::string(op); }

// ---- text

void AppendPeak(const DeviceMemory& d, int64_t trace_start_ns, std::string* out) {
  if (d.event_count > 0) {
    *out += fmt::format("  allocations {} ({}), frees {} ({}), {} events\n", d.alloc_count, FormatBytes(d.alloc_bytes),
                        d.free_count, FormatBytes(d.free_bytes), d.event_count);
  } else if (d.alloc_count > 0) {
    *out += fmt::format("  allocations {} ({}), frees {} ({}), from {}\n", d.alloc_count, FormatBytes(d.alloc_bytes),
                        d.free_count, FormatBytes(d.free_bytes), d.blocks_source);
  }
  // Without allocator events (memory_record.csv) there is no thread to find the running op on; an
  // operator_memory row allocated at the peak instant names it.
  const std::string op = d.event_count == 0 && d.peak_op.empty() ? std::string("unknown") : OrNone(d.peak_op);
  // Relative to the first interval; on the trace's own clock when the trace has no intervals.
  const std::string when =
      trace_start_ns == kNoId
          ? fmt::format("{:.3f} us", Micros(d.peak_allocated_ns))
          : fmt::format("+{:.3f} ms", static_cast<double>(d.peak_allocated_ns - trace_start_ns) / 1e6);
  *out += fmt::format("  peak allocated {} at {}, step {}, op {}\n", FormatBytes(d.peak_allocated_bytes), when,
                      d.peak_step == kNoId ? "none" : std::to_string(d.peak_step), Fit(op, 40));
  const std::string reserved =
      d.peak_reserved_bytes == kNoId ? std::string("unknown") : FormatBytes(d.peak_reserved_bytes);
  *out += fmt::format("  peak reserved  {}   fragmentation at peak {} ({})\n", reserved,
                      FormatBytes(d.fragmentation_bytes), PercentCell(d.fragmentation_ratio, 1, kUnknownText));
  if (d.event_count == 0 && d.alloc_count == 0) return;
  *out += fmt::format("  live at peak: {} allocated in the trace, {} before it\n",
                      FormatBytes(d.live_at_peak_known_bytes), FormatBytes(d.live_at_peak_unattributed_bytes));
}

// The peak by category, and the strategies that follow the one holding it.
void AppendCategories(const DeviceMemory& d, std::string* out) {
  if (!d.categories_at_peak) return;
  const CategoryBytes& at_peak = *d.categories_at_peak;
  // An inference trace, or one whose blocks were allocated before it: one line rather than a table of one row.
  if (at_peak.bytes[static_cast<size_t>(MemoryCategory::kUnknown)] == at_peak.Total()) {
    *out += "  at the peak by category: all unknown (no backward, optimizer or first step around its blocks)\n";
    return;
  }
  *out += "  at the peak by category (from the host ranges around each block):\n";
  AppendCategoryTable(*d.categories_at_peak, nullptr, d.peak_allocated_bytes, "    ", out);
  AppendSnapshotStrategies(d.category_strategies, out);
}

void AppendComponents(const DeviceMemory& d, std::string* out) {
  if (d.components.empty()) return;
  // The components' table is named as the peak's source names it (memory_record.csv, or the Db's MEMORY_RECORD).
  const std::string_view table = d.peak_source.ends_with(" PTA")
                                     ? std::string_view(d.peak_source).substr(0, d.peak_source.size() - 4)
                                     : std::string_view("memory_record.csv");
  *out += fmt::format("  {:<20}{:>10}{:>20}{:>20}\n", table, "samples", "peak allocated", "peak reserved");
  for (const ComponentMemory& c : d.components) {
    *out += fmt::format("  {:<20}{:>10}{:>20}{:>20}\n", Fit(c.component, 19), c.samples,
                        FormatBytes(c.peak_allocated_bytes), FormatBytes(c.peak_reserved_bytes));
  }
}

void AppendHolders(const DeviceMemory& d, std::string* out) {
  if (d.holders.empty()) return;
  *out += fmt::format("  {:<50}{:>14}{:>8}{:>16}\n", "held at peak by (allocating op)", "bytes", "blocks",
                      "longest life ms");
  for (size_t i = 0; i < d.holders.size() && i < kTextHolders; ++i) {
    const PeakHolder& h = d.holders[i];
    *out += fmt::format("  {:<50}{:>14}{:>8}{:>16.3f}\n", Fit(OrNone(h.op), 49), FormatBytes(h.bytes), h.blocks,
                        static_cast<double>(h.longest_lifetime_ns) / 1e6);
  }
  // The rows left out still hold part of the peak: their sum closes the table.
  if (d.holders.size() <= kTextHolders) return;
  int64_t rest_bytes = 0, rest_blocks = 0;
  for (size_t i = kTextHolders; i < d.holders.size(); ++i) {
    rest_bytes += d.holders[i].bytes;
    rest_blocks += d.holders[i].blocks;
  }
  *out += fmt::format("  {:<50}{:>14}{:>8}\n", fmt::format("... {} more:", d.holders.size() - kTextHolders),
                      FormatBytes(rest_bytes), rest_blocks);
}

void AppendSteps(const DeviceMemory& d, std::string* out) {
  if (d.steps.empty()) return;
  *out += fmt::format("  {:<8}{:>10}{:>14}{:>10}{:>14}{:>14}{:>14}{:>12}\n", "step", "allocs", "alloc bytes", "frees",
                      "free bytes", "step peak", "at end", "malloc ms");
  for (const StepMemory& s : d.steps) {
    *out += fmt::format("  #{:<7}{:>10}{:>14}{:>10}{:>14}{:>14}{:>14}{:>12}\n", s.step, s.alloc_count,
                        FormatBytes(s.alloc_bytes), s.free_count, FormatBytes(s.free_bytes),
                        FormatBytes(s.peak_allocated_bytes), FormatBytes(s.allocated_at_end_bytes),
                        s.allocator_call_ns == kNoId
                            ? std::string("unknown")
                            : fmt::format("{:.3f}", static_cast<double>(s.allocator_call_ns) / 1e6));
  }
}

void AppendOpportunities(const DeviceMemory& d, std::string* out) {
  for (size_t i = 0; i < d.leak_suspects.size() && i < kTextSuspects; ++i) {
    const LeakSuspect& s = d.leak_suspects[i];
    *out += fmt::format("  leak suspect: {} grows {} over {} steps\n", Fit(OrNone(s.op), 50),
                        FormatBytes(s.growth_bytes), s.alive_bytes_at_step_end.size());
  }
  const ReusePlan& r = d.reuse;
  if (r.blocks > 0) {
    *out += fmt::format("  reuse plan ({}): peak {}, observed {} {}\n", r.strategy, FormatBytes(r.plan_peak_bytes),
                        r.observed_is_reserved ? "reserved" : "allocated", FormatBytes(r.observed_peak_bytes));
    *out += fmt::format("    no plan goes below the most bytes alive at once: {}\n", FormatBytes(r.max_live_bytes));
    if (r.stopped_after_blocks != kNoId) {
      *out += fmt::format(
          "    reuse plan: stopped after {} of {} blocks (budget); the peak above is the best plan completed\n",
          r.stopped_after_blocks, r.blocks);
    }
  }
  for (size_t i = 0; i < d.in_place.size() && i < kTextInPlace; ++i) {
    const InPlaceCandidate& c = d.in_place[i];
    *out += fmt::format("  in-place candidate: {} x{} would save {} of allocations\n", Fit(c.op, 40), c.count,
                        FormatBytes(c.bytes));
  }
}

void AppendCopies(const DeviceMemory& d, std::string* out) {
  if (d.copies.empty()) return;
  *out += fmt::format("  {:<8}{:>8}{:>14}{:>12}{:>10}{:>10}{:>9}{:>9}{:>10}\n", "copies", "count", "bytes", "time ms",
                      "GB/s", "peak", "util", "pageable", "pinned");
  for (const CopyTraffic& c : d.copies) {
    *out += fmt::format("  {:<8}{:>8}{:>14}{:>12.3f}{:>10}{:>10}{:>9}{:>9}{:>10}\n", c.kind, c.count,
                        FormatBytes(c.bytes), static_cast<double>(c.time_ns) / 1e6,
                        c.achieved_gbps ? fmt::format("{:.2f}", *c.achieved_gbps) : "unknown",
                        c.peak_gbps ? fmt::format("{:.0f}", *c.peak_gbps) : "unknown",
                        PercentCell(c.utilization, 1, kUnknownText), c.pageable_count, c.pinned_count);
  }
  *out += fmt::format("  device-memory bandwidth utilization (D2D + memset): {}\n",
                      PercentCell(DeviceMemoryUtilization(d), 1, kUnknownText));
}

// ---- json

void WriteHolders(JsonWriter& w, const DeviceMemory& d) {
  w.Key("top_holders").BeginArray();
  for (size_t i = 0; i < d.holders.size() && i < kJsonHolders; ++i) {
    const PeakHolder& h = d.holders[i];
    w.BeginObject().Key("op").String(h.op).Key("bytes").Int(h.bytes).Key("blocks").Int(h.blocks);
    w.Key("first_alloc_us").Double(Micros(h.first_alloc_ns));
    w.Key("longest_lifetime_us").Double(Micros(h.longest_lifetime_ns));
    w.Key("never_freed_blocks").Int(h.never_freed_blocks).EndObject();
  }
  w.EndArray();
  w.Key("largest_live_blocks").BeginArray();
  for (const LiveBlock& b : d.largest_live_blocks) {
    w.BeginObject();
    JsonIdField(w, "address", b.address);
    w.Key("bytes").Int(b.bytes).Key("op").String(b.op);
    w.Key("alloc_us").Double(Micros(b.alloc_ns));
    JsonMicrosField(w, "free_us", b.free_ns);
    w.EndObject();
  }
  w.EndArray();
}

// The allocator's churn and the peak it reached, as a device and each of its steps count them alike.
template <class Churn>
void WriteChurnAndPeak(JsonWriter& w, const Churn& c) {
  w.Key("alloc_count").Int(c.alloc_count).Key("alloc_bytes").Int(c.alloc_bytes);
  w.Key("free_count").Int(c.free_count).Key("free_bytes").Int(c.free_bytes);
  JsonIdField(w, "peak_allocated_bytes", c.peak_allocated_bytes);
}

void WriteSteps(JsonWriter& w, const DeviceMemory& d) {
  w.Key("steps").BeginArray();
  for (const StepMemory& s : d.steps) {
    w.BeginObject().Key("step").Int(s.step);
    WriteChurnAndPeak(w, s);
    JsonIdField(w, "allocated_at_end_bytes", s.allocated_at_end_bytes);
    JsonMicrosField(w, "allocator_call_us", s.allocator_call_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("leak_suspects").BeginArray();
  for (const LeakSuspect& s : d.leak_suspects) {
    w.BeginObject().Key("op").String(s.op).Key("growth_bytes").Int(s.growth_bytes);
    w.Key("alive_bytes_at_step_end").BeginArray();
    for (int64_t bytes : s.alive_bytes_at_step_end) w.Int(bytes);
    w.EndArray().EndObject();
  }
  w.EndArray();
}

void WriteOpportunities(JsonWriter& w, const DeviceMemory& d) {
  const ReusePlan& r = d.reuse;
  w.Key("reuse").BeginObject();
  JsonIdField(w, "plan_peak_bytes", r.plan_peak_bytes);
  JsonIdField(w, "max_live_bytes", r.max_live_bytes);
  JsonIdField(w, "observed_peak_bytes", r.observed_peak_bytes);
  w.Key("observed_is_reserved").Bool(r.observed_is_reserved);
  JsonIdField(w, "saving_bytes", r.saving_bytes);
  w.Key("blocks").Int(r.blocks);
  JsonIdField(w, "stopped_after_blocks", r.stopped_after_blocks);
  w.Key("strategy").String(r.strategy).EndObject();
  w.Key("in_place").BeginArray();
  for (const InPlaceCandidate& c : d.in_place) {
    w.BeginObject().Key("op").String(c.op).Key("count").Int(c.count).Key("bytes").Int(c.bytes);
    w.Key("largest_bytes").Int(c.largest_bytes).EndObject();
  }
  w.EndArray();
}

void WriteCopies(JsonWriter& w, const DeviceMemory& d) {
  w.Key("copies").BeginArray();
  for (const CopyTraffic& c : d.copies) {
    w.BeginObject().Key("kind").String(c.kind).Key("count").Int(c.count);
    w.Key("bytes").Int(c.bytes).Key("unknown_size_count").Int(c.unknown_size_count);
    w.Key("time_us").Double(Micros(c.time_ns)).Key("busy_us").Double(Micros(c.busy_ns));
    JsonNumberField(w, "achieved_gbps", c.achieved_gbps);
    w.Key("pageable_count").Int(c.pageable_count).Key("pinned_count").Int(c.pinned_count);
    JsonNumberField(w, "peak_gbps", c.peak_gbps);
    JsonTextField(w, "peak_source", c.peak_source);
    JsonNumberField(w, "utilization", c.utilization);
    w.EndObject();
  }
  w.EndArray();
  JsonNumberField(w, "bandwidth_utilization", DeviceMemoryUtilization(d));
}

// null without [memory] events with totals (and for a device read from a summary of format 4 or older).
void WriteCategories(JsonWriter& w, const DeviceMemory& d) {
  w.Key("categories");
  if (!d.categories_at_peak) {
    w.Null();
    return;
  }
  w.BeginObject().Key("at_peak");
  WriteCategoryBytes(w, *d.categories_at_peak);
  w.Key("timeline").BeginArray();
  for (const CategoryBytes& point : d.timeline_categories) {
    w.BeginArray();
    for (const int64_t bytes : point.bytes) w.Int(bytes);
    w.EndArray();
  }
  w.EndArray().Key("strategies");
  WriteSnapshotStrategies(w, d.category_strategies);
  w.EndObject();
}

void WriteDevice(JsonWriter& w, const DeviceMemory& d) {
  w.BeginObject().Key("device").String(d.device).Key("event_count").Int(d.event_count);
  WriteChurnAndPeak(w, d);
  JsonIdField(w, "peak_reserved_bytes", d.peak_reserved_bytes);
  JsonMicrosField(w, "peak_time_us", d.peak_allocated_ns);
  JsonIdField(w, "peak_time_ns", d.peak_allocated_ns);
  JsonMicrosField(w, "peak_reserved_time_us", d.peak_reserved_ns);
  JsonIdField(w, "peak_step", d.peak_step);
  JsonTextField(w, "peak_op", d.peak_op);
  JsonTextField(w, "peak_source", d.peak_source);
  JsonTextField(w, "blocks_source", d.blocks_source);
  JsonIdField(w, "fragmentation_bytes", d.fragmentation_bytes);
  JsonNumberField(w, "fragmentation_ratio", d.fragmentation_ratio);
  w.Key("live_at_peak_known_bytes").Int(d.live_at_peak_known_bytes);
  w.Key("live_at_peak_unattributed_bytes").Int(d.live_at_peak_unattributed_bytes);
  WriteCategories(w, d);
  WriteHolders(w, d);
  WriteSteps(w, d);
  WriteOpportunities(w, d);
  WriteCopies(w, d);
  w.Key("components").BeginArray();
  for (const ComponentMemory& c : d.components) {
    w.BeginObject().Key("component").String(c.component).Key("samples").Int(c.samples);
    JsonIdField(w, "peak_allocated_bytes", c.peak_allocated_bytes);
    JsonMicrosField(w, "peak_allocated_time_us", c.peak_allocated_ns);
    JsonIdField(w, "peak_reserved_bytes", c.peak_reserved_bytes);
    JsonMicrosField(w, "peak_reserved_time_us", c.peak_reserved_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Key("timeline").BeginArray();
  for (const MemoryPoint& p : d.timeline) {
    w.BeginArray().Double(Micros(p.ts_ns)).Int(p.allocated_bytes);
    JsonIdOrNull(w, p.reserved_bytes);
    w.EndArray();
  }
  w.EndArray().EndObject();
}

void WriteHtaSummary(JsonWriter& w, const std::vector<HtaMemoryBwRow>& hta) {
  w.Key("hta_memory_bw_summary").BeginArray();
  for (const HtaMemoryBwRow& row : hta) {
    const HtaDescribe& d = row.memory_bw_gbps;
    w.BeginObject().Key("rank").Int(row.rank).Key("name").String(row.name).Key("count").Uint(d.count);
    w.Key("mean").Double(d.mean);
    JsonNumberField(w, "std", d.has_std ? std::optional<double>(d.std) : std::nullopt);
    w.Key("min").Double(d.min).Key("p25").Double(d.p25).Key("p50").Double(d.p50).Key("p75").Double(d.p75);
    w.Key("max").Double(d.max).EndObject();
  }
  w.EndArray();
}

}  // namespace

std::optional<double> DeviceMemoryUtilization(const DeviceMemory& device) {
  int64_t bytes = 0;
  int64_t time_ns = 0;
  std::optional<double> peak;
  for (const CopyTraffic& c : device.copies) {
    if (c.kind != "D2D" && c.kind != "memset") continue;
    bytes += c.bytes;
    time_ns += c.time_ns;
    peak = c.peak_gbps;
  }
  if (!peak || *peak <= 0 || time_ns <= 0) return std::nullopt;
  return static_cast<double>(bytes) / static_cast<double>(time_ns) / *peak;
}

std::string RenderMemoryText(const std::vector<MemoryAnalysis>& ranks) {
  std::string out;
  for (const MemoryAnalysis& rank : ranks) {
    // Long paths keep their tail (the part that names the rank) so the line fits 100 columns.
    const std::string head = fmt::format("rank {}  ", rank.rank);
    const size_t room = 100 - head.size();
    const std::string path = EscapeText(rank.path);
    out += head + (path.size() <= room ? path : "..." + path.substr(path.size() - (room - 3))) + "\n";
    // An inferred chip says so, and the reason of an unknown one is kept whole, on more lines where it
    // does not fit 100 columns: it names the --hardware to pass.
    std::string hardware = rank.hardware.profile ? rank.hardware.profile->name : "unknown (" + rank.hardware.how + ")";
    if (rank.hardware.inferred) hardware = rank.hardware.label;
    out += WrapText(hardware, kHardwareRoom, "  hardware: ", "            ");
    if (rank.devices.empty()) out += "  no memory events and no copies in this trace\n";
    for (const DeviceMemory& d : rank.devices) {
      out += fmt::format(" device {}\n", d.device);
      if (d.event_count == 0 && d.peak_allocated_bytes != kNoId) {
        out += fmt::format("  from {}:\n", d.peak_source);
        AppendPeak(d, rank.trace_start_ns, &out);
      }
      AppendComponents(d, &out);
      if (d.event_count == 0 && d.alloc_count > 0) {
        AppendHolders(d, &out);
        AppendSteps(d, &out);
        AppendOpportunities(d, &out);
      }
      if (d.event_count > 0) {
        AppendPeak(d, rank.trace_start_ns, &out);
        AppendCategories(d, &out);
        AppendHolders(d, &out);
        AppendSteps(d, &out);
        AppendOpportunities(d, &out);
      }
      AppendCopies(d, &out);
    }
  }
  return EscapeTextKeepingLines(out);
}

std::string RenderMemoryJson(const std::vector<MemoryAnalysis>& ranks, const std::vector<HtaMemoryBwRow>& hta) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("schema").String("tuneprof.memory/1").Key("ranks").BeginArray();
  for (const MemoryAnalysis& rank : ranks) {
    w.BeginObject().Key("rank").Int(rank.rank).Key("path").String(rank.path);
    w.Key("hardware").BeginObject().Key("name");
    if (rank.hardware.profile) {
      w.String(rank.hardware.profile->name);
    } else {
      w.Null();
    }
    w.Key("device_name").String(rank.hardware.device_name).Key("how").String(rank.hardware.how).EndObject();
    w.Key("devices").BeginArray();
    for (const DeviceMemory& d : rank.devices) WriteDevice(w, d);
    w.EndArray().EndObject();
  }
  w.EndArray();
  WriteHtaSummary(w, hta);
  w.EndObject();
  out += "\n";
  return out;
}

}  // namespace tuneprof

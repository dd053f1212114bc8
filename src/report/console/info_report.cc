#include "report/console/info_report.h"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include "base/enum_names.h"
#include "base/json_writer.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof {
namespace {

std::string_view RankSourceName(RankSource source) {
  static constexpr std::array<std::string_view, 3> kNames = {"trace", "path", "default"};
  return EnumName(source, kNames, "unknown");
}

// step_trace_time.csv's columns as the JSON names them, in the order it writes them.
constexpr std::pair<std::string_view, int64_t ReportedStepTime::*> kReportedStepFields[] = {
    {"device_id", &ReportedStepTime::device_id},
    {"step", &ReportedStepTime::step},
    {"computing_ns", &ReportedStepTime::computing_ns},
    {"communication_not_overlapped_ns", &ReportedStepTime::communication_not_overlapped_ns},
    {"overlapped_ns", &ReportedStepTime::overlapped_ns},
    {"communication_ns", &ReportedStepTime::communication_ns},
    {"free_ns", &ReportedStepTime::free_ns},
    {"stage_ns", &ReportedStepTime::stage_ns},
    {"bubble_ns", &ReportedStepTime::bubble_ns},
    {"communication_not_overlapped_exclude_receive_ns",
     &ReportedStepTime::communication_not_overlapped_exclude_receive_ns},
    {"preparing_ns", &ReportedStepTime::preparing_ns},
};

// step_trace_time.csv as the profiler reported it, ns; null where the file had no such column or cell.
void WriteReportedStep(const ReportedStepTime& r, JsonWriter* w) {
  w->BeginObject();
  for (const auto& [key, field] : kReportedStepFields) JsonIdField(*w, key, r.*field);
  w->EndObject();
}

std::string OrUnknown(int64_t value) { return value == kNoId ? "unknown" : std::to_string(value); }

// What the input was read as: JSON text has a decompressed size; an SQLite database (an Nsight Systems
// export, torch_npu's .db form, which reads no JSON) has only its size on disk.
std::string InputSize(const TraceSummary& s) {
  if (s.format == TraceFormat::kNsysSqlite)
    return FormatBytes(static_cast<int64_t>(s.file_bytes)) + " on disk (SQLite)";
  if (s.content_bytes == 0) return FormatBytes(static_cast<int64_t>(s.file_bytes)) + " on disk";
  return fmt::format("{} on disk, {} of JSON", FormatBytes(static_cast<int64_t>(s.file_bytes)),
                     FormatBytes(static_cast<int64_t>(s.content_bytes)));
}

// The table a rank without a timeline was read from, as its inventory names it.
std::string StepsTableName(const TraceSummary& s) {
  return s.steps_table.empty() ? "the profiler's step table" : EscapeText(s.steps_table);
}

// A rank without a timeline was not read from a trace_view: the format line names what it was read from.
void RenderFormatLine(const TraceSummary& s, std::string* out) {
  if (StepsFromTable(s)) {
    *out += fmt::format("  format      torch_npu tables without a timeline (step split from {}){}\n", StepsTableName(s),
                        s.truncated ? ", its timeline cut off and set aside" : "");
    return;
  }
  *out += fmt::format("  format      {}{}, {}, {} entries{}\n", TraceFormatName(s.format),
                      s.compressed ? " (gzip)" : "", InputSize(s), s.entry_count, s.truncated ? ", TRUNCATED" : "");
}

// The steps of the timeline's ProfilerStep#N ranges, else those of the profiler's table for a rank without a
// timeline, with the step every other command reads (Stage + Bubble).
void RenderStepsLine(const TraceSummary& s, std::string* out) {
  if (!s.step_numbers.empty()) {
    *out += fmt::format("  steps       {} (ProfilerStep#{}..#{})\n", s.step_numbers.size(), s.step_numbers.front(),
                        s.step_numbers.back());
  } else if (StepsFromTable(s)) {
    *out += fmt::format("  steps       {} (from {}, no timeline), Stage + Bubble mean {}\n",
                        s.table_step_numbers.size(), StepsTableName(s), FormatDuration(s.table_step_mean_ns));
  } else {
    *out += "  steps       none (whole trace is one window)\n";
  }
}

void RenderOneText(const TraceSummary& s, std::string* out) {
  *out += fmt::format("rank {} ({}): {}\n", s.rank, RankSourceName(s.rank_source), EscapeText(s.path));
  RenderFormatLine(s, out);
  if (s.world_size != kNoId || !s.backend.empty()) {
    *out += fmt::format("  cluster     world size {}, backend {}\n", OrUnknown(s.world_size),
                        s.backend.empty() ? "unknown" : EscapeText(s.backend));
  }
  if (s.start_ns != kNoId) {
    *out +=
        fmt::format("  span        {} ({} .. {} ns)\n", FormatDuration(s.end_ns - s.start_ns), s.start_ns, s.end_ns);
  } else {
    *out += "  span        unknown (no interval events)\n";
  }
  RenderStepsLine(s, out);
  for (const DeviceSummary& d : s.devices) {
    *out +=
        fmt::format("  device      {} {}: {}{}{}\n", DeviceTypeName(d.type), d.id == kNoId ? "?" : std::to_string(d.id),
                    d.name.empty() ? "name unknown" : EscapeText(d.name),
                    d.num_sms == kNoId ? "" : fmt::format(", {} SMs", d.num_sms),
                    d.total_memory_bytes == kNoId ? "" : ", " + FormatBytes(d.total_memory_bytes));
  }
  *out += fmt::format("  streams     {} on devices, {} host threads\n", s.streams.size(), s.host_threads);
  for (const StreamSummary& stream : s.streams) {
    *out += fmt::format("    {:<8} {:<28} {:>9} events\n", EscapeText(stream.device), EscapeText(stream.name),
                        stream.events);
  }
  *out += "  events     ";
  for (size_t k = 0; k < s.kind_counts.size(); ++k) {
    if (s.kind_counts[k] > 0) *out += fmt::format(" {} {}", EventKindName(static_cast<EventKind>(k)), s.kind_counts[k]);
  }
  *out += "\n";
  *out += fmt::format("  links       {} launch->device (correlation), {} flows\n", s.correlation_links, s.flow_links);
  *out += fmt::format(
      "  memory      {} allocator events; counters {} tracks, {} samples; communication kernels {}; events with "
      "collective arguments {}\n",
      s.memory_events, s.counter_tracks, s.counter_samples, s.communication_kernels, s.collectives);
  if (s.graph_launches > 0) {
    *out += fmt::format("  cuda graphs {} launches replayed {} device events ({} of device-work time)\n",
                        s.graph_launches, s.graph_replayed_events, PercentCell(s.graph_replayed_share));
  }
  if (s.kernel_details_rows != kNoId) {
    *out += fmt::format("  ascend      kernel_details {} rows; step_trace_time {} rows\n", s.kernel_details_rows,
                        s.reported_step_times.size());
  }
  for (const auto& [table, state] : s.inventory)
    *out += fmt::format("  inventory   {}: {}\n", EscapeText(table), EscapeText(state));
  for (const std::string& w : s.warnings) *out += fmt::format("  warning     {}\n", EscapeText(w));
}

// Each name with its count, as one object under `key`.
void WriteCounts(std::string_view key, const std::vector<std::pair<std::string, uint64_t>>& counts, JsonWriter* w) {
  w->Key(key).BeginObject();
  for (const auto& [name, count] : counts) w->Key(name).Uint(count);
  w->EndObject();
}

void WriteDevices(const std::vector<DeviceSummary>& devices, JsonWriter* w) {
  w->Key("devices").BeginArray();
  for (const DeviceSummary& d : devices) {
    w->BeginObject().Key("type").String(DeviceTypeName(d.type));
    JsonIdField(*w, "id", d.id);
    JsonTextField(*w, "name", d.name);
    JsonIdField(*w, "num_sms", d.num_sms);
    JsonIdField(*w, "total_memory_bytes", d.total_memory_bytes);
    w->EndObject();
  }
  w->EndArray();
}

// The rank's streams, host threads, event kinds and categories, links and side tables.
void WriteContents(const TraceSummary& s, JsonWriter* w) {
  w->Key("streams").BeginArray();
  for (const StreamSummary& stream : s.streams) {
    w->BeginObject().Key("device").String(stream.device).Key("name").String(stream.name);
    w->Key("events").Uint(stream.events).EndObject();
  }
  w->EndArray();
  w->Key("host_threads").Uint(s.host_threads);
  w->Key("event_kinds").BeginObject();
  for (size_t k = 0; k < s.kind_counts.size(); ++k) {
    w->Key(EventKindName(static_cast<EventKind>(k))).Uint(s.kind_counts[k]);
  }
  w->EndObject();
  WriteCounts("categories", s.categories, w);
  w->Key("correlation_links").Uint(s.correlation_links).Key("flow_links").Uint(s.flow_links);
  w->Key("memory_events").Uint(s.memory_events).Key("counter_tracks").Uint(s.counter_tracks);
  w->Key("counter_samples").Uint(s.counter_samples).Key("collectives").Uint(s.collectives);
  w->Key("communication_kernels").Uint(s.communication_kernels);
  w->Key("graph_launches").Uint(s.graph_launches).Key("graph_replayed_events").Uint(s.graph_replayed_events);
  w->Key("graph_replayed_share").Double(s.graph_replayed_share);
}

// torch_npu's own tables: kernel_details' rows and task types, the communication ops, step_trace_time.
void WriteAscendTables(const TraceSummary& s, JsonWriter* w) {
  JsonIdField(*w, "kernel_details_rows", s.kernel_details_rows);
  if (s.kernel_details_rows != kNoId) {  // Ascend input
    WriteCounts("device_tasks_by_type", s.device_tasks_by_type, w);
    WriteCounts("communication_ops_by_type", s.communication_ops_by_type, w);
  }
  w->Key("reported_step_times").BeginArray();
  for (const ReportedStepTime& r : s.reported_step_times) WriteReportedStep(r, w);
  w->EndArray();
}

// `steps` keeps its meaning where the trace has ProfilerStep#N ranges; a rank without a timeline lists the
// profiler's table's numbered steps instead, `step_count` counting the unnumbered too, and `steps_from`
// says which.
void WriteSteps(const TraceSummary& s, JsonWriter* w) {
  w->Key("steps");
  if (!StepsFromTable(s)) {
    JsonInts(*w, s.step_numbers);
  } else {
    w->BeginArray();
    for (int64_t step : s.table_step_numbers) {
      if (step != kNoId) w->Int(step);
    }
    w->EndArray();
  }
  w->Key("step_count").Uint(StepsFromTable(s) ? s.table_step_numbers.size() : s.step_numbers.size());
  w->Key("steps_from");
  if (StepsFromTable(s)) {
    w->String(s.steps_table.empty() ? "step_trace_time" : s.steps_table);
  } else if (!s.step_numbers.empty()) {
    w->String("timeline");
  } else {
    w->Null();
  }
  JsonIdField(*w, "table_step_mean_ns", s.table_step_mean_ns);
}

void WriteRankJson(const TraceSummary& s, JsonWriter* w) {
  w->BeginObject();
  w->Key("rank").Int(s.rank).Key("rank_source").String(RankSourceName(s.rank_source));
  w->Key("path").String(s.path).Key("format").String(RankFormatName(s));
  w->Key("compressed").Bool(s.compressed).Key("file_bytes").Uint(s.file_bytes).Key("json_bytes").Uint(s.content_bytes);
  w->Key("entries").Uint(s.entry_count).Key("truncated").Bool(s.truncated);
  JsonIdField(*w, "world_size", s.world_size);
  JsonTextField(*w, "backend", s.backend);
  JsonIdField(*w, "start_ns", s.start_ns);
  JsonIdField(*w, "end_ns", s.end_ns);
  WriteSteps(s, w);
  WriteDevices(s.devices, w);
  WriteContents(s, w);
  WriteAscendTables(s, w);
  if (!s.inventory.empty()) {  // which source tables / files the importer found
    w->Key("inventory").BeginObject();
    for (const auto& [table, state] : s.inventory) w->Key(table).String(state);
    w->EndObject();
  }
  w->Key("warnings").BeginArray();
  for (const std::string& warning : s.warnings) w->String(warning);
  w->EndArray();
  w->EndObject();
}

}  // namespace

std::string RenderInfoText(const std::vector<TraceSummary>& summaries) {
  std::string out;
  for (const TraceSummary& s : summaries) RenderOneText(s, &out);
  return EscapeTextKeepingLines(out);
}

std::string RenderInfoJson(const std::vector<TraceSummary>& summaries) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("schema").String("tuneprof.info/1").Key("ranks").BeginArray();
  for (const TraceSummary& s : summaries) WriteRankJson(s, &w);
  w.EndArray().EndObject();
  out += '\n';
  return out;
}

}  // namespace tuneprof

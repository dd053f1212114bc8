#include "report/console/category_report.h"

#include <fmt/format.h>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/console/snapshot_report.h"

namespace tuneprof {
namespace {

std::string Share(int64_t part, int64_t whole) {
  return whole <= 0 ? "-" : fmt::format("{:.1f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace

void AppendCategoryTable(const CategoryBytes& at_peak, const CategoryBytes* largest, int64_t peak,
                         std::string_view indent, std::string* out) {
  *out += fmt::format("{}{:<16} {:>12} {:>8}{}\n", indent, "category", "at the peak", "share",
                      largest ? fmt::format(" {:>12}", "its largest") : "");
  for (size_t c = 0; c < kMemoryCategories; ++c) {
    if (at_peak.bytes[c] == 0 && (!largest || largest->bytes[c] == 0)) continue;
    *out += fmt::format("{}{:<16} {:>12} {:>8}{}\n", indent, kMemoryCategoryNames[c], FormatBytes(at_peak.bytes[c]),
                        Share(at_peak.bytes[c], peak),
                        largest ? fmt::format(" {:>12}", FormatBytes(largest->bytes[c])) : "");
  }
  *out += fmt::format("{}{:<16} {:>12} {:>8}\n", indent, "total", FormatBytes(at_peak.Total()),
                      Share(at_peak.Total(), peak));
}

void WriteCategoryBytes(JsonWriter& w, const CategoryBytes& bytes) {
  w.BeginObject();
  for (size_t c = 0; c < kMemoryCategories; ++c) w.Key(kMemoryCategoryNames[c]).Int(bytes.bytes[c]);
  w.EndObject();
}

std::string RenderCategoryTimelineText(const CategoryTimeline& t) {
  std::string out = fmt::format("memory timeline {} (torch export_memory_timeline, {})\n", EscapeText(t.path),
                                t.raw ? "raw events" : "plot points");
  if (t.points == 0) return out + "  no events: nothing held\n";
  out += fmt::format("  {} changes at {} times over {}; {} held before profiling began\n", t.changes, t.points,
                     FormatDuration(t.last_ns - t.first_ns), FormatBytes(t.preexisting_bytes));
  out += fmt::format("  peak {} at +{}; at the end {}\n", FormatBytes(t.peak_bytes),
                     FormatDuration(t.peak_ns - t.first_ns), FormatBytes(t.at_end.Total()));
  out += "  at the peak by category:\n";
  AppendCategoryTable(t.at_peak, &t.largest, t.peak_bytes, "    ", &out);
  AppendSnapshotStrategies(t.strategies, &out);
  return out;
}

std::string RenderCategoryTimelineJson(const CategoryTimeline& t) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("schema").String("tuneprof.memory_timeline/1").Key("path").String(t.path);
  w.Key("form").String(t.raw ? "raw_events" : "plot_points").Key("changes").Int(t.changes).Key("points").Int(t.points);
  w.Key("first_time_ns").Int(t.first_ns).Key("last_time_ns").Int(t.last_ns);
  w.Key("preexisting_bytes").Int(t.preexisting_bytes);
  w.Key("peak").BeginObject().Key("bytes").Int(t.peak_bytes).Key("time_ns").Int(t.peak_ns).Key("categories");
  WriteCategoryBytes(w, t.at_peak);
  w.EndObject().Key("largest");
  WriteCategoryBytes(w, t.largest);
  w.Key("at_end");
  WriteCategoryBytes(w, t.at_end);
  w.Key("timeline").BeginArray();
  for (const CategoryTimelinePoint& point : t.timeline) {
    w.BeginObject().Key("time_ns").Int(point.ts_ns).Key("total").Int(point.held.Total()).Key("categories");
    WriteCategoryBytes(w, point.held);
    w.EndObject();
  }
  w.EndArray().Key("strategies");
  WriteSnapshotStrategies(w, t.strategies);
  w.EndObject();
  out += "\n";
  return out;
}

}  // namespace tuneprof

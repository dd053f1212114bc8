#include "report/html/html_report.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "report/common/format.h"
#include "report/common/table.h"
#include "report/html/html_page.h"
#include "report/html/svg_chart.h"

namespace tuneprof::html {
namespace {

constexpr size_t kSnapshotTopFrames = 10;

// A legend's frame: a Python frame as its function and the file's last two path parts (where the user's
// code is told apart), a C++ one without its parameters.
std::string SnapshotLegendLabel(const SnapshotFrameRef& frame) {
  std::string_view file = frame.file;
  if (frame.kind == FrameKind::kPython) {
    const size_t last = file.rfind('/');
    const size_t before =
        last == std::string_view::npos || last == 0 ? std::string_view::npos : file.rfind('/', last - 1);
    if (before != std::string_view::npos) file = file.substr(before + 1);
    return ShortLabel(fmt::format("{} {}:{}", frame.function, file, frame.line), 60);
  }
  if (frame.kind == FrameKind::kCpp) {
    return ShortLabel(std::string_view(frame.function).substr(0, frame.function.find('(')), 60);
  }
  return FrameLabel(frame);
}

// Stacked by frame, drawn as lines: each line is its band plus every band below it, so the gap between a
// line and the one under it is that band's bytes and the top line is the allocated total.
LineChart SnapshotTimelineChart(const SnapshotDeviceMemory& d) {
  LineChart chart;
  chart.id = fmt::format("chart-snapshot-timeline-{}", d.device);
  chart.title = fmt::format("device {}: allocated, stacked by the peak's frames, and reserved", d.device);
  chart.x_unit = "ms since the trace began";
  chart.y_unit = "MiB";
  const size_t frames = d.timeline_frames.size();
  // Bottom up: held before the trace, the top frames, the trace's other frames.
  std::vector<size_t> order{frames + 1};
  for (size_t f = 0; f < frames; ++f) order.push_back(f);
  order.push_back(frames);
  std::vector<uint64_t> sums(d.timeline.size(), 0);
  size_t color = 0;
  for (size_t band : order) {
    LineSeries series;
    series.name = band == frames + 1 ? "held before the trace"
                  : band == frames   ? "+ the trace's other frames (= allocated)"
                                     : "+ " + SnapshotLegendLabel(d.timeline_frames[band]);
    series.color = std::string(kPalette[color++ % kPalette.size()]);
    for (size_t p = 0; p < d.timeline.size() && p < d.timeline_bands.size(); ++p) {
      sums[p] += d.timeline_bands[p][band];
      series.points.push_back(
          {MillisFromMicros(d.timeline[p].time_us - d.first_time_us), Mebibytes(static_cast<double>(sums[p]))});
    }
    chart.series.push_back(std::move(series));
  }
  LineSeries reserved{"reserved", "#7f7f7f", {}};
  for (const SnapshotTimelinePoint& point : d.timeline) {
    reserved.points.push_back(
        {MillisFromMicros(point.time_us - d.first_time_us), Mebibytes(static_cast<double>(point.reserved))});
  }
  chart.series.push_back(std::move(reserved));
  chart.mark =
      LinePoint{MillisFromMicros(d.peak_time_us - d.first_time_us), Mebibytes(static_cast<double>(d.peak_allocated))};
  chart.mark_label = fmt::format("peak {} MiB", MiBText(static_cast<int64_t>(d.peak_allocated)));
  return chart;
}

std::string SnapshotFramesTable(const SnapshotDeviceMemory& d) {
  Table table({{.header = "allocating frame at the peak", .html_name = true},
               {.header = "MiB", .align = Align::kRight},
               {.header = "blocks", .align = Align::kRight}});
  for (size_t i = 0; i < d.peak_frames.size() && i < kSnapshotTopFrames; ++i) {
    const SnapshotFrameBytes& g = d.peak_frames[i];
    table.AddRow({NameHtml(FrameLabel(g.frame)), MiBText(static_cast<int64_t>(g.bytes)), fmt::format("{}", g.blocks)});
  }
  return table.Html();
}

std::string SnapshotStrategiesTable(const SnapshotDeviceMemory& d) {
  if (d.strategies.empty()) return Unknown("no strategy: no category, fragmentation or leak stands out");
  Table table({{.header = "category"},
               {.header = "MiB at stake", .align = Align::kRight},
               {.header = "MiB to save (est.)", .align = Align::kRight},
               {.header = "what to try, and why"}});
  for (const SnapshotStrategy& s : d.strategies) {
    table.AddRow({E(s.category) + (s.holds_peak ? " (holds the peak)" : ""), MiBText(static_cast<int64_t>(s.bytes)),
                  MiBText(static_cast<int64_t>(s.saving)), fmt::format("<code>{}</code>: {}", E(s.action), E(s.why))});
  }
  return table.Html();
}

std::string SnapshotDeviceSection(const SnapshotDeviceMemory& d) {
  std::string out = SectionOpen(fmt::format("snapshot-device-{}", d.device), fmt::format("Device {}", d.device),
                                "Allocated memory over the recorded trace, stacked by the frames that hold most of "
                                "the peak (each line adds its frame's bytes to those below it), reserved memory, "
                                "the peak's holders and what to try.");
  out += fmt::format(
      "<p>at the dump: reserved {} MiB, allocated {} MiB in {} segments; peak allocated {} MiB, "
      "reserved then {} MiB</p>\n",
      MiBText(static_cast<int64_t>(d.reserved_at_dump)), MiBText(static_cast<int64_t>(d.allocated_at_dump)), d.segments,
      MiBText(static_cast<int64_t>(d.peak_allocated)), MiBText(static_cast<int64_t>(d.reserved_at_peak)));
  const LineChart chart = SnapshotTimelineChart(d);
  out += d.timeline.empty() ? RenderEmptyChart(chart.id, chart.title,
                                               "unknown: no allocator trace recorded (record_memory_history was off)")
                            : RenderLineChart(chart);
  out += SnapshotFramesTable(d) + SnapshotStrategiesTable(d);
  return out + "</section>\n";
}

}  // namespace
}  // namespace tuneprof::html

namespace tuneprof {

std::string RenderHtmlSnapshotReport(const SnapshotAnalysis& analysis) {
  std::string out = html::Head("tuneprof memory snapshot report");
  out += fmt::format("<p>{}{}</p>\n", html::E(analysis.path),
                     analysis.expandable_segments_setting ? " (expandable segments on)" : "");
  for (const SnapshotDeviceMemory& d : analysis.devices) out += html::SnapshotDeviceSection(d);
  if (analysis.devices.empty()) out += html::Unknown("no segments and no trace: the allocator held nothing");
  out += html::Footer();
  return out;
}

}  // namespace tuneprof

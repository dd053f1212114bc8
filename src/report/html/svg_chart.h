#pragma once
// Inline SVG charts for the HTML report (html_report.h): horizontal bars (stacked or side by side, with
// an optional marker per bar such as a threshold or a link peak), lines with a marked point, a heat map
// and a scatter. Every chart has axes with units, a legend and an id; every string is escaped with
// EscapeXml, because names come from traces. Large inputs are thinned for display only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {

// Escapes & < > " ' for HTML/SVG text and attribute values; control characters become U+FFFD's
// replacement '?', so that no trace string can open markup or end an attribute.
std::string EscapeXml(std::string_view text);

// The most bytes of one trace string a report writes whole, in a tooltip (<title>, a title attribute): the
// longest real names in the sample traces are templated kernels of about 5 KB, which stay whole, while a
// hostile name of megabytes costs at most this much per mention instead of its size each time.
constexpr size_t kMaxTitleBytes = 8192;

// EscapeXml of `text` cut to kMaxTitleBytes (ShortLabel's "..."): for tooltips and any string from a trace.
std::string EscapeTitle(std::string_view text);

// A display label: at most `width` bytes (cut on a UTF-8 boundary, "..." appended). Not escaped.
std::string ShortLabel(std::string_view text, size_t width);

struct BarSeries {
  std::string name;                           // legend entry
  std::string color;                          // CSS colour, chosen by the report (never from a trace)
  std::vector<std::optional<double>> values;  // one per category; nullopt: unknown (drawn as "unknown")
};

struct BarChart {
  std::string id;
  std::string title;
  std::string unit;                     // of the value axis: "ms", "%", "GB/s"
  std::vector<std::string> categories;  // one row each
  std::vector<BarSeries> series;
  bool stacked = false;                        // else side by side within a row
  std::vector<std::optional<double>> markers;  // per category (may be empty): a tick at this value
  std::string marker_name;                     // legend entry of the markers ("threshold", "link peak")
};

struct LinePoint {
  double x = 0;
  double y = 0;
};

struct LineSeries {
  std::string name;
  std::string color;
  std::vector<LinePoint> points;  // in x order
};

struct LineChart {
  std::string id;
  std::string title;
  std::string x_unit;
  std::string y_unit;
  std::vector<LineSeries> series;
  std::optional<LinePoint> mark;  // drawn as a dot with `mark_label`
  std::string mark_label;
};

struct HeatMap {
  std::string id;
  std::string title;
  std::string unit;
  std::string row_axis;     // "source rank"
  std::string column_axis;  // "destination rank"
  std::vector<std::string> rows;
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<double>>> values;  // [row][column]
};

struct ScatterPoint {
  double x = 0;
  double y = 0;
  std::string label;  // shown on hover (<title>)
};

struct ScatterChart {
  std::string id;
  std::string title;
  std::string x_unit;
  std::string y_unit;
  bool log_x = false;
  bool log_y = false;
  std::string series_name;
  std::vector<ScatterPoint> points;
  // A roofline: y = min(roof_peak, roof_slope × x), drawn when both are set (y and x in the chart's units).
  std::optional<double> roof_peak;
  std::optional<double> roof_slope;
  std::string roof_name;
};

// At most this many bars, points per line and scatter points are drawn; the rest are thinned.
constexpr size_t kMaxBarRows = 40;
constexpr size_t kMaxLinePoints = 600;
constexpr size_t kMaxScatterPoints = 400;

std::string RenderBarChart(const BarChart& chart);
std::string RenderLineChart(const LineChart& chart);
std::string RenderHeatMap(const HeatMap& map);
std::string RenderScatterChart(const ScatterChart& chart);
// A chart frame with a message instead of data ("unknown: the trace has no [memory] events"), so that
// a section keeps its chart id and says why it is empty.
std::string RenderEmptyChart(std::string_view id, std::string_view title, std::string_view why);

// Keeps first, last, and per bucket of the rest its minimum and maximum: peaks survive thinning.
std::vector<LinePoint> ThinLine(const std::vector<LinePoint>& points, size_t max_points);

}  // namespace tuneprof

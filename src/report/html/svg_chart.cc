#include "report/html/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tuneprof {
namespace {

constexpr double kWidth = 920;
constexpr double kLabelWidth = 280;  // bar labels left of the plot
constexpr double kRight = 60;
constexpr double kTop = 34;
constexpr double kAxisHeight = 40;
constexpr double kLegendRow = 20;
constexpr size_t kLabelChars = 44;
constexpr size_t kLegendChars = 90;
constexpr std::string_view kMarkerColor = "#222";

std::string Num(double v) {
  const double a = std::fabs(v);
  if (a >= 1000 || a == std::floor(a)) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 0.1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

// A step of 1, 2 or 5 × 10^k giving about `ticks` intervals up to `max`.
double NiceStep(double max, int ticks) {
  if (!(max > 0)) return 1;
  const double raw = max / ticks;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * power) return m * power;
  }
  return 10 * power;
}

std::string SvgOpen(std::string_view id, double height, std::string_view title) {
  return fmt::format(
      "<svg id=\"{0}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {1} {2:.0f}\" "
      "width=\"{1}\" height=\"{2:.0f}\" role=\"img\" aria-label=\"{3}\">\n<title>{3}</title>\n"
      "<text x=\"4\" y=\"18\" class=\"ct\">{3}</text>\n",
      EscapeTitle(id), kWidth, height, EscapeTitle(title));
}

std::string LegendItem(double x, double y, std::string_view color, std::string_view name, bool line = false) {
  std::string out =
      line
          ? fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"3\" height=\"12\" fill=\"{}\"/>", x + 4, y - 10, color)
          : fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>", x, y - 10, color);
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"lg\">{}</text>\n", x + 16, y, EscapeTitle(name));
  return out;
}

// Legend entries laid out left to right, wrapping; returns the rows used.
struct Legend {
  std::string svg;
  int rows = 0;
};

Legend Layout(const std::vector<std::pair<std::string, std::string>>& items, double y, const std::string& marker) {
  Legend legend;
  double x = 4;
  legend.rows = items.empty() && marker.empty() ? 0 : 1;
  auto place = [&](const std::string& color, const std::string& name, bool line) {
    const double w = 28 + 6.5 * static_cast<double>(std::min<size_t>(name.size(), kLegendChars));
    if (x + w > kWidth && x > 4) {
      x = 4;
      ++legend.rows;
    }
    legend.svg += LegendItem(x, y + (legend.rows - 1) * kLegendRow, color, ShortLabel(name, kLegendChars), line);
    x += w;
  };
  for (const auto& [color, name] : items) place(color, name, false);
  if (!marker.empty()) place(std::string(kMarkerColor), marker, true);
  return legend;
}

std::string Bar(double x, double y, double w, double h, std::string_view color, std::string_view tip) {
  return fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title>"
      "</rect>",
      x, y, std::max(0.0, w), h, color, EscapeTitle(tip));
}

double LogOr(double v, bool log) { return log ? std::log10(v) : v; }

}  // namespace

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters are not allowed in XML text; tabs and newlines are harmless.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string EscapeTitle(std::string_view text) { return EscapeXml(ShortLabel(text, kMaxTitleBytes)); }

std::string ShortLabel(std::string_view text, size_t width) {
  if (text.size() <= width) return std::string(text);
  size_t cut = width > 3 ? width - 3 : 0;
  // Never split a UTF-8 sequence: back up to a lead byte.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::vector<LinePoint> ThinLine(const std::vector<LinePoint>& points, size_t max_points) {
  if (points.size() <= max_points || max_points < 4) return points;
  const size_t buckets = (max_points - 2) / 2;
  std::vector<LinePoint> out{points.front()};
  const size_t inner = points.size() - 2;
  for (size_t b = 0; b < buckets; ++b) {
    const size_t lo = 1 + inner * b / buckets;
    const size_t hi = 1 + inner * (b + 1) / buckets;
    if (lo >= hi) continue;
    size_t min_i = lo, max_i = lo;
    for (size_t i = lo; i < hi; ++i) {
      if (points[i].y < points[min_i].y) min_i = i;
      if (points[i].y > points[max_i].y) max_i = i;
    }
    out.push_back(points[std::min(min_i, max_i)]);
    if (min_i != max_i) out.push_back(points[std::max(min_i, max_i)]);
  }
  out.push_back(points.back());
  return out;
}

namespace {

// An axis line; the caller ends the line of markup.
std::string AxisLine(double x1, double y1, double x2, double y2) {
  return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"ax\"/>", x1, y1, x2, y2);
}

// An axis' title centred at (x, y), and one that runs up the left edge at `x`; `suffix` is markup.
std::string AxisTitle(double x, double y, std::string_view title, std::string_view suffix = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"au\" text-anchor=\"middle\">{}{}</text>\n", x, y,
                     EscapeTitle(title), suffix);
}
std::string VerticalAxisTitle(int x, double y, std::string_view title, std::string_view suffix = "") {
  return fmt::format(
      "<text transform=\"translate({} {:.1f}) rotate(-90)\" class=\"au\" text-anchor=\"middle\">{}{}"
      "</text>\n",
      x, y, EscapeTitle(title), suffix);
}

// A tick (class "tk") or grid line ("gr") across the x axis at `x` from `from` to `to`, labelled below.
std::string XTick(double x, double from, double to, std::string_view line_class, double label_y, double value) {
  return fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"{3}\"/>"
      "<text x=\"{0:.1f}\" y=\"{4:.1f}\" class=\"tl\" text-anchor=\"middle\">{5}</text>\n",
      x, from, to, line_class, label_y, Num(value));
}

// A grid line across the plot from x0 to x1 at height `y`, labelled left of the y axis.
std::string YGrid(double x0, double x1, double y, double value) {
  return fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" class=\"gr\"/>"
      "<text x=\"{3:.1f}\" y=\"{4:.1f}\" class=\"tl\" text-anchor=\"end\">{5}</text>\n",
      x0, y, x1, x0 - 4, y + 4, Num(value));
}

// The legend sits under the value axis of a plot that ends at `plot_bottom`; the chart ends with it.
Legend LegendUnder(const std::vector<std::pair<std::string, std::string>>& items, double plot_bottom,
                   const std::string& marker) {
  return Layout(items, plot_bottom + kAxisHeight + 14, marker);
}
std::string OpenAboveLegend(std::string_view id, std::string_view title, double plot_bottom, const Legend& legend) {
  return SvgOpen(id, plot_bottom + kAxisHeight + 8 + kLegendRow * legend.rows, title);
}
std::string CloseWithLegend(const Legend& legend) { return legend.svg + "</svg>\n"; }

// The axis' end: the next whole step of NiceStep above `max`, 1 when nothing is above 0.
double NiceMax(double max) { return max > 0 ? NiceStep(max, 5) * std::ceil(max / NiceStep(max, 5)) : 1; }

// A plot area and where values land on it; a log axis places log10 of the value between lo and hi.
struct Plot {
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  double lo_x = 0, hi_x = 1, lo_y = 0, hi_y = 1;
  bool log_x = false, log_y = false;
  double X(double v) const { return x0 + (x1 - x0) * (LogOr(v, log_x) - lo_x) / (hi_x - lo_x); }
  double Y(double v) const { return y1 - (y1 - y0) * (LogOr(v, log_y) - lo_y) / (hi_y - lo_y); }
};

// A line through `points` ("M x,y L x,y ...").
template <typename Points, typename At>
std::string PathThrough(const Points& points, const At& at) {
  std::string path;
  for (const auto& p : points) {
    const auto [x, y] = at(p);
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", x, y);
  }
  return path;
}

// ---- bars ----

// The value axis under a plot from x0 to x1 (values 0..max).
std::string ValueAxis(double x0, double x1, double y, double max, std::string_view unit) {
  const double step = NiceStep(max, 5);
  std::string out = AxisLine(x0, y, x1, y) + "\n";
  for (double v = 0; v <= max * 1.0001; v += step) out += XTick(x0 + (x1 - x0) * v / max, y, y + 4, "tk", y + 16, v);
  return out + AxisTitle((x0 + x1) / 2, y + 32, unit);
}

double BarMax(const BarChart& chart, size_t rows) {
  double max = 0;
  for (size_t r = 0; r < rows; ++r) {
    double stack = 0;
    for (const BarSeries& s : chart.series) {
      const double v = r < s.values.size() && s.values[r] ? std::max(0.0, *s.values[r]) : 0;
      stack = chart.stacked ? stack + v : std::max(stack, v);
    }
    max = std::max(max, stack);
    if (r < chart.markers.size() && chart.markers[r]) max = std::max(max, *chart.markers[r]);
  }
  return NiceMax(max);
}

struct BarLayout {
  double x0 = kLabelWidth, x1 = kWidth - kRight;
  double bar_h = 0, row_h = 0, max = 1;
  double Width(double v) const { return (x1 - x0) * std::max(0.0, v) / max; }
};

// Row `r`'s bars from its top `y`: stacked from x0, or one under the other; an unknown value says so.
std::string RowBars(const BarChart& chart, const BarLayout& at, size_t r, double y) {
  std::string out;
  double x = at.x0;
  bool any_known = false;
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const BarSeries& series = chart.series[s];
    const std::optional<double> v = r < series.values.size() ? series.values[r] : std::nullopt;
    const double by = chart.stacked ? y : y + at.bar_h * static_cast<double>(s);
    const std::string tip = fmt::format("{}: {}: {}", chart.categories[r], series.name,
                                        v ? Num(*v) + " " + chart.unit : std::string("unknown"));
    if (!v) {
      if (!chart.stacked) {
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"uk\">unknown<title>{}</title></text>", at.x0 + 4,
                           by + at.bar_h - 1, EscapeTitle(tip));
      }
      continue;
    }
    any_known = true;
    const double w = at.Width(*v);
    out += Bar(chart.stacked ? x : at.x0, by, w, at.bar_h, series.color, tip);
    if (chart.stacked) x += w;
  }
  if (chart.stacked && !any_known) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"uk\">unknown</text>", at.x0 + 4, y + at.bar_h - 2);
  }
  return out;
}

std::string BarRow(const BarChart& chart, const BarLayout& at, size_t r) {
  const double y = kTop + at.row_h * static_cast<double>(r) + 4;
  std::string out = fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"bl\" text-anchor=\"end\">{}<title>{}</title></text>\n", at.x0 - 6,
      y + at.row_h / 2, EscapeTitle(ShortLabel(chart.categories[r], kLabelChars)), EscapeTitle(chart.categories[r]));
  out += RowBars(chart, at, r, y);
  if (r < chart.markers.size() && chart.markers[r]) {
    const double mx = at.x0 + at.Width(*chart.markers[r]);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"2\"><title>{4}: {5} {6}</title></line>",
        mx, y - 3, y + at.row_h - 5, kMarkerColor, EscapeTitle(chart.marker_name), Num(*chart.markers[r]),
        EscapeTitle(chart.unit));
  }
  return out + "\n";
}

// ---- lines ----

// The line chart's plot: x from the first to the last point, y from 0 to a whole step above the highest.
Plot LinePlot(const LineChart& chart) {
  Plot plot{.x0 = 90, .x1 = kWidth - kRight, .y0 = kTop, .y1 = kTop + 260};
  double min_x = std::numeric_limits<double>::max(), max_x = std::numeric_limits<double>::lowest(), max_y = 0;
  for (const LineSeries& s : chart.series) {
    for (const LinePoint& p : s.points) {
      min_x = std::min(min_x, p.x);
      max_x = std::max(max_x, p.x);
      max_y = std::max(max_y, p.y);
    }
  }
  if (max_x <= min_x) max_x = min_x + 1;
  plot.lo_x = min_x;
  plot.hi_x = max_x;
  plot.hi_y = NiceMax(max_y);
  return plot;
}

// Both axes with their ticks and titles; the x axis counts from the first point.
std::string LineAxes(const LineChart& chart, const Plot& plot) {
  std::string out = AxisLine(plot.x0, plot.y0, plot.x0, plot.y1) + "\n";
  const double ystep = NiceStep(plot.hi_y, 5);
  for (double v = 0; v <= plot.hi_y * 1.0001; v += ystep) out += YGrid(plot.x0, plot.x1, plot.Y(v), v);
  out += VerticalAxisTitle(14, (plot.y0 + plot.y1) / 2, chart.y_unit);
  out += AxisLine(plot.x0, plot.y1, plot.x1, plot.y1) + "\n";
  const double span = plot.hi_x - plot.lo_x;
  const double xstep = NiceStep(span, 6);
  for (double v = 0; v <= span * 1.0001; v += xstep) {
    out += XTick(plot.X(plot.lo_x + v), plot.y1, plot.y1 + 4, "tk", plot.y1 + 16, v);
  }
  out += AxisTitle((plot.x0 + plot.x1) / 2, plot.y1 + 32, chart.x_unit);
  return out;
}

// The marked point: a ring, its label beside it (left of it near the right edge).
std::string LineMark(const LineChart& chart, const Plot& plot) {
  const double x = plot.X(chart.mark->x), y = plot.Y(chart.mark->y);
  const bool left = x > plot.x1 - 200;
  return fmt::format(
      "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\">"
      "<title>{}</title></circle>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"nt\" text-anchor=\"{}\">{}</text>\n",
      x, y, kMarkerColor, EscapeTitle(chart.mark_label), x + (left ? -8 : 8), y + 4, left ? "end" : "start",
      EscapeTitle(chart.mark_label));
}

// ---- heat map ----

// Light to dark blue by value; grey where unknown.
std::string HeatFill(std::optional<double> v, double max) {
  return v && max > 0 ? fmt::format("hsl(210,70%,{:.0f}%)", 95 - 60 * (*v / max)) : std::string("#eee");
}

std::string HeatRow(const HeatMap& map, size_t r, size_t cols, double x0, double y, double cell, double max) {
  std::string out = fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tl\" text-anchor=\"end\">{}</text>", x0 - 6,
                                y + cell / 2 + 4, EscapeTitle(ShortLabel(map.rows[r], 20)));
  for (size_t c = 0; c < cols; ++c) {
    const std::optional<double> v = c < map.values[r].size() ? map.values[r][c] : std::nullopt;
    const double x = x0 + cell * static_cast<double>(c);
    const std::string tip = fmt::format("{} -> {}: {}", map.rows[r], map.columns[c],
                                        v ? Num(*v) + " " + map.unit : std::string("no traffic / unknown"));
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
        "stroke=\"#fff\"><title>{}</title></rect>",
        x, y, cell, cell, HeatFill(v, max), EscapeTitle(tip));
  }
  return out + "\n";
}

// The colour legend: a gradient scale from 0 to max at height `ly`, and the grey of unknown.
std::string HeatScale(const HeatMap& map, double x0, double ly, double max) {
  std::string out;
  for (int i = 0; i < 10; ++i) {
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"20\" height=\"12\" fill=\"hsl(210,70%,{:.0f}%)\"/>",
                       x0 + 20.0 * i, ly, 95 - 60 * (i / 9.0));
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tl\">0</text>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tl\">{} {}</text>"
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"#eee\"/>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"lg\">no traffic / unknown</text>\n",
      x0 - 12, ly + 11, x0 + 206, ly + 11, Num(max), EscapeTitle(map.unit), x0 + 320, ly, x0 + 336, ly + 11);
  return out;
}

// ---- scatter ----

// Whole decades on log axes, zero-based linear axes, the roof's peak inside.
Plot ScatterPlot(const ScatterChart& chart, const std::vector<const ScatterPoint*>& points, bool roof) {
  Plot plot{.x0 = 90, .x1 = kWidth - kRight, .y0 = kTop, .y1 = kTop + 300, .log_x = chart.log_x, .log_y = chart.log_y};
  double lo_x = std::numeric_limits<double>::max(), hi_x = std::numeric_limits<double>::lowest();
  double lo_y = lo_x, hi_y = hi_x;
  for (const ScatterPoint* p : points) {
    lo_x = std::min(lo_x, LogOr(p->x, chart.log_x));
    hi_x = std::max(hi_x, LogOr(p->x, chart.log_x));
    lo_y = std::min(lo_y, LogOr(p->y, chart.log_y));
    hi_y = std::max(hi_y, LogOr(p->y, chart.log_y));
  }
  if (roof) hi_y = std::max(hi_y, LogOr(*chart.roof_peak, chart.log_y));
  plot.lo_x = chart.log_x ? std::floor(lo_x) : 0;
  plot.hi_x = chart.log_x ? std::max(std::ceil(hi_x), plot.lo_x + 1) : (hi_x > 0 ? hi_x * 1.05 : 1);
  plot.lo_y = chart.log_y ? std::floor(lo_y) : 0;
  plot.hi_y = chart.log_y ? std::max(std::ceil(hi_y), plot.lo_y + 1) : (hi_y > 0 ? hi_y * 1.05 : 1);
  return plot;
}

// Tick values from lo to hi: decades on a log axis (at most about 8), steps of NiceStep on a linear one.
std::vector<double> Ticks(double lo, double hi, bool log) {
  std::vector<double> values;
  if (log) {
    for (double d = lo; d <= hi + 1e-9; d += std::max(1.0, std::floor((hi - lo) / 8)))
      values.push_back(std::pow(10, d));
  } else {
    const double step = NiceStep(hi - lo, 6);
    for (double v = lo; v <= hi * 1.0001; v += step) values.push_back(v);
  }
  return values;
}

std::string ScatterAxes(const ScatterChart& chart, const Plot& plot) {
  std::string out = AxisLine(plot.x0, plot.y0, plot.x0, plot.y1) + AxisLine(plot.x0, plot.y1, plot.x1, plot.y1) + "\n";
  for (double v : Ticks(plot.lo_x, plot.hi_x, chart.log_x))
    out += XTick(plot.X(v), plot.y0, plot.y1, "gr", plot.y1 + 16, v);
  for (double v : Ticks(plot.lo_y, plot.hi_y, chart.log_y)) out += YGrid(plot.x0, plot.x1, plot.Y(v), v);
  out += AxisTitle((plot.x0 + plot.x1) / 2, plot.y1 + 32, chart.x_unit, chart.log_x ? " (log scale)" : "");
  out += VerticalAxisTitle(14, (plot.y0 + plot.y1) / 2, chart.y_unit, chart.log_y ? " (log scale)" : "");
  return out;
}

// The roof bends at the ridge; the two segments are sampled at the axis ends and the ridge.
std::string RoofPath(const ScatterChart& chart, const Plot& plot) {
  const double x_lo = chart.log_x ? std::pow(10, plot.lo_x) : plot.lo_x;
  const double x_hi = chart.log_x ? std::pow(10, plot.hi_x) : plot.hi_x;
  const double ridge = *chart.roof_peak / *chart.roof_slope;
  std::vector<std::pair<double, double>> corners;
  for (double x : {x_lo, std::clamp(ridge, x_lo, x_hi), x_hi}) {
    const double y = std::min(*chart.roof_peak, *chart.roof_slope * x);
    if (chart.log_y && !(y > 0)) continue;
    corners.emplace_back(plot.X(x), std::clamp(plot.Y(y), plot.y0, plot.y1));
  }
  const std::string path = PathThrough(corners, [](const std::pair<double, double>& c) { return c; });
  return fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title></path>\n", path,
                     kMarkerColor, EscapeTitle(chart.roof_name));
}

}  // namespace

std::string RenderBarChart(const BarChart& chart) {
  const size_t rows = std::min(chart.categories.size(), kMaxBarRows);
  if (rows == 0) return RenderEmptyChart(chart.id, chart.title, "no data");
  const size_t per_row = chart.stacked ? 1 : std::max<size_t>(1, chart.series.size());
  BarLayout at;
  at.bar_h = chart.stacked ? 16 : std::max(6.0, 18.0 / static_cast<double>(per_row));
  at.row_h = at.bar_h * static_cast<double>(per_row) + 8;
  at.max = BarMax(chart, rows);
  const double plot_bottom = kTop + at.row_h * static_cast<double>(rows);
  std::vector<std::pair<std::string, std::string>> items;
  for (const BarSeries& s : chart.series) items.emplace_back(s.color, s.name);
  bool any_marker = false;
  for (size_t r = 0; r < rows && r < chart.markers.size(); ++r) any_marker |= chart.markers[r].has_value();
  const Legend legend = LegendUnder(items, plot_bottom, any_marker ? chart.marker_name : "");
  std::string out = OpenAboveLegend(chart.id, chart.title, plot_bottom, legend);
  for (size_t r = 0; r < rows; ++r) out += BarRow(chart, at, r);
  out += AxisLine(at.x0, kTop, at.x0, plot_bottom) + "\n";
  out += ValueAxis(at.x0, at.x1, plot_bottom, at.max, chart.unit);
  if (chart.categories.size() > rows) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"nt\" text-anchor=\"end\">first {} of {} shown</text>",
                       at.x1, 18.0, rows, chart.categories.size());
  }
  return out + CloseWithLegend(legend);
}

std::string RenderLineChart(const LineChart& chart) {
  size_t total = 0;
  for (const LineSeries& s : chart.series) total += s.points.size();
  if (total == 0) return RenderEmptyChart(chart.id, chart.title, "no data");
  const Plot plot = LinePlot(chart);
  std::vector<std::pair<std::string, std::string>> items;
  for (const LineSeries& s : chart.series) items.emplace_back(s.color, s.name);
  const Legend legend = LegendUnder(items, plot.y1, chart.mark ? chart.mark_label : "");
  std::string out = OpenAboveLegend(chart.id, chart.title, plot.y1, legend) + LineAxes(chart, plot);
  for (const LineSeries& s : chart.series) {
    const std::string path = PathThrough(ThinLine(s.points, kMaxLinePoints),
                                         [&](const LinePoint& p) { return std::pair(plot.X(p.x), plot.Y(p.y)); });
    out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"><title>{}</title></path>\n",
                       path, s.color, EscapeTitle(s.name));
  }
  if (chart.mark) out += LineMark(chart, plot);
  return out + CloseWithLegend(legend);
}

std::string RenderHeatMap(const HeatMap& map) {
  if (map.rows.empty() || map.columns.empty()) return RenderEmptyChart(map.id, map.title, "no data");
  const size_t rows = std::min(map.rows.size(), kMaxBarRows);
  const size_t cols = std::min(map.columns.size(), kMaxBarRows);
  double max = 0;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols && c < map.values[r].size(); ++c) {
      if (map.values[r][c]) max = std::max(max, *map.values[r][c]);
    }
  }
  const double x0 = 150, y0 = kTop + 40;
  const double cell = std::min(40.0, (kWidth - x0 - kRight) / static_cast<double>(cols));
  const double y1 = y0 + cell * static_cast<double>(rows);
  std::string out = SvgOpen(map.id, y1 + 80, map.title);
  out += AxisTitle(x0 + cell * static_cast<double>(cols) / 2, y0 - 22, map.column_axis);
  out += VerticalAxisTitle(16, (y0 + y1) / 2, map.row_axis);
  for (size_t c = 0; c < cols; ++c) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tl\" text-anchor=\"middle\">{}</text>",
                       x0 + cell * (static_cast<double>(c) + 0.5), y0 - 6, EscapeTitle(ShortLabel(map.columns[c], 8)));
  }
  for (size_t r = 0; r < rows; ++r) out += HeatRow(map, r, cols, x0, y0 + cell * static_cast<double>(r), cell, max);
  if (map.rows.size() > rows || map.columns.size() > cols) {
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"18\" class=\"nt\" text-anchor=\"end\">first {} x {} of {} x {} shown"
        "</text>\n",
        kWidth - kRight, rows, cols, map.rows.size(), map.columns.size());
  }
  return out + HeatScale(map, x0, y1 + 24, max) + "</svg>\n";
}

std::string RenderScatterChart(const ScatterChart& chart) {
  std::vector<const ScatterPoint*> points;
  for (const ScatterPoint& p : chart.points) {
    if ((chart.log_x && !(p.x > 0)) || (chart.log_y && !(p.y > 0))) continue;  // log axes: positive only
    points.push_back(&p);
  }
  if (points.empty()) return RenderEmptyChart(chart.id, chart.title, "no data");
  if (points.size() > kMaxScatterPoints) points.resize(kMaxScatterPoints);  // callers sort by importance
  const bool roof = chart.roof_peak && chart.roof_slope && *chart.roof_peak > 0 && *chart.roof_slope > 0;
  const Plot plot = ScatterPlot(chart, points, roof);
  const Legend legend = LegendUnder({{"#1f77b4", chart.series_name}}, plot.y1, roof ? chart.roof_name : "");
  std::string out = OpenAboveLegend(chart.id, chart.title, plot.y1, legend) + ScatterAxes(chart, plot);
  if (roof) out += RoofPath(chart, plot);
  for (const ScatterPoint* p : points) {
    out += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#1f77b4\" fill-opacity=\"0.6\">"
        "<title>{}: {} {}, {} {}</title></circle>\n",
        plot.X(p->x), plot.Y(p->y), EscapeTitle(p->label), Num(p->x), EscapeTitle(chart.x_unit), Num(p->y),
        EscapeTitle(chart.y_unit));
  }
  if (chart.points.size() > points.size()) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"18\" class=\"nt\" text-anchor=\"end\">{} of {} shown</text>", plot.x1,
                       points.size(), chart.points.size());
  }
  return out + CloseWithLegend(legend);
}

std::string RenderEmptyChart(std::string_view id, std::string_view title, std::string_view why) {
  std::string out = SvgOpen(id, 70, title);
  out += fmt::format("<text x=\"4\" y=\"48\" class=\"uk\">{}</text>\n</svg>\n", EscapeTitle(why));
  return out;
}

}  // namespace tuneprof

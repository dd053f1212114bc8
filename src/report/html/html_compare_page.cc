#include "report/html/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "report/common/format.h"
#include "report/common/table.h"
#include "report/html/html_page.h"
#include "report/html/svg_chart.h"

namespace tuneprof::html {
namespace {

constexpr size_t kTopOps = 20;
// The attributes of a right-aligned (number) cell, for rows that give some cells their own.
constexpr char kNumber[] = " class=\"n\"";

std::string SideText(const CompareSide& side) {
  std::string paths;  // each input once: the ranks of one file share its path
  for (size_t i = 0; i < side.paths.size(); ++i) {
    if (i == 0 || side.paths[i] != side.paths[i - 1]) paths += (paths.empty() ? "" : ", ") + side.paths[i];
  }
  return fmt::format("{} ({} rank{}, {} step{})", paths, side.ranks, side.ranks == 1 ? "" : "s", side.step_ns.size(),
                     side.step_ns.size() == 1 ? "" : "s");
}

std::string CompareSummary(const CompareResult& result) {
  std::string out = SectionOpen("summary", "Summary and verdict",
                                "Did the change help? Step time before and after, "
                                "judged by the bootstrap interval and the rank test.");
  const MetricComparison* step = result.Find("step_time_us");
  if (step) {
    out += fmt::format("<p class=\"verdict\">Step time: {} → {} us ({}): {}</p>\n",
                       NumberCell(step->before, 1, kUnknownText), NumberCell(step->after, 1, kUnknownText),
                       ChangePercent(step->delta_pct, 2), E(MetricVerdictText(*step)));
  } else {
    out += Unknown("Step time: unknown on these traces.");
  }
  out += fmt::format("<p>before: <code>{}</code><br>after: <code>{}</code></p>\n", E(SideText(result.before)),
                     E(SideText(result.after)));
  if (const std::string ranks = PopulationDescription(result.population); !ranks.empty()) {
    out += fmt::format("<p>ranks: {}</p>\n", E(ranks));
  }
  if (const std::string left_out = LeftOutRanksWarning(result.population); !left_out.empty()) {
    out += fmt::format("<p class=\"what\">{}</p>\n", E(left_out));
  }
  out += "</section>\n";
  return out;
}

std::string MetricsSection(const CompareResult& result) {
  std::string out = SectionOpen("metrics", "Metrics",
                                "Each metric before and after, its change and the verdict "
                                "(\"no significant change\" inside the run-to-run noise).");
  Table table({{.header = "metric"},
               {.header = "unit"},
               {.header = "before", .align = Align::kRight},
               {.header = "after", .align = Align::kRight},
               {.header = "change", .align = Align::kRight},
               {.header = "test"},
               {.header = "verdict"}});
  for (const MetricComparison& m : result.metrics) {
    const MetricVerdict verdict = JudgeMetric(m);
    const std::string_view verdict_class =
        verdict == MetricVerdict::kBetter ? "good" : (verdict == MetricVerdict::kWorse ? "bad" : "");
    table.AddRow({E(m.key), E(m.unit), NumberCell(m.before, 3, kUnknownText), NumberCell(m.after, 3, kUnknownText),
                  ChangePercent(m.delta_pct, 2), E(m.test), E(MetricVerdictText(m))},
                 {"", "", kNumber, kNumber, kNumber, "", fmt::format(" class=\"{}\"", verdict_class)});
  }
  // The verdict of analyze on each side, as compare's table ends with it.
  const std::string& before = result.before.verdict.dominant;
  const std::string& after = result.after.verdict.dominant;
  const bool unknown = before == kUnknownText || after == kUnknownText;
  table.AddRow({"dominant_bottleneck", "", E(before), E(after), "", "",
                unknown ? std::string(kUnknownText) : (before == after ? "same" : "changed")},
               {"", "", kNumber, kNumber, ""});
  out += table.Html() + "</section>\n";
  return out;
}

// Bars of each side, side by side: grey before, blue after.
BarChart BeforeAfterBars(std::string id, std::string title, std::string unit) {
  BarChart bars;
  bars.id = std::move(id);
  bars.title = std::move(title);
  bars.unit = std::move(unit);
  bars.series = {{"before", std::string(kBefore), {}}, {"after", std::string(kAfter), {}}};
  return bars;
}

std::string CompareBreakdownSection(const CompareResult& result) {
  BarChart bars = BeforeAfterBars("chart-compare-breakdown", "Mean per step, before vs after (ms)", "ms");
  // The bars are the metrics' own means (the table's before and after), so chart and table agree.
  const auto add_bar = [&](std::string label, const MetricComparison& metric) {
    bars.categories.push_back(std::move(label));
    bars.series[0].values.push_back(metric.before ? std::optional<double>(Micros(*metric.before)) : std::nullopt);
    bars.series[1].values.push_back(metric.after ? std::optional<double>(Micros(*metric.after)) : std::nullopt);
  };
  if (const MetricComparison* step = result.Find("step_time_us")) add_bar("step time", *step);
  for (const StepSeries& series : result.before.breakdown) {
    const MetricComparison* metric = result.Find(series.key);
    if (!metric) continue;  // a part neither side has
    std::string label = series.key;
    if (label.ends_with("_us")) label.resize(label.size() - 3);  // the metrics are us; the chart says ms
    add_bar(std::move(label), *metric);
  }
  LineChart steps;
  steps.id = "chart-compare-steps";
  steps.title = "Step time of each step (ms)";
  steps.x_unit = "step (in order)";
  steps.y_unit = "ms";
  LineSeries before{"before", std::string(kBefore), {}}, after{"after", std::string(kAfter), {}};
  for (size_t i = 0; i < result.before.step_ns.size(); ++i)
    before.points.push_back({double(i), result.before.step_ns[i] / 1e6});
  for (size_t i = 0; i < result.after.step_ns.size(); ++i)
    after.points.push_back({double(i), result.after.step_ns[i] / 1e6});
  steps.series = {before, after};
  std::string out = SectionOpen("breakdown", "Breakdown before vs after",
                                "The mean step and its parts side by side (grey before, blue after), then every "
                                "step's time in order.");
  out += RenderBarChart(bars) + RenderLineChart(steps) + "</section>\n";
  return out;
}

std::string OpsSection(const CompareResult& result) {
  BarChart bars = BeforeAfterBars("chart-op-diff", "Operators with the largest change, time per step (ms)", "ms/step");
  Table table({{.header = "operator", .html_name = true},
               {.header = "time"},
               {.header = "calls"},
               {.header = "count before", .align = Align::kRight},
               {.header = "count after", .align = Align::kRight},
               {.header = "ms/step before", .align = Align::kRight},
               {.header = "ms/step after", .align = Align::kRight}});
  for (size_t i = 0; i < std::min(result.ops.ops.size(), kTopOps); ++i) {
    const OperatorDelta& op = result.ops.ops[i];
    bars.categories.push_back(op.name);
    bars.series[0].values.push_back(op.before_ns / 1e6);
    bars.series[1].values.push_back(op.after_ns / 1e6);
    table.AddRow({NameHtml(op.name), E(TimeChangeWord(op.delta_ns())), E(CountChangeWord(op.change)),
                  fmt::format("{:.2f}", op.before_count), fmt::format("{:.2f}", op.after_count),
                  MillisText(op.before_ns), MillisText(op.after_ns)});
  }
  std::string out = SectionOpen("ops", "Per-operator diff",
                                fmt::format("Operators ({}) by the size of their change in time per step, before "
                                            "and after side by side.",
                                            OperatorScopeName(result.ops.scope)));
  out += result.ops.ops.empty() ? RenderEmptyChart(bars.id, bars.title, "no operators on either side")
                                : RenderBarChart(bars);
  if (result.ops.replaced) {
    std::string removed, added;
    for (const std::string& name : result.ops.replaced->removed) removed += (removed.empty() ? "" : ", ") + name;
    for (const std::string& name : result.ops.replaced->added) added += (added.empty() ? "" : ", ") + name;
    out += fmt::format("<p>Replaced pattern: <code>{}</code> ({} ms/step) → <code>{}</code> ({} ms/step)</p>\n",
                       NameHtml(removed), MillisText(result.ops.replaced->removed_ns), NameHtml(added),
                       MillisText(result.ops.replaced->added_ns));
  }
  out += table.Html() + "</section>\n";
  return out;
}

}  // namespace
}  // namespace tuneprof::html

namespace tuneprof {

std::string RenderHtmlCompareReport(const CompareResult& result) {
  std::string out = html::Head("tuneprof compare report");
  out += html::CompareSummary(result);
  out += html::MetricsSection(result);
  out += html::CompareBreakdownSection(result);
  out += html::OpsSection(result);
  out += html::Footer();
  return out;
}

}  // namespace tuneprof

#include "report/html/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "report/common/format.h"
#include "report/common/table.h"
#include "report/html/html_page.h"
#include "report/html/html_run_sections.h"
#include "report/html/svg_chart.h"

namespace tuneprof::html {
namespace {

constexpr size_t kTopKernels = 20;

// ---- summary ---------------------------------------------------------------------------------------

// One row of the summary's split table: the rank (or `label`) and its mean step's parts.
// The pipeline bubble, the unclassified and the fused comm columns show only where a rank has one.
struct SplitColumns {
  bool bubble = false;
  bool unclassified = false;
  bool fused_comm = false;
};

// The parts in the order of the table: the unclassified work and the fused compute + communication kernels
// beside the compute- and memory-bound.
constexpr std::array kSplitColumnOrder =
    std::to_array<TimePart>({TimePart::kComputeBound, TimePart::kMemoryBound, TimePart::kUnclassified,
                             TimePart::kFusedComm, TimePart::kCommunication, TimePart::kMemcpy, TimePart::kHostWait,
                             TimePart::kData, TimePart::kIdle, TimePart::kPipelineBubble});
static_assert(kSplitColumnOrder.size() == static_cast<size_t>(TimePart::kCount));

bool ShownColumn(TimePart part, SplitColumns columns) {
  if (part == TimePart::kPipelineBubble) return columns.bubble;
  if (part == TimePart::kFusedComm) return columns.fused_comm;
  return part != TimePart::kUnclassified || columns.unclassified;
}

std::string SplitRow(std::string_view label, std::string_view steps, const TimeSplit& split, SplitColumns columns) {
  std::string row = fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>", E(label), steps,
                                MillisText(split.step_ns));
  for (const TimePart part : kSplitColumnOrder) {
    // Computing that no operator classes (a rank with only torch_npu's step table) is neither compute- nor
    // memory-bound but unclassified: the text and the JSON (compute_classes_known) say so too.
    if (!ShownColumn(part, columns)) continue;
    const bool classed_part = part == TimePart::kComputeBound || part == TimePart::kMemoryBound;
    if (!split.compute_classes_known && classed_part && split.part(part) <= 0) {
      row += fmt::format("<td class=\"n\">{}</td>", kEmptyCell);
    } else if (!split.compute_classes_known && part == TimePart::kUnclassified) {
      row += fmt::format("<td class=\"n\" title=\"no operators to class it\">{} computing, unclassed</td>",
                         MillisText(split.part(part)));
    } else {
      row += fmt::format("<td class=\"n\">{}</td>", MillisText(split.part(part)));
    }
  }
  return row + "</tr>\n";
}

std::string SplitHeader(SplitColumns columns) {
  std::string header =
      "<table><caption class=\"what\">ms per step</caption><tr><th>rank</th><th class=\"n\">steps</th>"
      "<th class=\"n\">mean step</th>";
  for (const TimePart part : kSplitColumnOrder) {
    if (!ShownColumn(part, columns)) continue;
    std::string name(TimePartName(part));
    std::replace(name.begin(), name.end(), '_', ' ');
    // "fused comm" spelled out on hover: one kernel that computes and communicates, counted once.
    const std::string_view title =
        part == TimePart::kFusedComm ? " title=\"fused compute + communication kernels (MC2 and alike)\"" : "";
    header += fmt::format("<th class=\"n\"{}>{}</th>", title, E(name));
  }
  return header + "</tr>\n";
}

// Above 16 ranks the table shows the slowest and the fastest rank and the mean; every rank's row stays
// on the page, folded under them (a thousand rows hid the verdict's population).
void SplitTable(const AdvisorResult& advice, Pieces& out) {
  const bool folded = advice.ranks.size() > kRanksListedOneByOne;
  SplitColumns columns;
  for (const RankAdvice& r : advice.ranks) {
    columns.bubble = columns.bubble || r.split.part(TimePart::kPipelineBubble) > 0;
    columns.unclassified = columns.unclassified || r.split.part(TimePart::kUnclassified) > 0;
    columns.fused_comm = columns.fused_comm || r.split.part(TimePart::kFusedComm) > 0;
  }
  out += SplitHeader(columns);
  if (folded) {
    const auto by_step = [](const RankAdvice& a, const RankAdvice& b) { return a.split.step_ns < b.split.step_ns; };
    const RankAdvice& slowest = *std::max_element(advice.ranks.begin(), advice.ranks.end(), by_step);
    const RankAdvice& fastest = *std::min_element(advice.ranks.begin(), advice.ranks.end(), by_step);
    if (slowest.split.step_ns == fastest.split.step_ns) {
      out += SplitRow(fmt::format("{} (slowest and fastest: every rank's mean step is as long)", slowest.rank),
                      std::to_string(slowest.split.steps), slowest.split, columns);
    } else {
      out += SplitRow(fmt::format("{} (slowest)", slowest.rank), std::to_string(slowest.split.steps), slowest.split,
                      columns);
      out += SplitRow(fmt::format("{} (fastest)", fastest.rank), std::to_string(fastest.split.steps), fastest.split,
                      columns);
    }
  } else {
    for (const RankAdvice& rank : advice.ranks)
      out += SplitRow(std::to_string(rank.rank), std::to_string(rank.split.steps), rank.split, columns);
  }
  if (advice.ranks.size() > 1) {  // the population the verdict quotes
    out += SplitRow(MeanOverRanks(advice.mean_ranks, advice.ranks.size()) +
                        (advice.mean_ranks < advice.ranks.size() ? " (the others have no complete step)" : ""),
                    kEmptyCell, advice.mean_split, columns);
  }
  out += "</table>\n";
  if (!folded) return;
  out += fmt::format("<details><summary>every rank ({})</summary>\n", advice.ranks.size());
  out += SplitHeader(columns);
  for (const RankAdvice& rank : advice.ranks)
    out += SplitRow(std::to_string(rank.rank), std::to_string(rank.split.steps), rank.split, columns);
  out += "</table>\n</details>\n";
}

void SummarySection(const HtmlReportInput& input, Pieces& out) {
  const AdvisorResult& advice = input.advice;
  out += SectionOpen("summary", "Summary and verdict",
                     "The dominant bottleneck over all ranks, the numbers behind it, and where the mean step of each "
                     "rank goes (parts add up to the step).");
  out += fmt::format("<p class=\"verdict\">Dominant bottleneck: {}</p>\n<p>{}</p>\n",
                     E(BottleneckName(advice.dominant)), E(advice.dominant_reason));
  const bool fold_inputs = input.paths.size() > kRanksListedOneByOne;
  if (fold_inputs) out += fmt::format("<details><summary>{} inputs</summary>\n", input.paths.size());
  out += "<table><tr><th>input</th></tr>";
  for (const std::string& path : input.paths)
    out += fmt::format("<tr><td class=\"name\"><code>{}</code></td></tr>", E(path));
  out += "</table>\n";
  if (fold_inputs) out += "</details>\n";
  SplitTable(advice, out);
  out += "</section>\n";
}

// ---- breakdown -------------------------------------------------------------------------------------

std::string BreakdownSection(const std::vector<RankBreakdown>& ranks) {
  BarChart chart;
  chart.id = "chart-breakdown";
  chart.title = "Step time by rank and step (ms)";
  chart.unit = "ms";
  chart.stacked = true;
  chart.series = {{"computing", std::string(kComputing), {}},
                  {"exposed communication", std::string(kExposedComm), {}},
                  {"memcpy (not hidden)", std::string(kMemcpy), {}},
                  {"other (syncs)", std::string(kOther), {}},
                  {"free (no device work)", std::string(kFree), {}}};
  BarSeries bubble{"pipeline bubble", std::string(kBubble), {}};
  bool torch_npu = false;
  for (const RankBreakdown& rank : ranks) {
    const bool npu = rank.definitions == StepDefinitions::kTorchNpu;
    torch_npu |= npu;
    std::vector<const StepBreakdown*> steps;
    for (const StepBreakdown& step : rank.steps) steps.push_back(&step);
    if (steps.empty()) steps.push_back(&rank.total);
    for (const StepBreakdown* step : steps) {
      chart.categories.push_back(step->step ? fmt::format("rank {} step {}", rank.rank, *step->step)
                                            : fmt::format("rank {} (whole trace)", rank.rank));
      chart.series[0].values.push_back(step->computing_ns / 1e6);
      chart.series[1].values.push_back(step->communication_not_overlapped_ns / 1e6);
      // torch_npu's Free already holds copies and syncs: stacking them again would count them twice.
      chart.series[2].values.push_back(npu ? 0 : step->memcpy_ns / 1e6);
      chart.series[3].values.push_back(npu ? 0 : step->other_ns / 1e6);
      chart.series[4].values.push_back(step->free_ns / 1e6);
      bubble.values.push_back(step->bubble_ns / 1e6);
    }
  }
  // A pipeline's bubble is its own part of the step, never stacked into exposed communication; off
  // pipelines the series would be all zero.
  const auto positive = [](const std::optional<double>& v) { return v && *v > 0; };
  const bool with_bubble = std::any_of(bubble.values.begin(), bubble.values.end(), positive);
  if (with_bubble) chart.series.push_back(std::move(bubble));
  const size_t rows = chart.categories.size();
  if (rows > kMaxBarRows) {  // display only: every k-th row, evenly over ranks and steps
    BarChart sampled = chart;
    sampled.categories.clear();
    for (BarSeries& series : sampled.series) series.values.clear();
    for (size_t i = 0; i < kMaxBarRows; ++i) {
      const size_t row = i * (rows - 1) / (kMaxBarRows - 1);
      sampled.categories.push_back(chart.categories[row]);
      for (size_t s = 0; s < chart.series.size(); ++s) sampled.series[s].values.push_back(chart.series[s].values[row]);
    }
    sampled.title = fmt::format("{} ({} of {} steps shown, evenly spaced)", chart.title, kMaxBarRows, rows);
    chart = std::move(sampled);
  }
  // The caption names every part the bars stack, the pipeline bubble where a bar holds one.
  std::string out = SectionOpen(
      "breakdown", "Per-rank, per-step breakdown",
      with_bubble
          ? "Each bar is one step of one rank: device time computing, communicating while nothing computes "
            "(exposed), copying while nothing else runs, syncs, free time with no device work, and the pipeline "
            "bubble (the rank waiting for other pipeline stages). The parts add up to the step's wall time on the "
            "device."
          : "Each bar is one step of one rank: device time computing, communicating while nothing computes "
            "(exposed), copying while nothing else runs, syncs, and free time with no device work. The parts add "
            "up to the step's wall time on the device.");
  out += RenderBarChart(chart);
  if (torch_npu) out += Unknown("torch_npu ranks: Free holds copies and syncs, as in step_trace_time.csv.");
  out += "</section>\n";
  return out;
}

// ---- kernels and roofline --------------------------------------------------------------------------

std::string KernelsSection(const KernelTotals& totals) {
  const std::vector<KernelTotal>& kernels = totals.kernels;
  const int64_t total_ns = totals.total_ns;
  const bool host_ops = totals.host_ops;
  const std::string what_name = host_ops ? "host operators (self time)" : "device kernels";
  BarChart chart;
  chart.id = "chart-kernels";
  chart.title = fmt::format("Top {} by total time, all ranks (ms)", what_name);
  chart.unit = "ms";
  chart.series = {{"total time", std::string(kAfter), {}}};
  Table table({{.header = "name", .html_name = true},
               {.header = "count", .align = Align::kRight},
               {.header = "total (ms)", .align = Align::kRight},
               {.header = "mean (us)", .align = Align::kRight},
               {.header = "share", .align = Align::kRight}});
  for (size_t i = 0; i < std::min(kernels.size(), kTopKernels); ++i) {
    const KernelTotal& k = kernels[i];
    chart.categories.push_back(k.name);
    chart.series[0].values.push_back(k.total_ns / 1e6);
    table.AddRow(
        {E(ShortLabel(k.name, kTableNameChars)), std::to_string(k.count), MillisText(static_cast<double>(k.total_ns)),
         fmt::format("{:.2f}", k.count ? Micros(k.total_ns) / static_cast<double>(k.count) : 0.0),
         total_ns > 0 ? PercentCell(static_cast<double>(k.total_ns) / static_cast<double>(total_ns))
                      : std::string(kUnknownText)},
        {fmt::format(" class=\"name\" title=\"{}\"", EscapeTitle(k.name))});
  }
  std::string out = SectionOpen("kernels", "Top operators and kernels",
                                "The " + what_name +
                                    " that take the most time, summed over ranks. Shares are of the summed "
                                    "durations (work on different streams overlaps).");
  out += kernels.empty() ? RenderEmptyChart(chart.id, chart.title, "no kernels or operators in the trace")
                         : RenderBarChart(chart);
  out += table.Html() + "</section>\n";
  return out;
}

// The roofline section's chart: operators on log-log axes, the roof or the fallback alike.
ScatterChart LogLogChart(std::string title, std::string x_unit, std::string y_unit, std::string series_name) {
  ScatterChart chart;
  chart.id = "chart-roofline";
  chart.title = std::move(title);
  chart.x_unit = std::move(x_unit);
  chart.y_unit = std::move(y_unit);
  chart.log_x = true;
  chart.log_y = true;
  chart.series_name = std::move(series_name);
  return chart;
}

// Operators with FLOPs, bytes and time: intensity vs achieved GFLOP/s, under the chip's roof.
ScatterChart RooflineChart(const std::vector<RankOpFlops>& ranks) {
  ScatterChart chart =
      LogLogChart("Roofline: operators by arithmetic intensity and achieved throughput",
                  "arithmetic intensity (FLOP/byte)", "achieved GFLOP/s", "one operator (by name and rank)");
  for (const RankOpFlops& rank : ranks) {
    for (const OpFlopsRow& op : rank.ops) {  // by FLOPs: thinning keeps the heavy ones
      const std::optional<double> intensity = op.Intensity();
      const std::optional<double> rate = op.FlopsPerSecond();
      if (!intensity || !rate) continue;
      chart.points.push_back({*intensity, *rate / 1e9, fmt::format("{} ({}, {} calls)", op.name, op.dtype, op.count)});
      // The roof of the rank's main dtype, per device: peak FLOP/s and bandwidth = peak / ridge.
      if (!chart.roof_peak && rank.peak_flops_per_s && op.dtype == rank.dtype && op.roof.ridge && *op.roof.ridge > 0) {
        const double peak = *rank.peak_flops_per_s / static_cast<double>(std::max<int64_t>(rank.devices, 1)) / 1e9;
        chart.roof_peak = peak;
        chart.roof_slope = peak / *op.roof.ridge;
        chart.roof_name =
            fmt::format("roof ({}: {:.0f} GFLOP/s peak, {:.0f} GB/s)", rank.dtype, peak, peak / *op.roof.ridge);
      }
    }
  }
  return chart;
}

std::string RooflineSection(const std::vector<KernelTotal>& kernels, const std::vector<RankOpFlops>& flops) {
  std::string out = SectionOpen(
      "roofline", "Roofline of operators",
      "Each operator by arithmetic intensity (FLOPs per byte moved, from its recorded input shapes) and the "
      "throughput it achieved, under the chip's roof: left of the bend memory-bound, right of it compute-bound; "
      "far below the roof means time lost to something else (launches, small shapes, waiting).");
  const ScatterChart roofline = RooflineChart(flops);
  if (!roofline.points.empty()) {
    if (!roofline.roof_peak) out += Unknown("The roof: unknown (the chip or its peak for this dtype is not known).");
    out += RenderScatterChart(roofline) + "</section>\n";
    return out;
  }
  ScatterChart chart =
      LogLogChart("Operators: calls vs mean time", "calls", "mean time (us)", "one operator or kernel (by name)");
  for (const KernelTotal& k : kernels) {  // already by total time: thinning keeps the heavy ones
    if (k.count == 0) continue;
    chart.points.push_back({static_cast<double>(k.count), Micros(k.total_ns) / static_cast<double>(k.count), k.name});
  }
  out += Unknown(
      "Roofline position: unknown. FLOPs and bytes per operator come from record_shapes, which this "
      "trace does not hold. Shown instead: each operator by calls and mean time; many calls with a short "
      "mean point at launch overhead and fusion candidates.");
  out += RenderScatterChart(chart);
  out += "</section>\n";
  return out;
}

// ---- compute units ---------------------------------------------------------------------------------

// A utilization's cells after the rank's: name, value, threshold, and what was measured (or how to).
std::string UtilizationCells(const UtilizationCheck& check) {
  return fmt::format(
      "<td>{}</td><td class=\"n{}\">{}</td><td class=\"n\">{:.0f} %</td><td>{}</td>", E(check.name),
      check.Bottleneck() ? " bad" : "",
      check.value_pct ? fmt::format("{:.1f}%", *check.value_pct) : std::string(kUnknownText), check.threshold_pct,
      E(check.measured_as) +
          (check.Below() && !check.Bottleneck()
               ? fmt::format("<br>below the threshold, but {} only {:.1f} % of the step: not the bottleneck",
                             check.immaterial_part == "compute" ? "compute holds" : check.immaterial_part + " hold",
                             100 * *check.immaterial_share)
               : std::string()) +
          (check.how_to_measure.empty() ? "" : "<br>how to measure: " + E(check.how_to_measure)));
}

// Many ranks: one utilization at a time, consecutive ranks whose cells read the same in one row (1,024 ranks
// of one unknown were 1,024 rows of the same text, and 3,072 bars). Each group keeps its ranks and its
// first check; the cells are rebuilt when written.
struct UtilizationGroup {
  std::vector<int64_t> ranks;
  const UtilizationCheck* check = nullptr;
};

std::vector<UtilizationGroup> FoldUtilizations(const AdvisorResult& advice) {
  size_t checks = 0;
  for (const RankAdvice& rank : advice.ranks) checks = std::max(checks, rank.utilizations.size());
  std::vector<UtilizationGroup> groups;
  for (size_t k = 0; k < checks; ++k) {
    std::string pending;
    bool open = false;
    for (const RankAdvice& rank : advice.ranks) {
      if (k >= rank.utilizations.size()) continue;
      std::string cells = UtilizationCells(rank.utilizations[k]);
      if (!open || cells != pending) {
        groups.push_back(UtilizationGroup{{}, &rank.utilizations[k]});
        pending = std::move(cells);
        open = true;
      }
      groups.back().ranks.push_back(rank.rank);
    }
  }
  return groups;
}

void ComputeSection(const AdvisorResult& advice, Pieces& out) {
  BarChart chart = MarkedBars("chart-compute", "Utilization against the tuning guide's thresholds (%)", "%", "measured",
                              "threshold");
  // The compute units as each rank's platform names them (SM efficiency, Cube, Vector), not all of them.
  std::string units;
  const bool folded = advice.ranks.size() > kRanksListedOneByOne;
  const std::vector<UtilizationGroup> groups = folded ? FoldUtilizations(advice) : std::vector<UtilizationGroup>();
  const auto add = [&](std::string label, const UtilizationCheck& check) {
    chart.categories.push_back(std::move(label));
    chart.series[0].values.push_back(check.value_pct);
    chart.markers.push_back(check.threshold_pct);
    if (check.name != "compute_units" || check.label.empty() || units.find(check.label) != std::string::npos) return;
    units += (units.empty() ? "" : ", ") + check.label;
  };
  if (folded) {
    for (const UtilizationGroup& g : groups)
      add(fmt::format("ranks {} {}", RankRanges(g.ranks), g.check->name), *g.check);
  } else {
    for (const RankAdvice& rank : advice.ranks) {
      for (const UtilizationCheck& check : rank.utilizations)
        add(fmt::format("rank {} {}", rank.rank, check.name), check);
    }
  }
  out += SectionOpen("compute", "Compute-unit utilization vs threshold",
                     "Compute units" + (units.empty() ? std::string() : " (" + units + ")") +
                         ", memory bandwidth and communication bandwidth, each against its threshold (the black "
                         "tick). Bars left of their tick are below the threshold; unknown is not a zero.");
  out += RenderBarChart(chart);
  out +=
      "<table><tr><th>rank</th><th>utilization</th><th class=\"n\">value</th>"
      "<th class=\"n\">threshold</th><th>measured as</th></tr>\n";
  if (advice.ranks.size() <= kRanksListedOneByOne) {
    for (const RankAdvice& rank : advice.ranks) {
      for (const UtilizationCheck& check : rank.utilizations) {
        out += fmt::format("<tr><td>{}</td>{}</tr>\n", rank.rank, UtilizationCells(check));
      }
    }
  } else {
    for (const UtilizationGroup& g : groups) {
      out += fmt::format("<tr><td>{}</td>{}</tr>\n", RankRanges(g.ranks), UtilizationCells(*g.check));
    }
  }
  out += "</table>\n</section>\n";
}

// ---- findings --------------------------------------------------------------------------------------

// As the text prints it: unknown when the rule cannot estimate it, none left when other findings claim
// its time.
std::string GainCell(const Finding& f) {
  if (f.gain_capped()) {
    return MillisText(f.estimated_gain_ns) + " (of " + MillisText(f.uncapped_gain_ns) + ": " + E(f.gain_cut) + ")";
  }
  if (f.estimated_gain_ns > 0) return MillisText(f.estimated_gain_ns);
  if (f.gain_unknown()) return "unknown";
  // A pipeline stage that waits for the bounding one: the cut says why, as the text does.
  if (f.uncapped_gain_ns > 0 && f.gain_cut.starts_with("no step gain")) return E(f.gain_cut);
  return f.uncapped_gain_ns > 0 ? "none left (counted above)" : "none claimed";
}

std::string FindingsSection(const AdvisorResult& advice) {
  BarChart chart;
  chart.id = "chart-findings";
  chart.title = "Estimated gain per finding (ms per step)";
  chart.unit = "ms/step";
  chart.series = {{"estimated gain (capped so gains never add up to more than the step)", std::string(kComputing), {}}};
  Table table({{.header = "finding", .html_name = true},
               {.header = "category"},
               {.header = "gain (ms/step)", .align = Align::kRight},
               {.header = "what to change", .html_name = true},
               {.header = "ranks"}});
  for (const Finding& f : advice.findings) {
    if (f.estimated_gain_ns > 0) {  // an unknown gain is no bar of 0
      chart.categories.push_back(f.id.str());
      chart.series[0].values.push_back(f.estimated_gain_ns / 1e6);
    }
    std::string ranks = RankRanges(f.ranks);
    if (f.others_median_gain_ns && f.ranks.size() > 1) {  // the quoted rank stands out: its cost is not the job's
      ranks += fmt::format(" (figures of rank {}; the others' median {} ms)", f.evidence_rank,
                           MillisText(*f.others_median_gain_ns));
    }
    std::string apis;
    for (const SharedText& api : f.apis) apis += fmt::format("<br><code>{}</code>", EscapeTitle(api));
    std::string modules;  // where the trace has module ranges: the modules holding most of the evidence
    for (const ModuleShare& m : f.modules) {
      modules += fmt::format("{}{:.0f} % in <code>{}</code>", modules.empty() ? "<br>modules: " : ", ", 100 * m.share,
                             NameHtml(m.path));
    }
    table.AddRow({fmt::format("<b>{}</b><br>{}{}", E(f.id), EscapeTitle(f.title), modules),
                  E(FindingCategoryName(f.category)), GainCell(f), EscapeTitle(f.strategy) + apis, E(ranks)});
  }
  std::string out = SectionOpen("findings", "Advisor findings",
                                "Each rule that fired, with its estimated gain per step and what to change.");
  if (advice.findings.empty()) {
    out += RenderEmptyChart(chart.id, chart.title, "no finding: nothing to gain above the advisor's thresholds");
  } else {
    out += chart.categories.empty()
               ? RenderEmptyChart(chart.id, chart.title, "no finding with an estimated gain (see the table)")
               : RenderBarChart(chart);
    out += table.Html();
  }
  out += "</section>\n";
  return out;
}

}  // namespace
}  // namespace tuneprof::html

namespace tuneprof {

void WriteHtmlReport(const HtmlReportInput& input, const std::function<void(std::string_view)>& write) {
  html::Pieces out(write);
  out += html::Head("tuneprof report");
  html::SummarySection(input, out);
  out += html::BreakdownSection(input.breakdowns);
  out += html::KernelsSection(input.kernels);
  html::ComputeSection(input.advice, out);
  out += html::RooflineSection(input.kernels.kernels, input.flops);
  out += html::MemorySection(input.memory);
  out += html::CommSection(input.comm, input.link_matrix);
  out += html::FindingsSection(input.advice);
  out += html::Footer();
}

std::string RenderHtmlReport(const HtmlReportInput& input) {
  std::string out;
  WriteHtmlReport(input, [&](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace tuneprof

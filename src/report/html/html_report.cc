#include "report/html/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/common/format.h"
#include "report/html/svg_chart.h"

namespace tuneprof {
namespace {

constexpr size_t kTopKernels = 20;
constexpr size_t kTopHolders = 10;
constexpr size_t kTopOps = 20;
constexpr size_t kMaxMemorySeries = 12;  // lines in the memory chart (allocated and reserved per device)
constexpr size_t kTableNameChars = 160;  // longer names are cut in tables; the full name is the cell's title

constexpr std::string_view kComputing = "#2ca02c";
constexpr std::string_view kExposedComm = "#d62728";
constexpr std::string_view kMemcpy = "#ff7f0e";
constexpr std::string_view kOther = "#9467bd";
constexpr std::string_view kFree = "#c7c7c7";
constexpr std::string_view kBefore = "#7f7f7f";
constexpr std::string_view kAfter = "#1f77b4";
constexpr std::array<std::string_view, 8> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// No script, no network: the policy makes injected markup inert even if escaping ever failed.
constexpr std::string_view kHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{}</title>
<style>
body {{ font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 0 auto;
       max-width: 960px; padding: 16px; }}
h1 {{ font-size: 22px; margin: 0 0 4px; }} h2 {{ font-size: 18px; border-bottom: 1px solid #ddd; padding-bottom: 2px; }}
section {{ margin: 20px 0 28px; break-inside: avoid; }}
caption {{ text-align: left; }}
table {{ border-collapse: collapse; font-size: 12.5px; margin: 8px 0; display: block; overflow-x: auto; max-width: 100%; }}
th, td {{ border-bottom: 1px solid #eee; padding: 3px 8px; text-align: left; vertical-align: top; }}
td.n, th.n {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
td.name {{ max-width: 420px; overflow-wrap: anywhere; }}
.verdict {{ font-size: 17px; font-weight: 600; padding: 8px 12px; background: #f4f6fa; border-left: 4px solid #1f77b4; }}
.what {{ color: #555; font-size: 12.5px; }} .unknown {{ color: #888; font-style: italic; }}
.good {{ color: #2a7d2a; }} .bad {{ color: #b22; }}
svg.chart {{ display: block; max-width: 100%; height: auto; margin: 6px 0; }}
svg .ct {{ font-size: 13px; font-weight: 600; fill: #222; }} svg .bl, svg .tl, svg .lg {{ font-size: 11px; fill: #333; }}
svg .au {{ font-size: 11.5px; fill: #444; }} svg .uk, svg .nt {{ font-size: 11px; fill: #888; font-style: italic; }}
svg .ax {{ stroke: #444; stroke-width: 1; }} svg .tk {{ stroke: #444; }} svg .gr {{ stroke: #eee; }}
code {{ font-size: 12px; overflow-wrap: anywhere; }}
footer {{ color: #888; font-size: 12px; margin-top: 32px; }}
@media print {{ body {{ max-width: none; }} section {{ page-break-inside: avoid; }} }}
</style>
</head>
<body>
)";

std::string E(std::string_view text) { return EscapeXml(text); }

// A trace's name in running text or a cell: whole up to kTableNameChars, else cut there with the name
// (bounded by kMaxTitleBytes) once in a tooltip, so that a name of megabytes cannot make the page as big.
std::string NameHtml(std::string_view name) {
  if (name.size() <= kTableNameChars) return E(name);
  return fmt::format("<span title=\"{}\">{}</span>", EscapeTitle(name), E(ShortLabel(name, kTableNameChars)));
}
std::string MiB(int64_t bytes) {
  return bytes == kNoId ? std::string(kUnknownText) : fmt::format("{:.1f}", static_cast<double>(bytes) / 1048576.0);
}

std::string Head(std::string_view title) { return fmt::format(fmt::runtime(kHead), E(title)); }

std::string SectionOpen(std::string_view id, std::string_view heading, std::string_view what) {
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"what\">{}</p>\n", id, E(heading), E(what));
}

std::string Unknown(std::string_view why) { return fmt::format("<p class=\"unknown\">{}</p>\n", E(why)); }

// The page handed to its writer about 64 KB at a time: the tables that grow with the ranks (thousands of
// rows at 1,024 ranks, over a megabyte of text) are never whole in memory.
class Pieces {
 public:
  explicit Pieces(const std::function<void(std::string_view)>& write) : write_(write) {}
  Pieces(const Pieces&) = delete;
  Pieces& operator=(const Pieces&) = delete;
  ~Pieces() { Flush(); }

  Pieces& operator+=(std::string_view text) {
    buffer_ += text;
    if (buffer_.size() >= kPieceBytes) Flush();
    return *this;
  }

 private:
  static constexpr size_t kPieceBytes = 64 << 10;
  void Flush() {
    if (buffer_.empty()) return;
    write_(buffer_);
    buffer_.clear();
  }
  const std::function<void(std::string_view)>& write_;
  std::string buffer_;
};

// ---- summary ---------------------------------------------------------------------------------------

// One row of the summary's split table: the rank (or `label`) and its mean step's parts.
// The pipeline bubble and the unclassified columns show only where a rank has one.
struct SplitColumns {
  bool bubble = false;
  bool unclassified = false;
};

// The parts in the order of the table: the unclassified work beside the compute- and memory-bound.
constexpr std::array kSplitColumnOrder = std::to_array<TimePart>(
    {TimePart::kComputeBound, TimePart::kMemoryBound, TimePart::kUnclassified, TimePart::kCommunication,
     TimePart::kMemcpy, TimePart::kHostWait, TimePart::kData, TimePart::kIdle, TimePart::kPipelineBubble});
static_assert(kSplitColumnOrder.size() == static_cast<size_t>(TimePart::kCount));

bool ShownColumn(TimePart part, SplitColumns columns) {
  if (part == TimePart::kPipelineBubble) return columns.bubble;
  return part != TimePart::kUnclassified || columns.unclassified;
}

std::string SplitRow(std::string_view label, std::string_view steps, const TimeSplit& split, SplitColumns columns) {
  std::string row = fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>", E(label), steps,
                                MillisText(split.step_ns));
  for (const TimePart part : kSplitColumnOrder) {
    // Computing that no operator classes (a rank with only torch_npu's step table) is neither part: the
    // text and the JSON (compute_classes_known) say so too.
    if (!ShownColumn(part, columns)) continue;
    if (!split.compute_classes_known && part == TimePart::kComputeBound) {
      row += fmt::format("<td class=\"n\">{}</td>", kEmptyCell);
    } else if (!split.compute_classes_known && part == TimePart::kMemoryBound) {
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
    header += fmt::format("<th class=\"n\">{}</th>", E(name));
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
      out += SplitRow(fmt::format("{} (slowest)", slowest.rank), std::to_string(slowest.split.steps), slowest.split, columns);
      out += SplitRow(fmt::format("{} (fastest)", fastest.rank), std::to_string(fastest.split.steps), fastest.split, columns);
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
    }
  }
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
  std::string out = SectionOpen(
      "breakdown", "Per-rank, per-step breakdown",
      "Each bar is one step of one rank: device time computing, communicating while nothing computes (exposed), "
      "copying while nothing else runs, syncs, and free time with no device work. The parts add up to the step's "
      "wall time on the device.");
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
  std::string table =
      "<table><tr><th>name</th><th class=\"n\">count</th><th class=\"n\">total (ms)</th>"
      "<th class=\"n\">mean (us)</th><th class=\"n\">share</th></tr>\n";
  for (size_t i = 0; i < std::min(kernels.size(), kTopKernels); ++i) {
    const KernelTotal& k = kernels[i];
    chart.categories.push_back(k.name);
    chart.series[0].values.push_back(k.total_ns / 1e6);
    table += fmt::format(
        "<tr><td class=\"name\" title=\"{}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
        "<td class=\"n\">{:.2f}</td><td class=\"n\">{}</td></tr>\n",
        EscapeTitle(k.name), E(ShortLabel(k.name, kTableNameChars)), k.count, MillisText(static_cast<double>(k.total_ns)),
        k.count ? k.total_ns / 1e3 / static_cast<double>(k.count) : 0.0,
        total_ns > 0 ? PercentCell(static_cast<double>(k.total_ns) / static_cast<double>(total_ns))
                     : std::string(kUnknownText));
  }
  table += "</table>\n";
  std::string out = SectionOpen("kernels", "Top operators and kernels",
                                "The " + what_name +
                                    " that take the most time, summed over ranks. Shares are of the summed "
                                    "durations (work on different streams overlaps).");
  out += kernels.empty() ? RenderEmptyChart(chart.id, chart.title, "no kernels or operators in the trace")
                         : RenderBarChart(chart);
  out += table + "</section>\n";
  return out;
}

// Operators with FLOPs, bytes and time: intensity vs achieved GFLOP/s, under the chip's roof.
ScatterChart RooflineChart(const std::vector<RankOpFlops>& ranks) {
  ScatterChart chart;
  chart.id = "chart-roofline";
  chart.title = "Roofline: operators by arithmetic intensity and achieved throughput";
  chart.x_unit = "arithmetic intensity (FLOP/byte)";
  chart.y_unit = "achieved GFLOP/s";
  chart.log_x = true;
  chart.log_y = true;
  chart.series_name = "one operator (by name and rank)";
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
  ScatterChart chart;
  chart.id = "chart-roofline";
  chart.title = "Operators: calls vs mean time";
  chart.x_unit = "calls";
  chart.y_unit = "mean time (us)";
  chart.log_x = true;
  chart.log_y = true;
  chart.series_name = "one operator or kernel (by name)";
  for (const KernelTotal& k : kernels) {  // already by total time: thinning keeps the heavy ones
    if (k.count == 0) continue;
    chart.points.push_back({static_cast<double>(k.count), k.total_ns / 1e3 / static_cast<double>(k.count), k.name});
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
  BarChart chart;
  chart.id = "chart-compute";
  chart.title = "Utilization against the tuning guide's thresholds (%)";
  chart.unit = "%";
  chart.series = {{"measured", std::string(kAfter), {}}};
  chart.marker_name = "threshold";
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

// ---- memory ----------------------------------------------------------------------------------------

std::string MemorySection(const std::vector<MemoryAnalysis>& ranks) {
  LineChart chart;
  chart.id = "chart-memory";
  chart.title = "Device memory over time (MiB)";
  chart.x_unit = "time since the trace's start (ms)";
  chart.y_unit = "MiB";
  const DeviceMemory* peak_device = nullptr;
  const MemoryAnalysis* peak_rank = nullptr;
  size_t color = 0;
  for (const MemoryAnalysis& rank : ranks) {
    for (const DeviceMemory& device : rank.devices) {
      if (device.timeline.empty()) continue;
      const int64_t origin = rank.trace_start_ns != kNoId ? rank.trace_start_ns : device.timeline.front().ts_ns;
      LineSeries allocated{fmt::format("rank {} {} allocated", rank.rank, device.device),
                           std::string(kPalette[color++ % kPalette.size()]),
                           {}};
      LineSeries reserved{fmt::format("rank {} {} reserved", rank.rank, device.device),
                          std::string(kPalette[color++ % kPalette.size()]),
                          {}};
      for (const MemoryPoint& p : device.timeline) {
        const double x = (p.ts_ns - origin) / 1e6;
        allocated.points.push_back({x, p.allocated_bytes / 1048576.0});
        if (p.reserved_bytes != kNoId) reserved.points.push_back({x, p.reserved_bytes / 1048576.0});
      }
      chart.series.push_back(std::move(allocated));
      // CPU allocators report no reservation (0): a flat zero line would read as a measurement.
      const bool any_reserved =
          std::any_of(reserved.points.begin(), reserved.points.end(), [](const LinePoint& p) { return p.y > 0; });
      if (any_reserved) chart.series.push_back(std::move(reserved));
      if (device.peak_allocated_bytes != kNoId &&
          (!peak_device || device.peak_allocated_bytes > peak_device->peak_allocated_bytes)) {
        peak_device = &device;
        peak_rank = &rank;
        chart.mark = LinePoint{(device.peak_allocated_ns - origin) / 1e6, device.peak_allocated_bytes / 1048576.0};
      }
    }
  }
  if (chart.series.size() > kMaxMemorySeries) {
    chart.title += fmt::format(" (first {} of {} series shown)", kMaxMemorySeries, chart.series.size());
    chart.series.resize(kMaxMemorySeries);
  }
  std::string out = SectionOpen("memory", "Memory timeline, peak and top holders",
                                "Allocated and reserved device memory over time from the allocator's events "
                                "(down-sampled for display, peaks kept), the peak marked, and the operators whose "
                                "tensors were alive at the peak.");
  if (chart.series.empty()) {
    out += RenderEmptyChart(chart.id, chart.title,
                            "unknown: the trace holds no allocator ([memory]) events (profile_memory was off)");
  } else {
    chart.mark_label =
        fmt::format("peak {} MiB (rank {} {}, op {})", MiB(peak_device->peak_allocated_bytes), peak_rank->rank,
                    peak_device->device, peak_device->peak_op.empty() ? "none" : peak_device->peak_op);
    out += RenderLineChart(chart);
  }
  for (const MemoryAnalysis& rank : ranks) {
    for (const DeviceMemory& device : rank.devices) {
      if (device.peak_allocated_bytes == kNoId) continue;
      out += fmt::format(
          "<p>rank {} {}: peak allocated {} MiB, peak reserved {}, at op <code>{}</code> "
          "(source: {})</p>\n",
          rank.rank, E(device.device), MiB(device.peak_allocated_bytes),
          device.peak_reserved_bytes == kNoId ? std::string("unknown")
                                              : fmt::format("{} MiB", MiB(device.peak_reserved_bytes)),
          NameHtml(device.peak_op.empty() ? "none" : device.peak_op), E(device.peak_source));
      if (device.holders.empty()) continue;
      out +=
          "<table><tr><th>allocating op</th><th class=\"n\">MiB at peak</th><th class=\"n\">blocks</th>"
          "<th class=\"n\">never freed</th></tr>\n";
      for (size_t i = 0; i < std::min(device.holders.size(), kTopHolders); ++i) {
        const PeakHolder& h = device.holders[i];
        out += fmt::format(
            "<tr><td class=\"name\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
            "<td class=\"n\">{}</td></tr>\n",
            NameHtml(h.op.empty() ? "(no host op)" : h.op), MiB(h.bytes), h.blocks, h.never_freed_blocks);
      }
      out += "</table>\n";
    }
  }
  out += "</section>\n";
  return out;
}

// ---- communication ---------------------------------------------------------------------------------

BarChart BandwidthChart(const CommAnalysis& comm) {
  BarChart chart;
  chart.id = "chart-comm-bandwidth";
  chart.title = "Bus bandwidth per collective type against the link peak (GB/s)";
  chart.unit = "GB/s";
  chart.series = {{"bus bandwidth (duration-weighted)", std::string(kAfter), {}}};
  chart.marker_name = "link peak";
  for (const RankCommunication& rank : comm.ranks) {
    for (const CollectiveTypeSummary& type : rank.by_type) {
      chart.categories.push_back(fmt::format("rank {} {} ({})", rank.rank, CollectiveTypeName(type.type), type.count));
      chart.series[0].values.push_back(type.busbw_gbps);
      chart.markers.push_back(rank.link.peak_gb_per_s);
    }
    for (const AscendTransportTotal& t : rank.ascend_transports) {
      chart.categories.push_back(fmt::format("rank {} {} (communication.json)", rank.rank, t.transport));
      chart.series[0].values.push_back(t.bandwidth_gbps);
      std::optional<double> peak;
      if (t.bandwidth_gbps && t.utilization && *t.utilization > 0) peak = *t.bandwidth_gbps / *t.utilization;
      chart.markers.push_back(peak);
    }
  }
  return chart;
}

HeatMap MatrixChart(const RankLinkMatrix& matrix) {
  HeatMap map;
  map.id = "chart-comm-matrix";
  map.row_axis = "source rank";
  map.column_axis = "destination rank";
  if (matrix.source == LinkMatrixSource::kAscendBandwidth) {
    map.title = "Rank-to-rank bandwidth (communication_matrix.json, GB/s)";
    map.unit = "GB/s";
  } else {
    map.title = "Rank-to-rank traffic: bytes of collectives shared by both ranks (GB)";
    map.unit = "GB";
  }
  const auto& cells = matrix.cells;
  std::set<int64_t> sources, destinations;
  for (const auto& [key, v] : cells) {
    sources.insert(key.first);
    destinations.insert(key.second);
  }
  // A block of ranks is labelled by its range: "0-15".
  const auto label = [&](int64_t first) {
    const int64_t last = first > INT64_MAX - matrix.block ? INT64_MAX : first + matrix.block - 1;
    return matrix.block == 1 ? std::to_string(first) : fmt::format("{}-{}", first, last);
  };
  if (matrix.block > 1) {
    map.title += fmt::format(", mean over the rank pairs of blocks of {} ranks", matrix.block);
    map.row_axis = "source ranks";
    map.column_axis = "destination ranks";
  }
  for (int64_t id : sources) map.rows.push_back(label(id));
  for (int64_t id : destinations) map.columns.push_back(label(id));
  for (int64_t src : sources) {
    std::vector<std::optional<double>> row;
    for (int64_t dst : destinations) {
      auto it = cells.find({src, dst});
      row.push_back(it == cells.end() ? std::nullopt : std::optional<double>(it->second));
    }
    map.values.push_back(std::move(row));
  }
  return map;
}

std::string CommSection(const CommAnalysis& comm, const RankLinkMatrix& link_matrix) {
  std::string out = SectionOpen(
      "comm", "Collective bandwidth and the rank-to-rank matrix",
      "Bus bandwidth (nccl-tests definitions) of each rank's collectives by type against the link's peak (the "
      "black tick), then how much each pair of ranks exchanged.");
  const BarChart bandwidth = BandwidthChart(comm);
  out += bandwidth.categories.empty() ? RenderEmptyChart(bandwidth.id, bandwidth.title, "no collectives in the trace")
                                      : RenderBarChart(bandwidth);
  const HeatMap matrix = MatrixChart(link_matrix);
  out += matrix.rows.empty() ? RenderEmptyChart(matrix.id, "Rank-to-rank matrix",
                                                "unknown: no collective names its group's ranks with known bytes, "
                                                "and no communication_matrix.json")
                             : RenderHeatMap(matrix);
  out += fmt::format("<p>Communication is {}a bottleneck.</p>\n", comm.bottleneck ? "" : "not ");
  if (!comm.reasons.empty()) {
    out += "<ul>";
    if (comm.ranks.size() <= kRanksListedOneByOne) {
      for (const std::string& reason : comm.reasons) out += fmt::format("<li>{}</li>", E(reason));
    } else {  // one line per rule, its ranks folded: a thousand alike lines hide the verdict
      for (const ReasonGroup& group : comm.reason_groups) {
        std::vector<std::string> figures;
        for (const ReasonFigure& f : group.figures) figures.push_back(ValueRange(f.min, f.max, f.decimals, f.unit));
        out += fmt::format("<li>{}</li>", E(FoldedOverRanks(group.ranks, group.what, figures)));
      }
    }
    out += "</ul>\n";
  }
  if (comm.cross_rank.straggler_rank && comm.cross_rank.straggler_stands_out) {
    out +=
        fmt::format("<p>Straggler: rank {} ({})", *comm.cross_rank.straggler_rank, E(comm.cross_rank.straggler_reason));
    if (comm.cross_rank.slow_rank_rules_disagree()) {
      out += fmt::format(
          "; the HCCL wait ratios name rank {} instead: the arrivals are measured per collective, the ratios are "
          "totals",
          *comm.cross_rank.ascend_slow_rank);
    }
    out += "</p>\n";
  } else if (comm.cross_rank.straggler_rank && comm.cross_rank.straggler_within_clock_uncertainty) {
    out += fmt::format("<p>No straggler named: rank {} ({}); align the hosts' clocks and profile again.</p>\n",
                       *comm.cross_rank.straggler_rank, E(comm.cross_rank.straggler_reason));
  } else if (comm.cross_rank.straggler_rank) {
    out += fmt::format("<p>No straggler stands out: rank {} made the others wait longest ({}).</p>\n",
                       *comm.cross_rank.straggler_rank, E(comm.cross_rank.straggler_reason));
  }
  const ClockAlignment& clocks = comm.cross_rank.clocks;
  if (clocks.applied) {
    out += fmt::format("<p>Clocks: offsets from rank {}'s clock, taken out before comparing arrivals:",
                       *clocks.reference_rank);
    std::vector<const RankClockOffset*> applied;
    for (const RankClockOffset& r : clocks.ranks) {
      if (r.applied) applied.push_back(&r);
    }
    if (applied.size() <= kRanksListedOneByOne) {
      for (size_t i = 0; i < applied.size(); ++i) {
        out += fmt::format(" rank {} {:+.3f} ms &plusmn; {:.3f} ms{}", applied[i]->rank,
                           static_cast<double>(*applied[i]->offset_ns) / 1e6,
                           static_cast<double>(applied[i]->uncertainty_ns) / 1e6, i + 1 < applied.size() ? ";" : ".");
      }
    } else {
      const auto [low, high] = std::minmax_element(
          applied.begin(), applied.end(), [](const auto* a, const auto* b) { return *a->offset_ns < *b->offset_ns; });
      out += fmt::format(" {} ranks, from {:+.3f} to {:+.3f} ms (tuneprof comm --json lists each)", applied.size(),
                         static_cast<double>(*(*low)->offset_ns) / 1e6, static_cast<double>(*(*high)->offset_ns) / 1e6);
    }
    out += "</p>\n";
  }
  if (const auto& p = comm.cross_rank.pipeline) {
    out += fmt::format(
        "<p>Pipeline stages ({}{} groups of {} ranks): stage {} computes most and bounds the step; imbalance "
        "{:.1f} % ((slowest &minus; fastest) / slowest), bubbles {:.1f} % of the staged ranks' "
        "steps.</p>\n<table><tr><th>stage</th><th>ranks</th><th>computing ms / step</th><th>p2p wait ms / step</th>"
        "<th>bubble ms / step</th><th>step ms / step</th></tr>\n",
        p->inferred ? "inferred from the p2p pattern, as no group names them: " : "", E(p->group_name),
        p->pipeline_size, p->slowest_stage, 100 * p->imbalance, 100 * p->bubble_share);
    for (const PipelineStage& st : p->stages) {
      // No per-operation wait in the input (a cluster CSV): not a measured 0.
      const std::string wait = st.p2p_wait_measure == P2pWaitMeasure::kNone
                                   ? std::string("-")
                                   : fmt::format("{:.3f}", st.p2p_wait_ns_per_step / 1e6);
      out += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.3f}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td></tr>\n",
                         st.stage, RankRanges(st.ranks), st.computing_ns_per_step / 1e6, wait,
                         st.bubble_ns_per_step / 1e6, st.step_ns_per_step / 1e6);
    }
    out += "</table>\n";
  }
  out += "</section>\n";
  return out;
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
  return f.uncapped_gain_ns > 0 ? "none left (counted above)" : "none claimed";
}

std::string FindingsSection(const AdvisorResult& advice) {
  BarChart chart;
  chart.id = "chart-findings";
  chart.title = "Estimated gain per finding (ms per step)";
  chart.unit = "ms/step";
  chart.series = {{"estimated gain (capped so gains never add up to more than the step)", std::string(kComputing), {}}};
  std::string table =
      "<table><tr><th>finding</th><th>category</th><th class=\"n\">gain (ms/step)</th>"
      "<th>what to change</th><th>ranks</th></tr>\n";
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
    table += fmt::format(
        "<tr><td class=\"name\"><b>{}</b><br>{}{}</td><td>{}</td><td class=\"n\">{}</td>"
        "<td class=\"name\">{}{}</td><td>{}</td></tr>\n",
        E(f.id), EscapeTitle(f.title), modules, E(FindingCategoryName(f.category)), GainCell(f),
        EscapeTitle(f.strategy), apis, E(ranks));
  }
  table += "</table>\n";
  std::string out = SectionOpen("findings", "Advisor findings",
                                "Each rule that fired, with its estimated gain per step and what to change.");
  if (advice.findings.empty()) {
    out += RenderEmptyChart(chart.id, chart.title, "no finding: nothing to gain above the advisor's thresholds");
  } else {
    out += chart.categories.empty()
               ? RenderEmptyChart(chart.id, chart.title, "no finding with an estimated gain (see the table)")
               : RenderBarChart(chart);
    out += table;
  }
  out += "</section>\n";
  return out;
}

std::string Footer() {
  return "<footer>Generated by tuneprof. Self-contained: no scripts, no network.</footer>\n</body>\n</html>\n";
}

// ---- compare ---------------------------------------------------------------------------------------

std::string SideText(const CompareSide& side) {
  std::string paths;  // each input once: the ranks of one file share its path
  for (size_t i = 0; i < side.paths.size(); ++i) {
    if (i == 0 || side.paths[i] != side.paths[i - 1]) paths += (paths.empty() ? "" : ", ") + side.paths[i];
  }
  return fmt::format("{} ({} rank{}, {} step{})", paths, side.ranks, side.ranks == 1 ? "" : "s", side.step_ns.size(),
                     side.step_ns.size() == 1 ? "" : "s");
}

std::string Opt(const std::optional<double>& v, std::string_view format = "{:.3f}") {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string(kUnknownText);
}

std::string CompareSummary(const CompareResult& result) {
  std::string out = SectionOpen("summary", "Summary and verdict",
                                "Did the change help? Step time before and after, "
                                "judged by the bootstrap interval and the rank test.");
  const MetricComparison* step = result.Find("step_time_us");
  if (step) {
    out += fmt::format("<p class=\"verdict\">Step time: {} → {} us ({}): {}</p>\n", Opt(step->before, "{:.1f}"),
                       Opt(step->after, "{:.1f}"), ChangePercent(step->delta_pct, 2), E(MetricVerdictText(*step)));
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
  out +=
      "<table><tr><th>metric</th><th>unit</th><th class=\"n\">before</th><th class=\"n\">after</th>"
      "<th class=\"n\">change</th><th>test</th><th>verdict</th></tr>\n";
  for (const MetricComparison& m : result.metrics) {
    const MetricVerdict verdict = JudgeMetric(m);
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
        "<td>{}</td><td class=\"{}\">{}</td></tr>\n",
        E(m.key), E(m.unit), Opt(m.before), Opt(m.after), ChangePercent(m.delta_pct, 2), E(m.test),
        verdict == MetricVerdict::kBetter ? "good" : (verdict == MetricVerdict::kWorse ? "bad" : ""),
        E(MetricVerdictText(m)));
  }
  // The verdict of analyze on each side, as compare's table ends with it.
  const std::string& before = result.before.verdict.dominant;
  const std::string& after = result.after.verdict.dominant;
  const bool unknown = before == kUnknownText || after == kUnknownText;
  out += fmt::format(
      "<tr><td>dominant_bottleneck</td><td></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td></td>"
      "<td></td><td>{}</td></tr>\n",
      E(before), E(after), unknown ? std::string(kUnknownText) : (before == after ? "same" : "changed"));
  out += "</table>\n</section>\n";
  return out;
}

std::string CompareBreakdownSection(const CompareResult& result) {
  BarChart bars;
  bars.id = "chart-compare-breakdown";
  bars.title = "Mean per step, before vs after (ms)";
  bars.unit = "ms";
  bars.series = {{"before", std::string(kBefore), {}}, {"after", std::string(kAfter), {}}};
  // The bars are the metrics' own means (the table's before and after), so chart and table agree.
  const auto add_bar = [&](std::string label, const MetricComparison& metric) {
    bars.categories.push_back(std::move(label));
    bars.series[0].values.push_back(metric.before ? std::optional<double>(*metric.before / 1e3) : std::nullopt);
    bars.series[1].values.push_back(metric.after ? std::optional<double>(*metric.after / 1e3) : std::nullopt);
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
  BarChart bars;
  bars.id = "chart-op-diff";
  bars.title = "Operators with the largest change, time per step (ms)";
  bars.unit = "ms/step";
  bars.series = {{"before", std::string(kBefore), {}}, {"after", std::string(kAfter), {}}};
  std::string table =
      "<table><tr><th>operator</th><th>time</th><th>calls</th><th class=\"n\">count before</th>"
      "<th class=\"n\">count after</th><th class=\"n\">ms/step before</th>"
      "<th class=\"n\">ms/step after</th></tr>\n";
  for (size_t i = 0; i < std::min(result.ops.ops.size(), kTopOps); ++i) {
    const OperatorDelta& op = result.ops.ops[i];
    bars.categories.push_back(op.name);
    bars.series[0].values.push_back(op.before_ns / 1e6);
    bars.series[1].values.push_back(op.after_ns / 1e6);
    table += fmt::format(
        "<tr><td class=\"name\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{:.2f}</td><td class=\"n\">{:.2f}"
        "</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
        NameHtml(op.name), E(TimeChangeWord(op.delta_ns())), E(CountChangeWord(op.change)), op.before_count, op.after_count,
        MillisText(op.before_ns), MillisText(op.after_ns));
  }
  table += "</table>\n";
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
  out += table + "</section>\n";
  return out;
}

}  // namespace

void WriteHtmlReport(const HtmlReportInput& input, const std::function<void(std::string_view)>& write) {
  Pieces out(write);
  out += Head("tuneprof report");
  out += "<h1>tuneprof report</h1>\n";
  SummarySection(input, out);
  out += BreakdownSection(input.breakdowns);
  out += KernelsSection(input.kernels);
  ComputeSection(input.advice, out);
  out += RooflineSection(input.kernels.kernels, input.flops);
  out += MemorySection(input.memory);
  out += CommSection(input.comm, input.link_matrix);
  out += FindingsSection(input.advice);
  out += Footer();
}

std::string RenderHtmlReport(const HtmlReportInput& input) {
  std::string out;
  WriteHtmlReport(input, [&](std::string_view piece) { out += piece; });
  return out;
}

std::string RenderHtmlCompareReport(const CompareResult& result) {
  std::string out = Head("tuneprof compare report");
  out += "<h1>tuneprof compare report</h1>\n";
  out += CompareSummary(result);
  out += MetricsSection(result);
  out += CompareBreakdownSection(result);
  out += OpsSection(result);
  out += Footer();
  return out;
}

// ---- memory snapshot --------------------------------------------------------------------------------

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
      series.points.push_back({static_cast<double>(d.timeline[p].time_us - d.first_time_us) / 1e3,
                               static_cast<double>(sums[p]) / 1048576.0});
    }
    chart.series.push_back(std::move(series));
  }
  LineSeries reserved{"reserved", "#7f7f7f", {}};
  for (const SnapshotTimelinePoint& point : d.timeline) {
    reserved.points.push_back(
        {static_cast<double>(point.time_us - d.first_time_us) / 1e3, static_cast<double>(point.reserved) / 1048576.0});
  }
  chart.series.push_back(std::move(reserved));
  chart.mark = LinePoint{static_cast<double>(d.peak_time_us - d.first_time_us) / 1e3,
                         static_cast<double>(d.peak_allocated) / 1048576.0};
  chart.mark_label = fmt::format("peak {} MiB", MiB(static_cast<int64_t>(d.peak_allocated)));
  return chart;
}

std::string SnapshotFramesTable(const SnapshotDeviceMemory& d) {
  std::string out =
      "<table><tr><th>allocating frame at the peak</th><th class=\"n\">MiB</th>"
      "<th class=\"n\">blocks</th></tr>\n";
  for (size_t i = 0; i < d.peak_frames.size() && i < kSnapshotTopFrames; ++i) {
    const SnapshotFrameBytes& g = d.peak_frames[i];
    out += fmt::format("<tr><td class=\"name\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
                       NameHtml(FrameLabel(g.frame)), MiB(static_cast<int64_t>(g.bytes)), g.blocks);
  }
  return out + "</table>\n";
}

std::string SnapshotStrategiesTable(const SnapshotDeviceMemory& d) {
  if (d.strategies.empty()) return Unknown("no strategy: no category, fragmentation or leak stands out");
  std::string out =
      "<table><tr><th>category</th><th class=\"n\">MiB at stake</th><th class=\"n\">MiB to save "
      "(est.)</th><th>what to try, and why</th></tr>\n";
  for (const SnapshotStrategy& s : d.strategies) {
    out += fmt::format(
        "<tr><td>{}{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td><code>{}</code>: {}</td></tr>\n",
        E(s.category), s.holds_peak ? " (holds the peak)" : "", MiB(static_cast<int64_t>(s.bytes)),
        MiB(static_cast<int64_t>(s.saving)), E(s.action), E(s.why));
  }
  return out + "</table>\n";
}

std::string SnapshotDeviceSection(const SnapshotDeviceMemory& d) {
  std::string out = SectionOpen(fmt::format("snapshot-device-{}", d.device), fmt::format("Device {}", d.device),
                                "Allocated memory over the recorded trace, stacked by the frames that hold most of "
                                "the peak (each line adds its frame's bytes to those below it), reserved memory, "
                                "the peak's holders and what to try.");
  out += fmt::format(
      "<p>at the dump: reserved {} MiB, allocated {} MiB in {} segments; peak allocated {} MiB, "
      "reserved then {} MiB</p>\n",
      MiB(static_cast<int64_t>(d.reserved_at_dump)), MiB(static_cast<int64_t>(d.allocated_at_dump)), d.segments,
      MiB(static_cast<int64_t>(d.peak_allocated)), MiB(static_cast<int64_t>(d.reserved_at_peak)));
  const LineChart chart = SnapshotTimelineChart(d);
  out += d.timeline.empty() ? RenderEmptyChart(chart.id, chart.title,
                                               "unknown: no allocator trace recorded (record_memory_history was off)")
                            : RenderLineChart(chart);
  out += SnapshotFramesTable(d) + SnapshotStrategiesTable(d);
  return out + "</section>\n";
}

}  // namespace

std::string RenderHtmlSnapshotReport(const SnapshotAnalysis& analysis) {
  std::string out = Head("tuneprof memory snapshot report");
  out += "<h1>tuneprof memory snapshot report</h1>\n";
  out += fmt::format("<p>{}{}</p>\n", E(analysis.path),
                     analysis.expandable_segments_setting ? " (expandable segments on)" : "");
  for (const SnapshotDeviceMemory& d : analysis.devices) out += SnapshotDeviceSection(d);
  if (analysis.devices.empty()) out += Unknown("no segments and no trace: the allocator held nothing");
  out += Footer();
  return out;
}

}  // namespace tuneprof

// Hostile strings: names that come from a trace cannot open markup, end an attribute or break a chart
// in the HTML report, nor break the JSON of the annotated trace.
#include "report/html/html_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "analysis/advisor/advisor_config.h"
#include "analysis/core/hand_built_trace_for_test.h"
#include "report/html/svg_chart.h"
#include "report/trace/annotated_trace.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

constexpr std::string_view kHostileKernel = "</svg><script>alert(1)</script>\"'&<b>";
constexpr std::string_view kHostileOp = "aten::x\" onload=\"alert(2)";

size_t Count(std::string_view haystack, std::string_view needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string_view::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Two steps of hostile kernels launched by a hostile operator, with allocator events inside it.
Trace HostileTrace(std::string_view kernel = kHostileKernel, std::string_view op = kHostileOp) {
  HandBuiltTrace hand;
  for (int step = 0; step < 2; ++step) {
    const int64_t base = Us(1000) * step;
    hand.Step(step, base, Us(900));
    hand.Host(EventKind::kHostOp, op, base + Us(10), Us(100));
    hand.Launch(base + Us(20), 10 + step);
    hand.Kernel(kernel, base + Us(200), Us(300), 10 + step);
    MemoryEvent memory;
    memory.ts_ns = base + Us(30);
    memory.track = hand.mutable_builder()->TrackFor(ProcessKey{100, false}, ProcessKey{1, false});
    memory.event = hand.Host(EventKind::kInstant, "[memory]", memory.ts_ns, -1);
    memory.address = 4096 + step;
    memory.bytes = 1 << 20;
    memory.total_allocated = (step + 1) << 20;
    memory.total_reserved = 4 << 20;
    memory.device_type = 1;
    memory.device_id = 0;
    hand.mutable_builder()->AddMemoryEvent(memory);
  }
  return hand.Finish();
}

struct Analyzed {
  std::vector<Trace> traces;
  HtmlReportInput input;
};

Analyzed Analyze(std::string_view kernel = kHostileKernel, std::string_view op = kHostileOp) {
  Analyzed out;
  out.traces.push_back(HostileTrace(kernel, op));
  const Trace& trace = out.traces.front();
  std::vector<HardwareSelection> hardware(1);
  out.input.paths = {std::string(kHostileKernel) + ".json"};
  out.input.breakdowns.push_back(ComputeTimeBreakdown(trace));
  const KernelBreakdown kernels[] = {ComputeKernelBreakdown(trace)};
  out.input.kernels = SumKernelsAcrossRanks(kernels);
  out.input.memory.push_back(AnalyzeMemory(trace, hardware[0]));
  out.input.comm = AnalyzeCommunication(out.traces, out.input.breakdowns, hardware);
  out.input.link_matrix = BuildRankLinkMatrix(out.input.comm);
  const RankComputeUnits compute = ComputeRankComputeUnits(trace, out.input.breakdowns[0], hardware[0]);
  out.input.advice =
      RunAdvisor({RankInputs{&trace, &out.input.breakdowns[0], &compute, &hardware[0]}}, AdvisorConfig());
  return out;
}

void ExpectInert(const std::string& html) {
  const std::string lower = Lower(html);
  EXPECT_EQ(Count(lower, "<script"), 0u);
  EXPECT_EQ(Count(html, "alert(1)</script>"), 0u);
  EXPECT_EQ(Count(html, "onload=\""), 0u);
  EXPECT_EQ(Count(html, "&<b>"), 0u);
  // Every chart that opens closes, and nothing else closes one.
  EXPECT_EQ(Count(html, "<svg "), Count(html, "</svg>"));
}

TEST(HtmlReportTest, HostileNamesAreEscapedEverywhere) {
  const Analyzed analyzed = Analyze();
  ASSERT_FALSE(analyzed.input.kernels.kernels.empty());
  const std::string html = RenderHtmlReport(analyzed.input);
  ExpectInert(html);
  // The names are there, as text.
  EXPECT_GT(Count(html, "&lt;/svg&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;&lt;b&gt;"), 0u);
  EXPECT_GT(Count(html, "aten::x&quot; onload=&quot;alert(2)"), 0u);
  for (const char* id : kReportSections) EXPECT_EQ(Count(html, fmt::format("<section id=\"{}\">", id)), 1u) << id;
  for (const char* id : kReportCharts) EXPECT_EQ(Count(html, fmt::format("<svg id=\"{}\"", id)), 1u) << id;
  EXPECT_EQ(Count(html, "<svg "), std::size(kReportCharts));
}

TEST(HtmlReportTest, HostileNamesInCompare) {
  std::vector<Trace> before, after;
  before.push_back(HostileTrace());
  after.push_back(HostileTrace());
  const CompareResult result = CompareSides(BuildCompareSide(before), BuildCompareSide(after), {});
  const std::string html = RenderHtmlCompareReport(result);
  ExpectInert(html);
  for (const char* id : kCompareSections) EXPECT_EQ(Count(html, fmt::format("<section id=\"{}\">", id)), 1u) << id;
  for (const char* id : kCompareCharts) EXPECT_EQ(Count(html, fmt::format("<svg id=\"{}\"", id)), 1u) << id;
}

// The longest run of `c` in `text`.
size_t LongestRun(std::string_view text, char c) {
  size_t longest = 0, run = 0;
  for (char x : text) {
    run = x == c ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// A name of megabytes is cut where it shows and bounded in its tooltips: the page stays small, and no
// mention holds more of the name than kMaxTitleBytes.
TEST(HtmlReportTest, HugeNamesAreCutAndTheirTooltipsBounded) {
  const std::string kernel = "k" + std::string(4 << 20, 'K');
  const std::string op = "aten::" + std::string(4 << 20, 'o');
  const Analyzed analyzed = Analyze(kernel, op);
  const std::string html = RenderHtmlReport(analyzed.input);
  EXPECT_LT(html.size(), 512u << 10);
  EXPECT_LE(LongestRun(html, 'K'), kMaxTitleBytes);
  EXPECT_LE(LongestRun(html, 'o'), kMaxTitleBytes);
  EXPECT_GT(Count(html, std::string(kMaxTitleBytes - 4, 'K') + "..."), 0u);  // the tooltip, cut
  EXPECT_GT(Count(html, std::string(100, 'K') + "..."), Count(html, std::string(kMaxTitleBytes - 4, 'K') + "..."));

  std::vector<Trace> before, after;
  before.push_back(HostileTrace(kernel, op));
  after.push_back(HostileTrace(kernel, op));
  const std::string compare =
      RenderHtmlCompareReport(CompareSides(BuildCompareSide(before), BuildCompareSide(after), {}));
  EXPECT_LT(compare.size(), 512u << 10);
  EXPECT_LE(LongestRun(compare, 'K'), kMaxTitleBytes);
  EXPECT_LE(LongestRun(compare, 'o'), kMaxTitleBytes);
}

// The page goes to its writer in pieces of bounded size, whatever the number of ranks: a table of every
// rank's utilizations is thousands of rows at 1,024 ranks and is never held whole.
// The analyzed example with its one rank's advice copied to `ranks` ranks (ids 0..ranks-1).
Analyzed WithRanks(int64_t ranks) {
  Analyzed analyzed = Analyze();
  RankAdvice rank = analyzed.input.advice.ranks.at(0);
  EXPECT_FALSE(rank.utilizations.empty());
  analyzed.input.advice.ranks.clear();
  for (int64_t r = 0; r < ranks; ++r) {
    rank.rank = r;
    analyzed.input.advice.ranks.push_back(rank);
  }
  return analyzed;
}

TEST(HtmlReportTest, WritesManyRanksInBoundedPieces) {
  Analyzed analyzed = WithRanks(2048);
  std::string pieces;
  size_t largest = 0;
  WriteHtmlReport(analyzed.input, [&](std::string_view piece) {
    largest = std::max(largest, piece.size());
    pieces += piece;
  });
  EXPECT_EQ(pieces, RenderHtmlReport(analyzed.input));
  EXPECT_GT(pieces.size(), size_t{256} << 10);  // several pieces (the utilization table folds since)
  EXPECT_LT(largest, size_t{256} << 10);
}

// Above 16 ranks the utilization table folds consecutive ranks that read alike: 40 ranks of the same
// figures are one row per utilization, and one rank that differs splits its utilization's row in three.
TEST(HtmlReportTest, ManyRanksFoldTheUtilizationTable) {
  Analyzed analyzed = WithRanks(40);
  const RankAdvice rank = analyzed.input.advice.ranks.at(0);
  analyzed.input.advice.ranks[7].utilizations[0].value_pct = 12.5;
  const std::string html = RenderHtmlReport(analyzed.input);
  const std::string first = rank.utilizations[0].name;
  EXPECT_NE(html.find("<tr><td>0-6</td><td>" + first + "</td>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>7</td><td>" + first + "</td>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>8-39</td><td>" + first + "</td>"), std::string::npos);
  if (rank.utilizations.size() > 1) {
    EXPECT_NE(html.find("<tr><td>0-39</td><td>" + rank.utilizations[1].name + "</td>"), std::string::npos);
  }
  EXPECT_EQ(html.find("<tr><td>12</td><td>" + first + "</td>"), std::string::npos);
}

// Above 16 ranks the summary shows the slowest and the fastest rank and the mean, every rank's row and
// input folded under them; at 16 ranks and below every row stays in the table.
TEST(HtmlReportTest, ManyRanksFoldTheSummaryTable) {
  Analyzed analyzed = WithRanks(40);
  analyzed.input.advice.ranks[9].split.step_ns *= 2;
  analyzed.input.paths.clear();
  for (int r = 0; r < 40; ++r) analyzed.input.paths.push_back("rank" + std::to_string(r) + ".json");
  const std::string html = RenderHtmlReport(analyzed.input);
  EXPECT_NE(html.find("<tr><td>9 (slowest)</td>"), std::string::npos);
  EXPECT_NE(html.find("(fastest)</td>"), std::string::npos);
  EXPECT_NE(html.find("<details><summary>every rank (40)</summary>"), std::string::npos);
  EXPECT_NE(html.find("<details><summary>40 inputs</summary>"), std::string::npos);
  // The folded table still holds every rank: rank 39's row is there once, under the fold.
  const size_t fold = html.find("every rank (40)");
  EXPECT_NE(html.find("<tr><td>39</td>", fold), std::string::npos);
  EXPECT_EQ(html.find("<tr><td>39</td>"), html.find("<tr><td>39</td>", fold));

  Analyzed alike = WithRanks(40);
  for (RankAdvice& rank : alike.input.advice.ranks) rank.split.step_ns = 1000;
  EXPECT_NE(RenderHtmlReport(alike.input).find("(slowest and fastest: every rank&#39;s mean step is as long)"),
            std::string::npos);

  const std::string small = RenderHtmlReport(WithRanks(16).input);
  EXPECT_EQ(small.find("<details>"), std::string::npos);
  EXPECT_NE(small.find("<tr><td>15</td>"), std::string::npos);
}

TEST(HtmlReportTest, EscapeXmlAndShortLabel) {
  EXPECT_EQ(EscapeXml("a<b>&\"'\x01"), "a&lt;b&gt;&amp;&quot;&#39;?");
  EXPECT_EQ(ShortLabel("abcdef", 10), "abcdef");
  EXPECT_EQ(ShortLabel("abcdefghijkl", 8), "abcde...");
  // Never cuts inside a UTF-8 sequence: "é" is two bytes.
  EXPECT_EQ(ShortLabel("abcd\xc3\xa9xyzzz", 8), "abcd...");
}

TEST(HtmlReportTest, ThinLineKeepsPeaks) {
  std::vector<LinePoint> points;
  for (int i = 0; i < 10000; ++i) points.push_back({double(i), i == 6789 ? 1e9 : double(i % 7)});
  const std::vector<LinePoint> thin = ThinLine(points, 200);
  EXPECT_LE(thin.size(), 200u);
  EXPECT_TRUE(std::any_of(thin.begin(), thin.end(), [](const LinePoint& p) { return p.y == 1e9; }));
  EXPECT_EQ(thin.front().x, 0);
  EXPECT_EQ(thin.back().x, 9999);
}

TEST(AnnotatedTraceTest, HostileNamesStayInsideJsonStrings) {
  const Analyzed analyzed = Analyze();
  const AnnotationEvents events = BuildAnnotationEvents(analyzed.traces[0], analyzed.input.breakdowns[0],
                                                        analyzed.input.memory[0], analyzed.input.advice);
  // Two steps, one gap between the two kernels, no exposed communication.
  EXPECT_EQ(events.slices, 3u);
  // The kernel name is the "next" of the gap: escaped, its quote preceded by a backslash.
  EXPECT_GT(Count(events.json, "alert(1)</script>\\\"'&<b>"), 0u);
  EXPECT_EQ(Count(events.json, "alert(1)</script>\"'"), 0u);
  EXPECT_GT(events.counters, 0u);
}

// The comm section's paragraphs the corpus rarely reaches: a straggler the HCCL ratios disagree with, the
// clocks' offsets one by one, and a rank named but within the clocks' doubt.
TEST(HtmlReportTest, CommSectionNamesTheStragglerAndTheClockOffsets) {
  Analyzed a = Analyze("gemm", "aten::mm");
  CrossRankCommunication& x = a.input.comm.cross_rank;
  x.straggler_rank = 1;
  x.straggler_reason = "last at 9 of 10 <collectives>";
  x.straggler_stands_out = true;
  x.ascend_slow_rank = 2;
  x.clocks.applied = true;
  x.clocks.reference_rank = 0;
  x.clocks.ranks = {{.rank = 0, .offset_ns = 0, .applied = true},
                    {.rank = 1, .offset_ns = -1500000, .uncertainty_ns = 250000, .applied = true},
                    {.rank = 2, .offset_ns = 7, .applied = false}};
  std::string html = RenderHtmlReport(a.input);
  EXPECT_NE(html.find("<p>Straggler: rank 1 (last at 9 of 10 &lt;collectives&gt;); the HCCL wait ratios name rank 2 "
                      "instead: the arrivals are measured per collective, the ratios are totals</p>\n"),
            std::string::npos);
  EXPECT_NE(html.find("<p>Clocks: offsets from rank 0's clock, taken out before comparing arrivals: rank 0 +0.000 ms "
                      "&plusmn; 0.000 ms; rank 1 -1.500 ms &plusmn; 0.250 ms.</p>\n"),
            std::string::npos);
  x.straggler_stands_out = false;
  x.straggler_within_clock_uncertainty = true;
  html = RenderHtmlReport(a.input);
  EXPECT_NE(html.find("<p>No straggler named: rank 1 (last at 9 of 10 &lt;collectives&gt;); align the hosts' clocks "
                      "and profile again.</p>\n"),
            std::string::npos);
  x.straggler_within_clock_uncertainty = false;
  html = RenderHtmlReport(a.input);
  EXPECT_NE(html.find("<p>No straggler stands out: rank 1 made the others wait longest"), std::string::npos);
}

}  // namespace
}  // namespace tuneprof

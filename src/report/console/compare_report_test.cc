#include "report/console/compare_report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// Six steps of one kernel whose name would break a Markdown table (a pipe and a newline).
Trace PipeTrace(int64_t kernel_us) {
  HandBuiltTrace t;
  for (int i = 0; i < 6; ++i) {
    const int64_t start = Us(1000.0 * i);
    t.Step(i + 1, start, Us(static_cast<double>(kernel_us + 30)));
    t.Launch(start + Us(5), i + 1);
    t.Kernel("gemm|fused\nkernel", start + Us(10), Us(static_cast<double>(kernel_us + i % 2)), i + 1);
  }
  return t.Finish();
}

CompareResult PipeCompare() {
  std::vector<Trace> before, after;
  before.push_back(PipeTrace(400));
  after.push_back(PipeTrace(200));
  CompareSide b = BuildCompareSide(before);
  CompareSide a = BuildCompareSide(after);
  b.verdict.analyzed = a.verdict.analyzed = true;
  b.verdict.dominant = "compute";
  a.verdict.dominant = "memory";
  a.verdict.compute_units_pct = 50;
  return CompareSides(std::move(b), std::move(a), {});
}

size_t UnescapedPipes(const std::string& line) {
  size_t pipes = 0;
  for (size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
  return pipes;
}

TEST(CompareReportTest, MarkdownTablesKeepTheirShape) {
  const std::string md = RenderCompareMarkdown(PipeCompare(), {});
  std::istringstream lines(md);
  std::string line;
  size_t header_pipes = 0;
  size_t rows = 0;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '|') {
      in_table = false;
      continue;
    }
    if (!in_table) header_pipes = UnescapedPipes(line);
    in_table = true;
    ++rows;
    EXPECT_EQ(UnescapedPipes(line), header_pipes) << line;
  }
  EXPECT_GT(rows, 10u);
  EXPECT_NE(md.find("`gemm\\|fused kernel`"), std::string::npos) << md;
  EXPECT_NE(md.find("| dominant_bottleneck | compute | memory | | changed |"), std::string::npos) << md;
  EXPECT_NE(md.find("| compute_units_utilization_pct | unknown | 50.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| matmul | 1 -> 1 |"), std::string::npos) << md;
}

TEST(CompareReportTest, AdviceIsNullUnlessAskedAndTextFits) {
  const CompareResult result = PipeCompare();
  EXPECT_NE(RenderCompareJson(result, {}).find("\"advice\":null"), std::string::npos);
  AdviceCheck check;
  check.finding.id = "fusion.a_very_long_finding_identifier_beyond_the_column";
  check.finding.estimated_gain_us = 123456.7;
  check.measured_as = "operators: " + std::string(200, 'x');
  check.before_us = 1e6;
  check.after_us = 2e5;
  const std::vector<AdviceCheck> advice = {check};
  const std::string json = RenderCompareJson(result, {}, advice, true);
  EXPECT_NE(json.find("\"measured_change_us\":-800000"), std::string::npos) << json;
  EXPECT_NE(RenderCompareJson(result, {}, {}, true).find("\"advice\":[]"), std::string::npos);
  const std::string text = RenderCompareText(result, {}, advice);
  EXPECT_NE(text.find("predicted vs measured"), std::string::npos);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 100u) << line;
}

}  // namespace
}  // namespace tuneprof

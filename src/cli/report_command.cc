#include <fmt/format.h>

#include <cstdio>

#include "analysis/advisor/advisor_config.h"
#include "analysis/compare/compare.h"
#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "importers/import.h"
#include "io/output_file.h"
#include "pipeline/run_analyses.h"
#include "report/html/html_report.h"

namespace tuneprof::cli {
namespace {

int RunCompareReport(const ReportOptions& options) {
  if (Status refused = RefuseSummaries(options.compare, "report --compare"); !refused.ok()) return ReportError(refused);
  auto before = LoadTraces({options.compare[0]});
  if (!before.ok()) return ReportError(before.status());
  auto after = LoadTraces({options.compare[1]});
  if (!after.ok()) return ReportError(after.status());
  const CompareResult result = CompareSides(BuildCompareSide(before->traces), BuildCompareSide(after->traces), {});
  const Status written = WriteFileAtomically(options.output, RenderHtmlCompareReport(result));
  return written.ok() ? kExitOk : ReportError(written);
}

}  // namespace

int RunReport(const ReportOptions& options) {
  if (options.compare.empty() == options.paths.empty()) {
    return ReportError(Status(StatusCode::kUsage, "report: give either trace paths or --compare BEFORE AFTER"));
  }
  // Checked before the analysis, which can take minutes: the answer does not depend on it.
  const Status clash =
      CheckOutputIsNotInput(options.output, InputFiles(options.compare.empty() ? options.paths : options.compare));
  if (!clash.ok()) return ReportError(clash);
  if (!options.compare.empty()) return RunCompareReport(options);
  auto run = AnalyzeRunInBoundedMemory(options.paths, options.analysis, RunDetail::kReport);
  if (!run.ok()) return ReportError(run.status());
  const Status written = WriteFileAtomically(options.output, RenderRunHtml(*run, options.paths));
  return written.ok() ? kExitOk : ReportError(written);
}

// The results are copied, not moved: the Python module keeps the run for its other analyses. They are
// summaries (steps, kernels by name, findings), small beside the traces.
std::string RenderRunHtml(const AnalyzedRun& run, const std::vector<std::string>& paths) {
  HtmlReportInput input;
  input.paths = paths;
  input.breakdowns = run.breakdowns;
  input.kernels = SumKernelsAcrossRanks(run.kernels);
  input.memory = run.memory;
  input.comm = run.comm;
  input.link_matrix = BuildRankLinkMatrix(input.comm);
  input.advice = run.advice;
  input.flops = run.flops;
  return RenderHtmlReport(input);
}

}  // namespace tuneprof::cli

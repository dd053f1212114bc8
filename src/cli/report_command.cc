#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/advisor/advisor_config.h"
#include "analysis/compare/compare.h"
#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "importers/pickle/memory_snapshot_reader.h"
#include "io/output_file.h"
#include "pipeline/run_analyses.h"
#include "report/html/html_report.h"

namespace tuneprof::cli {
namespace {

// `inputs`: the sides' files, listed once for the output check.
int RunCompareReport(const ReportOptions& options, const std::vector<std::string>& inputs) {
  if (Status refused = RefuseSummaries(options.compare, inputs, "report --compare"); !refused.ok()) {
    return ReportError(refused);
  }
  // The sides are built as `compare` builds them: the same ranks, the advisor's rows included.
  auto before = AnalyzeRun({options.compare[0]}, options.analysis);
  if (!before.ok()) return ReportError(before.status());
  auto after = AnalyzeRun({options.compare[1]}, options.analysis);
  if (!after.ok()) return ReportError(after.status());
  std::vector<std::string> warnings;
  auto result = CompareRuns(*before, *after, {}, std::nullopt, &warnings);
  if (!result.ok()) return ReportError(result.status());
  const Status written = WriteFileAtomically(options.output, RenderHtmlCompareReport(*result));
  return written.ok() ? kExitOk : ReportError(written);
}

// The report's input from an analysed run: its results moved where `run` is an rvalue (the command, whose
// run ends here: copies of 1,024 ranks' results were a quarter of its peak), else copied (the Python
// module keeps the run for its other analyses). Each member is forwarded once.
template <class Run>
HtmlReportInput ReportInputFrom(Run&& run, const std::vector<std::string>& paths) {
  HtmlReportInput input;
  input.paths = paths;
  input.kernels = std::forward<Run>(run).kernel_totals;
  input.link_matrix = BuildRankLinkMatrix(run.comm);
  input.breakdowns = std::forward<Run>(run).breakdowns;
  input.memory = std::forward<Run>(run).memory;
  input.comm = std::forward<Run>(run).comm;
  input.advice = std::forward<Run>(run).advice;
  input.flops = std::forward<Run>(run).flops;
  return input;
}

// Streams the report into `path` section by section (never whole in memory), renamed into place once
// every section is written. Plain HTML whatever the name, as the report has always been written.
Status WriteRunHtml(const HtmlReportInput& input, const std::string& path) {
  TP_ASSIGN_OR_RETURN(std::unique_ptr<StreamingOutputFile> file,
                      StreamingOutputFile::Open(path, StreamingOutputFile::Compression::kNone));
  Status written = Status::Ok();
  WriteHtmlReport(input, [&](std::string_view piece) {
    if (written.ok()) written = file->Write(piece);
  });
  TP_RETURN_IF_ERROR(written);
  return file->Commit();
}

// A PyTorch allocator snapshot (told by its content) is reported alone, on its own page.
std::optional<int> RunSnapshotReport(const ReportOptions& options) {
  const auto snapshot = std::find_if(options.paths.begin(), options.paths.end(),
                                     [](const std::string& path) { return IsPickleFile(path); });
  if (snapshot == options.paths.end()) return std::nullopt;
  if (options.paths.size() > 1) {
    return ReportError(Status(StatusCode::kUsage, *snapshot + ": a memory snapshot is reported alone; give one "
                                                              "snapshot and no traces"));
  }
  auto read = ReadMemorySnapshot(*snapshot);
  if (!read.ok()) return ReportError(read.status());
  const Status written = WriteFileAtomically(options.output, RenderHtmlSnapshotReport(AnalyzeSnapshot(*read)));
  return written.ok() ? kExitOk : ReportError(written);
}

}  // namespace

int RunReport(const ReportOptions& options) {
  if (options.compare.empty() == options.paths.empty()) {
    return ReportError(Status(StatusCode::kUsage, "report: give either trace paths or --compare BEFORE AFTER"));
  }
  // Checked before the analysis, which can take minutes: the answer does not depend on it.
  const std::vector<std::string> inputs = InputFiles(options.compare.empty() ? options.paths : options.compare);
  const Status clash = CheckOutputIsNotInput(options.output, inputs);
  if (!clash.ok()) return ReportError(clash);
  if (!options.compare.empty()) return RunCompareReport(options, inputs);
  if (const std::optional<int> snapshot = RunSnapshotReport(options)) return *snapshot;
  auto run = AnalyzeRunInBoundedMemory(options.paths, options.analysis, RunDetail::kReport);
  if (!run.ok()) return ReportError(run.status());
  const Status written = WriteRunHtml(ReportInputFrom(std::move(*run), options.paths), options.output);
  return written.ok() ? kExitOk : ReportError(written);
}

std::string RenderRunHtml(const AnalyzedRun& run, const std::vector<std::string>& paths) {
  return RenderHtmlReport(ReportInputFrom(run, paths));
}

}  // namespace tuneprof::cli

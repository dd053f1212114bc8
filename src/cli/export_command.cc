#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "io/output_file.h"
#include "pipeline/diagnostics.h"
#include "pipeline/run_analyses.h"
#include "report/sqlite/sqlite_export.h"
#include "report/tables/run_tables.h"

namespace tuneprof::cli {

Status ExportRunSqlite(const AnalyzedRun& run, const std::string& path, const std::vector<std::string>& inputs,
                       std::string_view option) {
  RunTablesInput input;
  input.traces = &run.traces;
  input.breakdowns = &run.breakdowns;
  input.kernels = &run.kernels;
  input.hardware = &run.hardware;
  input.advice = &run.advice;
  input.comm = &run.comm;
  std::vector<DataTable> tables;
  for (const std::string& name : RunTableNames()) tables.push_back(BuildTable(name, input));
  return WriteSqlite(path, tables, inputs, option);
}

int RunExport(const ExportOptions& options) {
  // Checked before the analysis, which can take minutes: the answer does not depend on it.
  const std::vector<std::string> inputs = InputFiles(options.paths);
  const Status clash = CheckOutputIsNotInput(options.sqlite, inputs, "--sqlite");
  if (!clash.ok()) return ReportError(clash);
  if (Status refused = RefuseSummaries(options.paths, inputs, "export"); !refused.ok()) return ReportError(refused);
  auto run = AnalyzeRun(options.paths, options.analysis);
  if (!run.ok()) return ReportError(run.status());
  const Status written = ExportRunSqlite(*run, options.sqlite, options.paths);
  if (!written.ok()) return ReportError(written);
  for (const std::string& gap : TableGaps(run->traces)) PrintWarning(gap);
  return kExitOk;
}

}  // namespace tuneprof::cli

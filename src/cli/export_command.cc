#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/errors.h"
#include "io/output_file.h"
#include "pipeline/run_analyses.h"
#include "report/sqlite/sqlite_export.h"
#include "report/tables/run_tables.h"

namespace tuneprof::cli {

void AddExportCommand(CLI::App* app, ExportOptions* options) {
  CLI::App* command = app->add_subcommand(
      "export",
      "The run as SQL tables (schema tuneprof.sqlite/1, docs/sqlite-schema.md): ranks, steps and their split, "
      "events, kernels, operators, collectives, memory events, findings, utilizations");
  command->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  command->add_option("--sqlite", options->sqlite, "the SQLite database to write (replaced whole)")->required();
  command->add_option("--config", options->analysis.config,
                      "advisor thresholds as JSON (schema tuneprof.advisor_config/1)");
  command->add_option("--hardware", options->analysis.hardware,
                      "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  command->add_option("--hardware-file", options->analysis.hardware_file,
                      "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
}

Status ExportRunSqlite(const AnalyzedRun& run, const std::string& path, const std::vector<std::string>& inputs) {
  RunTablesInput input;
  input.traces = &run.traces;
  input.breakdowns = &run.breakdowns;
  input.kernels = &run.kernels;
  input.hardware = &run.hardware;
  input.advice = &run.advice;
  input.comm = &run.comm;
  std::vector<DataTable> tables;
  for (const std::string& name : RunTableNames()) tables.push_back(BuildTable(name, input));
  return WriteSqlite(path, tables, inputs);
}

int RunExport(const ExportOptions& options) {
  // Checked before the analysis, which can take minutes: the answer does not depend on it.
  const Status clash = CheckOutputIsNotInput(options.sqlite, InputFiles(options.paths));
  if (!clash.ok()) return ReportError(clash);
  auto run = AnalyzeRun(options.paths, options.analysis);
  if (!run.ok()) return ReportError(run.status());
  const Status written = ExportRunSqlite(*run, options.sqlite, options.paths);
  return written.ok() ? kExitOk : ReportError(written);
}

}  // namespace tuneprof::cli

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "analysis/breakdown/trace_summary.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/run_analyses.h"
#include "report/console/info_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

void AddInfoCommand(CLI::App* app, InfoOptions* options) {
  CLI::App* info =
      app->add_subcommand("info", "What each input holds: format, rank, devices, streams, span, steps, counts");
  info->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  info->add_flag("--json", options->json, "print one JSON document (schema tuneprof.info/1)");
}

int RunInfo(const InfoOptions& options) {
  auto loaded = LoadTraces(options.paths);
  if (!loaded.ok()) return ReportError(loaded.status());
  std::vector<TraceSummary> summaries;
  for (const Trace& trace : loaded->traces) summaries.push_back(SummarizeTrace(trace));
  const std::string text =
      options.json ? WithWarnings(RenderInfoJson(summaries), loaded->warnings) : RenderInfoText(summaries);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

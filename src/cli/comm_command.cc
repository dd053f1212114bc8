#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/flag_checks.h"
#include "pipeline/comm_run.h"
#include "report/console/comm_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

void AddCommCommand(CLI::App* app, CommOptions* options) {
  CLI::App* comm = app->add_subcommand(
      "comm",
      "Communication: collectives' bandwidth vs the link peak, exposed vs hidden, wait vs transfer, stragglers");
  comm->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  comm->add_flag("--json", options->json, "print one JSON document (schema tuneprof.comm/1)");
  comm->add_option("--hardware", options->hardware,
                   "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  comm->add_option("--hardware-file", options->hardware_file,
                   "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
  comm->add_option("--utilization-threshold", options->utilization_threshold,
                   "bandwidth utilization below which communication is a bottleneck (0..1, default 0.5)")
      ->check(Between(0.0, 1.0));
}

int RunComm(const CommOptions& options) {
  CommRunOptions run_options;
  run_options.hardware = options.hardware;
  run_options.hardware_file = options.hardware_file;
  run_options.utilization_threshold = options.utilization_threshold;
  auto run = AnalyzeRunCommunication(options.paths, run_options);
  if (!run.ok()) return ReportError(run.status());
  const std::string text =
      options.json ? WithWarnings(RenderCommJson(run->analysis), run->warnings) : RenderCommText(run->analysis);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "analysis/advisor/advisor.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/run_analyses.h"
#include "report/console/advise_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {
namespace {

void AddOptions(CLI::App* command, AdviseOptions* options) {
  command->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  command->add_option("--config", options->analysis.config,
                      "advisor thresholds as JSON (schema tuneprof.advisor_config/1; defaults in docs/advisor.md)");
  command->add_option("--hardware", options->analysis.hardware,
                      "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  command->add_option("--hardware-file", options->analysis.hardware_file,
                      "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
}

}  // namespace

void AddAdviseCommands(CLI::App* app, AdviseOptions* analyze, AdviseOptions* advise) {
  CLI::App* summary = app->add_subcommand(
      "analyze", "The whole loop on one screen: step-time split, utilizations, dominant bottleneck, top strategies");
  AddOptions(summary, analyze);
  summary->add_flag("--json", analyze->json, "print one JSON document (schema tuneprof.analyze/1)");
  CLI::App* full = app->add_subcommand(
      "advise", "Every finding: the bottleneck, its evidence, the strategy and its estimated gain per step");
  AddOptions(full, advise);
  full->add_flag("--json", advise->json, "print one JSON document (schema tuneprof.advise/1)");
}

int RunAdvise(const AdviseOptions& options, bool summary) {
  auto run = AnalyzeRun(options.paths, options.analysis);
  if (!run.ok()) return ReportError(run.status());
  const AdvisorResult& result = run->advice;
  const std::string text =
      options.json
          ? WithWarnings(RenderAdviseJson(result, summary ? "tuneprof.analyze/1" : "tuneprof.advise/1"), run->warnings)
          : (summary ? RenderAnalyzeText(result) : RenderAdviseText(result));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

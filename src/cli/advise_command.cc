#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/advisor_config.h"
#include "analysis/compute_units.h"
#include "analysis/hardware_profile.h"
#include "analysis/time_breakdown.h"
#include "cli/commands.h"
#include "cli/hardware_options.h"
#include "importers/import.h"
#include "report/advise_report.h"

namespace tuneprof::cli {
namespace {

void AddOptions(CLI::App* command, AdviseOptions* options) {
  command->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  command->add_option("--config", options->config,
                      "advisor thresholds as JSON (schema tuneprof.advisor_config/1; defaults in docs/advisor.md)");
  command->add_option("--hardware", options->hardware,
                      "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  command->add_option("--hardware-file", options->hardware_file,
                      "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
}

Result<AdvisorConfig> LoadConfig(const std::string& path) {
  if (path.empty()) return AdvisorConfig();
  TP_ASSIGN_OR_RETURN(std::string text, ReadFlagFile(path, "--config"));
  return AdvisorConfig::Parse(text, path);
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
  auto config = LoadConfig(options.config);
  if (!config.ok()) return ReportError(config.status());
  auto profiles = LoadHardwareProfiles(options.hardware_file);
  if (!profiles.ok()) return ReportError(profiles.status());
  auto forced = ForcedHardware(*profiles, options.hardware);
  if (!forced.ok()) return ReportError(forced.status());
  auto traces = ImportPaths(options.paths);
  if (!traces.ok()) return ReportError(traces.status());
  std::vector<RankBreakdown> breakdowns;
  std::vector<RankComputeUnits> compute;
  std::vector<HardwareSelection> hardware;
  breakdowns.reserve(traces->size());
  compute.reserve(traces->size());
  hardware.reserve(traces->size());
  for (const Trace& trace : *traces) {
    if (trace.metadata().truncated) {
      fmt::print(stderr, "tuneprof: warning: {}: trace is cut off; using the {} complete events it holds\n",
                 trace.metadata().path, trace.metadata().entry_count);
    }
    breakdowns.push_back(ComputeTimeBreakdown(trace));
    hardware.push_back(SelectHardware(trace, *profiles, *forced));
    compute.push_back(ComputeRankComputeUnits(trace, breakdowns.back(), hardware.back()));
  }
  std::vector<RankInputs> inputs;
  for (size_t i = 0; i < traces->size(); ++i) {
    inputs.push_back(RankInputs{&(*traces)[i], &breakdowns[i], &compute[i], &hardware[i]});
  }
  const AdvisorResult result = RunAdvisor(inputs, *config);
  const std::string text = options.json ? RenderAdviseJson(result, summary ? "tuneprof.analyze/1" : "tuneprof.advise/1")
                                        : (summary ? RenderAnalyzeText(result) : RenderAdviseText(result));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "analysis/core/hardware_profile.h"
#include "analysis/hta/memory_hta_bw.h"
#include "analysis/memory/memory_timeline.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/hardware_options.h"
#include "pipeline/run_analyses.h"
#include "report/console/memory_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

void AddMemoryCommand(CLI::App* app, MemoryOptions* options) {
  CLI::App* memory =
      app->add_subcommand("memory",
                          "Device memory over time: the peak and who holds it, fragmentation, churn, leaks, reuse and "
                          "in-place opportunities, copy traffic and bandwidth");
  memory->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  memory->add_flag("--json", options->json, "print one JSON document (schema tuneprof.memory/1)");
  memory->add_option("--hardware", options->hardware,
                     "measure bandwidth against this hardware profile instead of detecting the chip");
  memory->add_option("--hardware-file", options->hardware_file,
                     "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
}

Result<std::string> MemoryOutput(const std::vector<Trace>& traces, const MemoryOptions& options,
                                 const std::vector<std::string>& warnings) {
  TP_ASSIGN_OR_RETURN(HardwareProfiles profiles, LoadHardwareProfiles(options.hardware_file));
  TP_ASSIGN_OR_RETURN(const HardwareProfile* forced, ForcedHardware(profiles, options.hardware));
  std::vector<MemoryAnalysis> ranks;
  for (const Trace& trace : traces) ranks.push_back(AnalyzeMemory(trace, SelectHardware(trace, profiles, forced)));
  return options.json ? WithWarnings(RenderMemoryJson(ranks, ComputeHtaMemoryBw(traces)), warnings)
                      : RenderMemoryText(ranks);
}

int RunMemory(const MemoryOptions& options) {
  // Flags are checked before the (long) import.
  auto profiles = LoadHardwareProfiles(options.hardware_file);
  if (!profiles.ok()) return ReportError(profiles.status());
  auto forced = ForcedHardware(*profiles, options.hardware);
  if (!forced.ok()) return ReportError(forced.status());
  auto loaded = LoadTraces(options.paths);
  if (!loaded.ok()) return ReportError(loaded.status());
  auto text = MemoryOutput(loaded->traces, options, loaded->warnings);
  if (!text.ok()) return ReportError(text.status());
  std::fwrite(text->data(), 1, text->size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

#include <fmt/format.h>

#include <cstdio>

#include "analysis/core/hardware_profile.h"
#include "analysis/hta/memory_hta_bw.h"
#include "analysis/memory/memory_timeline.h"
#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/hardware_options.h"
#include "pipeline/run_analyses.h"
#include "report/console/memory_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

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

#include <fmt/format.h>

#include <cstdio>

#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/compute/compute_units.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/hta/hta_breakdown.h"
#include "analysis/hta/hta_idle_time.h"
#include "analysis/hta/hta_kernels.h"
#include "analysis/hta/hta_launches.h"
#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/hardware_options.h"
#include "pipeline/run_analyses.h"
#include "report/console/profile_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

Result<std::string> ProfileOutput(const std::vector<Trace>& traces, const ProfileOptions& options,
                                  std::vector<std::string> warnings) {
  TP_ASSIGN_OR_RETURN(HardwareProfiles profiles, LoadHardwareProfiles(options.hardware_file));
  TP_ASSIGN_OR_RETURN(const HardwareProfile* forced, ForcedHardware(profiles, options.hardware));
  GenerationMarkers markers;
  std::string marker_error;
  if (!ParseGenerationMarkers(options.generation_markers, &markers, &marker_error)) {
    return Status(StatusCode::kUsage, "--generation-markers: " + marker_error);
  }
  ProfileResult result;
  RankWarnings breakdown_warnings;
  for (const Trace& trace : traces) {
    result.ranks.push_back(ComputeTimeBreakdown(trace));
    breakdown_warnings.Add(trace.metadata().path, result.ranks.back().warnings);
    ComputeOptions compute;
    compute.threshold = options.compute_threshold;
    compute.model_params = options.model_params;
    compute.param_bytes = options.param_bytes;
    compute.kv_bytes_per_token = options.kv_bytes_per_token;
    compute.context_tokens = options.context_tokens;
    compute.generation_markers = markers;
    result.compute.push_back(
        ComputeRankComputeUnits(trace, result.ranks.back(), SelectHardware(trace, profiles, forced), compute));
    result.kernels.push_back(ComputeKernelBreakdown(trace));
  }
  breakdown_warnings.Emit(&warnings);
  if (options.semantics == "hta") {
    result.hta_semantics = true;
    result.hta = ComputeHtaBreakdown(traces);
    result.hta_kernels = ComputeHtaKernelBreakdown(traces, kHtaDefaultNumKernels);
    result.hta_idle = ComputeHtaIdleTime(traces);
    result.hta_launches = ComputeHtaLaunches(traces);
  }
  return options.json ? WithWarnings(RenderProfileJson(result), warnings) : RenderProfileText(result, options.wide);
}

int RunProfile(const ProfileOptions& options) {
  // Flags are checked before the (long) import.
  auto profiles = LoadHardwareProfiles(options.hardware_file);
  if (!profiles.ok()) return ReportError(profiles.status());
  auto forced = ForcedHardware(*profiles, options.hardware);
  if (!forced.ok()) return ReportError(forced.status());
  GenerationMarkers markers;
  std::string marker_error;
  if (!ParseGenerationMarkers(options.generation_markers, &markers, &marker_error)) {
    return ReportError(Status(StatusCode::kUsage, "--generation-markers: " + marker_error));
  }
  auto loaded = LoadTraces(options.paths);
  if (!loaded.ok()) return ReportError(loaded.status());
  auto text = ProfileOutput(loaded->traces, options, loaded->warnings);
  if (!text.ok()) return ReportError(text.status());
  std::fwrite(text->data(), 1, text->size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

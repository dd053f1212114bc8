#include <CLI/CLI.hpp>
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
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/flag_checks.h"
#include "pipeline/hardware_options.h"
#include "pipeline/run_analyses.h"
#include "report/console/profile_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

void AddProfileCommand(CLI::App* app, ProfileOptions* options) {
  CLI::App* profile = app->add_subcommand(
      "profile", "Where each step's device time goes: compute, communication (hidden or exposed), copies, free");
  profile->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  profile->add_flag("--json", options->json, "print one JSON document (schema tuneprof.profile/1)");
  profile->add_flag("--wide", options->wide, "print kernel and operator names whole instead of abbreviated");
  profile
      ->add_option("--semantics", options->semantics,
                   "also give HTA's temporal breakdown, comm/compute overlap, kernel types, idle time, launch "
                   "stats and queue length, computed exactly as HTA does")
      ->check(CLI::IsMember({"tuneprof", "hta"}));
  profile->add_option("--hardware", options->hardware,
                      "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  profile->add_option("--hardware-file", options->hardware_file,
                      "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
  profile
      ->add_option("--compute-threshold", options->compute_threshold,
                   "compute verdict: main unit utilization below this is a bottleneck (default 0.7)")
      ->check(Between(0.0, 1.0));
  profile
      ->add_option("--model-params", options->model_params,
                   "parameters of the generating model: enables MBU (bytes read per decode step / TPOT / peak "
                   "memory bandwidth)")
      ->check(Positive());
  profile->add_option("--param-bytes", options->param_bytes, "bytes per parameter for MBU (default 2)")
      ->check(Positive());
  profile
      ->add_option("--kv-bytes-per-token", options->kv_bytes_per_token,
                   "KV-cache bytes per token (all layers) a decode step reads, for MBU")
      ->check(NonNegative());
  profile
      ->add_option("--context-tokens", options->context_tokens,
                   "mean context length of the decode steps, for the KV part of MBU")
      ->check(NonNegative());
  profile->add_option("--generation-markers", options->generation_markers,
                      "names of the serving loop's ranges, e.g. \"request=req*,prefill=context|ctx_*,decode=gen_step\" "
                      "(`*` matches anything; unnamed markers keep the defaults request#*, prefill, decode_step, ...)");
}

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

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "analysis/advisor/time_split.h"
#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/module_view.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/comm_cross_rank.h"
#include "analysis/comm/pipeline_stages.h"
#include "analysis/compute/compute_units.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/hta/hta_breakdown.h"
#include "analysis/hta/hta_idle_time.h"
#include "analysis/hta/hta_kernels.h"
#include "analysis/hta/hta_launches.h"
#include "base/cores.h"
#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/json_output.h"
#include "pipeline/hardware_options.h"
#include "pipeline/job_chips.h"
#include "pipeline/profile_reducer.h"
#include "pipeline/rank_map.h"
#include "pipeline/run_analyses.h"
#include "report/console/profile_report.h"

namespace tuneprof::cli {
namespace {

Status LoadProfileSettings(const ProfileOptions& options, ProfileSettings* settings) {
  TP_ASSIGN_OR_RETURN(settings->profiles, LoadHardwareProfiles(options.hardware_file));
  TP_ASSIGN_OR_RETURN(settings->forced, ForcedHardware(settings->profiles, options.hardware));
  std::string marker_error;
  if (!ParseGenerationMarkers(options.generation_markers, &settings->compute.generation_markers, &marker_error)) {
    return Status(StatusCode::kUsage, "--generation-markers: " + marker_error);
  }
  settings->compute.threshold = options.compute_threshold;
  settings->compute.model_params = options.model_params;
  settings->compute.param_bytes = options.param_bytes;
  settings->compute.kv_bytes_per_token = options.kv_bytes_per_token;
  settings->compute.context_tokens = options.context_tokens;
  return Status();
}

// The first flag whose value changes a rank's compute units from a summary's ("" when none does).
std::string ComputeFlagNotInSummaries(const ProfileOptions& options) {
  const ProfileOptions defaults;
  if (options.compute_threshold != defaults.compute_threshold) return "--compute-threshold";
  if (options.model_params != defaults.model_params) return "--model-params";
  if (options.param_bytes != defaults.param_bytes) return "--param-bytes";
  if (options.kv_bytes_per_token != defaults.kv_bytes_per_token) return "--kv-bytes-per-token";
  if (options.context_tokens != defaults.context_tokens) return "--context-tokens";
  if (options.generation_markers != defaults.generation_markers) return "--generation-markers";
  return "";
}

std::string RenderProfile(const ProfileResult& result, const ProfileOptions& options,
                          const std::vector<std::string>& warnings) {
  return options.json ? RenderProfileJson(result, warnings) : RenderProfileText(result, options.wide);
}

// The default semantics read each rank alone: the run map -> summary -> reduce, in bounded memory. The JSON
// is printed as it is written (6 MB for 1,024 ranks), the text whole.
Status PrintProfileInBoundedMemory(const ProfileOptions& options, const ProfileSettings& settings) {
  std::vector<std::string> warnings;
  TP_ASSIGN_OR_RETURN(ProfileRun run,
                      AnalyzeRunProfile(options.paths, settings, ComputeFlagNotInSummaries(options), options.hardware,
                                        options.hardware_file, options.critical_path, &warnings));
  ProfileResult result;
  result.by_module = options.by == "module";
  result.ranks.reserve(run.ranks.size());
  result.compute.reserve(run.ranks.size());
  result.kernels.reserve(run.ranks.size());
  for (RankProfile& rank : run.ranks) AppendRankProfile(std::move(rank), &result);
  std::vector<RankProfile>().swap(run.ranks);
  if (run.cross_rank) {  // --critical-path: read from the ranks' communication, matched in the one map
    result.critical_path = CriticalPathPerStep(std::move(run.cross_rank->critical_links),
                                               AlignedStepWindows(result.ranks, run.cross_rank->clocks));
    if (run.cross_rank->pipeline) {
      result.pipeline_path = PipelineCriticalPath(*run.cross_rank->pipeline, result.ranks);
    }
  }
  if (options.json) {
    PrintJson([&](JsonWriter* w) { WriteProfileJson(result, warnings, w); });
  } else {
    const std::string text = RenderProfileText(result, options.wide);
    PrintOutput(text);
  }
  return Status();
}

}  // namespace

Result<std::string> ProfileOutput(const std::vector<Trace>& traces, const ProfileOptions& options,
                                  std::vector<std::string> warnings) {
  ProfileSettings settings;
  TP_RETURN_IF_ERROR(LoadProfileSettings(options, &settings));
  ProfileResult result;
  // HTA's figures read the traces alone, not the ranks' profiles: with a second core they are computed
  // beside them (each half took about half a second on a 520 MB trace). The two write apart: the HTA
  // members of the result, and its ranks.
  const bool hta = options.semantics == "hta";
  const auto compute_hta = [&] {
    result.hta = ComputeHtaBreakdown(traces);
    result.hta_kernels = ComputeHtaKernelBreakdown(traces, kHtaDefaultNumKernels);
    result.hta_idle = ComputeHtaIdleTime(traces);
    result.hta_launches = ComputeHtaLaunches(traces);
  };
  std::thread beside;
  if (hta && UsableCores() > 1) beside = std::thread(compute_hta);
  RankWarnings breakdown_warnings;
  JobChips chips(settings.profiles, settings.forced);
  const ProfileReducer reducer(settings, &chips, RefusingSummaries("profile"));  // the traces are here
  std::vector<std::string> paths;
  for (const Trace& trace : traces) {
    chips.Select(trace);
    paths.push_back(trace.metadata().path);
  }
  chips.Share(paths);  // the chips are chosen before any rank is profiled, so each once
  for (const Trace& trace : traces) {
    RankBreakdown breakdown = ComputeTimeBreakdown(trace);
    breakdown_warnings.Add(trace.metadata().path, breakdown.warnings);
    AppendRankProfile(reducer.Summarize(trace, std::move(breakdown)), &result);
  }
  breakdown_warnings.Emit(&warnings);
  if (beside.joinable()) {
    beside.join();
  } else if (hta) {
    compute_hta();
  }
  result.hta_semantics = hta;
  result.by_module = options.by == "module";
  return RenderProfile(result, options, warnings);
}

int RunProfile(const ProfileOptions& options) {
  // Flags are checked before the (long) import.
  ProfileSettings settings;
  const Status flags = LoadProfileSettings(options, &settings);
  if (!flags.ok()) return ReportError(flags);
  if (options.critical_path && options.semantics == "hta") {
    return ReportError(Status(StatusCode::kUsage,
                              "profile: --critical-path reads the run rank by rank; give it "
                              "without --semantics hta"));
  }
  if (options.semantics != "hta") {
    const Status printed = PrintProfileInBoundedMemory(options, settings);
    return printed.ok() ? kExitOk : ReportError(printed);
  }
  auto text = [&]() -> Result<std::string> {
    // HTA's figures are run-wide (its step filter and clock origin read every rank): every trace is kept.
    TP_RETURN_IF_ERROR(RefuseSummaries(options.paths, "profile --semantics hta"));
    TP_ASSIGN_OR_RETURN(LoadedTraces loaded, LoadTraces(options.paths));
    return ProfileOutput(loaded.traces, options, loaded.warnings);
  }();
  if (!text.ok()) return ReportError(text.status());
  PrintOutput(*text);
  return kExitOk;
}

}  // namespace tuneprof::cli

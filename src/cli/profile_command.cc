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
#include "pipeline/comm_run.h"
#include "pipeline/hardware_options.h"
#include "pipeline/job_chips.h"
#include "pipeline/rank_map.h"
#include "pipeline/run_analyses.h"
#include "report/console/profile_report.h"

namespace tuneprof::cli {
namespace {

// What every rank's profile is made with, from the flags (checked before any trace is read).
struct ProfileSettings {
  HardwareProfiles profiles;
  const HardwareProfile* forced = nullptr;  // into `profiles`
  ComputeOptions compute;
};

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

// One rank's profile: all that the default semantics print of it.
struct RankProfile {
  RankBreakdown breakdown;
  RankComputeUnits compute;
  KernelBreakdown kernels;
  RankMoeLoad moe;
  ModuleView modules;
  TimeSplit split;
  // A GPU rank that ran send / recv kernels: its communication, for the pipeline it may be in
  // (AddGpuPipelineBubbles); nullopt otherwise.
  std::optional<RankCommunication> p2p_comm;
};

// Whether the trace's args or its kernels' names say send / recv: a check over the events, cheaper than
// the communication analysis it decides on.
bool HasSendRecvKernels(const Trace& trace) {
  for (const CollectiveInfo& info : trace.collectives()) {
    if (ParseCollectiveType(trace.str(info.collective)) == CollectiveType::kSendRecv) return true;
  }
  const EventTable& events = trace.events();
  std::unordered_set<uint32_t> seen;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kKernel || !seen.insert(events.name[i].value).second) continue;
    if (ParseCollectiveType(trace.str(events.name[i])) == CollectiveType::kSendRecv) return true;
  }
  return false;
}

bool HasSendRecv(const std::vector<Collective>& collectives) {
  return std::any_of(collectives.begin(), collectives.end(),
                     [](const Collective& c) { return c.type == CollectiveType::kSendRecv; });
}

RankProfile ProfileRank(const Trace& trace, RankBreakdown breakdown, const ProfileSettings& settings, JobChips* chips) {
  RankProfile rank;
  rank.breakdown = std::move(breakdown);
  rank.compute = ComputeRankComputeUnits(trace, rank.breakdown, chips->Select(trace), settings.compute);
  rank.kernels = ComputeKernelBreakdown(trace);
  rank.moe = MeasureMoeLoad(trace);
  rank.modules = ComputeModuleView(trace);
  // analyze's split with its default limits (profile takes no --config; they only move CPU-only traces'
  // framework overhead).
  rank.split = SplitStepTime(trace, rank.breakdown, BuildHostOpTree(trace), TinyOpLimits{});
  if (rank.breakdown.definitions != StepDefinitions::kTorchNpu && HasSendRecvKernels(trace)) {
    rank.p2p_comm = AnalyzeRankCommunication(trace, rank.breakdown, chips->Select(trace));
  }
  return rank;
}

// A rank summary (format version 2 on) holds all three, its compute units made with the default
// ComputeOptions (SummaryInputFor refuses summaries under other compute flags); from version 4 on, its
// modules too (empty before).
RankProfile TakeFromSummary(RankSummary rank, RankProfile*) {
  RankProfile out;
  if (!rank.report || !rank.report->compute) return out;  // refused by MapSummaryFile (compute_units)
  out.breakdown = std::move(rank.report->breakdown);
  out.compute = std::move(*rank.report->compute);
  out.kernels = std::move(rank.report->kernels);
  out.moe = std::move(rank.advice.moe);
  out.modules = std::move(rank.report->modules);
  out.split = rank.advice.advice.split;
  if (out.breakdown.definitions != StepDefinitions::kTorchNpu && HasSendRecv(rank.comm.collectives)) {
    out.p2p_comm = std::move(rank.comm);
  }
  return out;
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

// Summaries are read as traces are when made under the same chip flags and profiled with the default
// compute flags (what `summarize` makes them with); otherwise the refusal names the flag.
Result<SummaryInput> SummaryInputFor(const ProfileOptions& options, const ProfileSettings& settings) {
  const std::string flag = ComputeFlagNotInSummaries(options);
  TP_ASSIGN_OR_RETURN(SummaryInput input,
                      ReadingReportParts(flag.empty() ? "profile" : "profile " + flag, options.hardware,
                                         options.hardware_file, &settings.profiles));
  input.accepted = flag.empty();
  input.compute_units = true;
  return input;
}

// The GPU ranks' pipeline waits: the communication of the ranks that ran send / recv kernels, matched
// across them as comm matches the run's.
void AddGpuPipelineBubbles(const std::vector<RankCommunication>& p2p_ranks, ProfileResult* result) {
  if (p2p_ranks.size() < 2) return;
  const CrossRankCommunication cross = AnalyzeAcrossRanks(p2p_ranks);
  if (!cross.pipeline) return;
  for (RankBreakdown& rank : result->ranks) {
    if (const RankPipelineWait* wait = GpuPipelineWaitOf(*cross.pipeline, rank.rank)) AddGpuPipelineBubble(*wait, &rank);
  }
}

void AddRank(RankProfile rank, ProfileResult* result) {
  result->ranks.push_back(std::move(rank.breakdown));
  result->compute.push_back(std::move(rank.compute));
  result->kernels.push_back(std::move(rank.kernels));
  result->moe.push_back(std::move(rank.moe));
  result->modules.push_back(std::move(rank.modules));
  result->splits.push_back(rank.split);
}

std::string RenderProfile(const ProfileResult& result, const ProfileOptions& options,
                          const std::vector<std::string>& warnings) {
  return options.json ? RenderProfileJson(result, warnings) : RenderProfileText(result, options.wide);
}

// The default semantics read each rank alone: the run map -> summary -> reduce, in bounded memory. The JSON
// is printed as it is written (6 MB for 1,024 ranks), the text whole.
Status PrintProfileInBoundedMemory(const ProfileOptions& options, const ProfileSettings& settings) {
  TP_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListRunFiles(options.paths));
  TP_ASSIGN_OR_RETURN(const SummaryInput summaries, SummaryInputFor(options, settings));
  JobChips chips(settings.profiles, settings.forced);
  const auto summarize = [&](const Trace& trace, RankBreakdown breakdown) {
    return ProfileRank(trace, std::move(breakdown), settings, &chips);
  };
  std::vector<MappedFile<RankProfile>> mapped = MapRanks<RankProfile>(files, summarize, summaries);
  MapAgainWithSharedChips(files, summarize, summaries, &chips, &mapped);
  std::vector<std::string> warnings;
  TP_RETURN_IF_ERROR(CollectMapWarnings(options.paths, files, mapped, &warnings));
  ProfileResult result;
  result.by_module = options.by == "module";
  size_t count = 0;
  for (const MappedFile<RankProfile>& file : mapped) count += file.ranks.size();
  result.ranks.reserve(count);
  result.compute.reserve(count);
  result.kernels.reserve(count);
  std::vector<RankCommunication> p2p_ranks;
  for (MappedFile<RankProfile>& file : mapped) {
    for (RankProfile& rank : file.ranks) {
      if (rank.p2p_comm) p2p_ranks.push_back(std::move(*rank.p2p_comm));
      AddRank(std::move(rank), &result);
    }
    std::vector<RankProfile>().swap(file.ranks);
  }
  AddGpuPipelineBubbles(p2p_ranks, &result);
  if (options.critical_path) {
    // The ranks again, reduced to their communication (bounded memory as above), matched across the run.
    CommRunOptions comm;
    comm.hardware = options.hardware;
    comm.hardware_file = options.hardware_file;
    comm.summaries = true;
    comm.command = "profile --critical-path";
    TP_ASSIGN_OR_RETURN(const CommRun run, AnalyzeRunCommunication(options.paths, comm));
    result.critical_path = CriticalPathPerStep(run.analysis.cross_rank.critical_links);
    if (run.analysis.cross_rank.pipeline) {
      result.pipeline_path = PipelineCriticalPath(*run.analysis.cross_rank.pipeline, result.ranks);
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
  std::vector<std::string> paths;
  for (const Trace& trace : traces) {
    chips.Select(trace);
    paths.push_back(trace.metadata().path);
  }
  chips.Share(paths);  // the chips are chosen before any rank is profiled, so each once
  for (const Trace& trace : traces) {
    RankBreakdown breakdown = ComputeTimeBreakdown(trace);
    breakdown_warnings.Add(trace.metadata().path, breakdown.warnings);
    AddRank(ProfileRank(trace, std::move(breakdown), settings, &chips), &result);
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
    return ReportError(Status(StatusCode::kUsage, "profile: --critical-path reads the run rank by rank; give it "
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

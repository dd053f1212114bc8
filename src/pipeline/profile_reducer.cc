#include "pipeline/profile_reducer.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "analysis/comm/comm_cross_rank.h"
#include "analysis/comm/comm_links.h"
#include "analysis/comm/pipeline_stages.h"
#include "analysis/core/host_op_tree.h"

namespace tuneprof {
namespace {

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

// The GPU ranks' pipeline waits: the communication of the ranks that ran send / recv kernels, matched
// across them as comm matches the run's.
void AddGpuPipelineBubbles(const std::vector<RankCommunication>& p2p_ranks, std::vector<RankProfile>* ranks) {
  if (p2p_ranks.size() < 2) return;
  const CrossRankCommunication cross = AnalyzeAcrossRanks(p2p_ranks);
  if (!cross.pipeline) return;
  for (RankProfile& rank : *ranks) {
    if (const RankPipelineWait* wait = GpuPipelineWaitOf(*cross.pipeline, rank.breakdown.rank)) {
      AddGpuPipelineBubble(*wait, &rank.breakdown);
    }
  }
}

}  // namespace

ProfileReducer::ProfileReducer(const ProfileSettings& settings, JobChips* chips, SummaryInput summaries,
                               bool critical_path)
    : settings_(settings), chips_(chips), summaries_(std::move(summaries)), critical_path_(critical_path) {}

RankProfile ProfileReducer::Summarize(const Trace& trace, RankBreakdown breakdown) const {
  RankProfile rank;
  rank.breakdown = std::move(breakdown);
  // Built once for the compute units, the split and the communication, which all read it.
  const HostOpTree tree = BuildHostOpTree(trace);
  rank.compute = ComputeRankComputeUnits(trace, rank.breakdown, chips_->Select(trace), settings_.compute, &tree);
  rank.kernels = ComputeKernelBreakdown(trace);
  rank.moe = MeasureMoeLoad(trace);
  rank.modules = ComputeModuleView(trace);
  // analyze's split with its default limits (profile takes no --config; they only move CPU-only traces'
  // framework overhead).
  rank.split = SplitStepTime(trace, rank.breakdown, tree, TinyOpLimits{});
  rank.p2p = rank.breakdown.definitions != StepDefinitions::kTorchNpu && HasSendRecvKernels(trace);
  if (rank.p2p || critical_path_) {
    rank.comm = AnalyzeRankCommunication(trace, rank.breakdown, chips_->Select(trace), &tree);
  }
  return rank;
}

RankProfile ProfileReducer::FromSummary(RankSummary rank) const {
  RankProfile out;
  if (!rank.report || !rank.report->compute) return out;  // refused by MapSummaryFile (compute_units)
  out.breakdown = std::move(rank.report->breakdown);
  out.compute = std::move(*rank.report->compute);
  out.kernels = std::move(rank.report->kernels);
  out.moe = std::move(rank.advice.moe);
  out.modules = std::move(rank.report->modules);
  out.split = rank.advice.advice.split;
  out.p2p = out.breakdown.definitions != StepDefinitions::kTorchNpu && HasSendRecv(rank.comm.collectives);
  if (out.p2p || critical_path_) out.comm = std::move(rank.comm);
  return out;
}

ProfileRun ProfileReducer::Reduce(std::vector<MappedFile<RankProfile>>& mapped) const {
  size_t count = 0;
  for (const MappedFile<RankProfile>& file : mapped) count += file.ranks.size();
  ProfileRun run;
  run.ranks.reserve(count);
  std::vector<RankCommunication> p2p_ranks;
  std::vector<RankCommunication> all_ranks;  // --critical-path
  for (MappedFile<RankProfile>& file : mapped) {
    for (RankProfile& rank : file.ranks) {
      if (rank.p2p && critical_path_) p2p_ranks.push_back(*rank.comm);
      if (rank.comm) (critical_path_ ? all_ranks : p2p_ranks).push_back(std::move(*rank.comm));
      rank.comm.reset();
      run.ranks.push_back(std::move(rank));
    }
    std::vector<RankProfile>().swap(file.ranks);
  }
  AddGpuPipelineBubbles(p2p_ranks, &run.ranks);
  if (critical_path_) {
    ResolveLinkRanks(&all_ranks);
    run.cross_rank = AnalyzeAcrossRanks(all_ranks);
  }
  return run;
}

Result<SummaryInput> ProfileSummaries(const std::string& compute_flag, const std::string& hardware,
                                      const std::string& hardware_file, const ProfileSettings& settings) {
  TP_ASSIGN_OR_RETURN(SummaryInput input,
                      ReadingReportParts(compute_flag.empty() ? "profile" : "profile " + compute_flag, hardware,
                                         hardware_file, &settings.profiles));
  input.accepted = compute_flag.empty();
  input.compute_units = true;
  return input;
}

Result<ProfileRun> AnalyzeRunProfile(const std::vector<std::string>& paths, const ProfileSettings& settings,
                                     const std::string& compute_flag, const std::string& hardware,
                                     const std::string& hardware_file, bool critical_path,
                                     std::vector<std::string>* warnings) {
  TP_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListRunFiles(paths));
  TP_ASSIGN_OR_RETURN(SummaryInput summaries, ProfileSummaries(compute_flag, hardware, hardware_file, settings));
  JobChips chips(settings.profiles, settings.forced);
  const ProfileReducer reducer(settings, &chips, std::move(summaries), critical_path);
  TP_ASSIGN_OR_RETURN(std::vector<MappedFile<RankProfile>> mapped, MapRun(paths, files, reducer, &chips, warnings));
  return reducer.Reduce(mapped);
}

}  // namespace tuneprof

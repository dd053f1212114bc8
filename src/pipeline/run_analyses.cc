#include "pipeline/run_analyses.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <mutex>
#include <thread>

#include "analysis/advisor/advisor_config.h"
#include "analysis/comm/comm_links.h"
#include "analysis/comm/pipeline_stages.h"
#include "analysis/core/host_op_tree.h"
#include "importers/import.h"
#include "io/trace_files.h"
#include "model/warning.h"
#include "pipeline/diagnostics.h"
#include "pipeline/hardware_options.h"
#include "pipeline/job_chips.h"
#include "pipeline/rank_map.h"
#include "analysis/breakdown/module_view.h"
#include "pipeline/rank_summary.h"
#include "pipeline/summary_file.h"

namespace tuneprof {

Result<AdvisorConfig> LoadAdvisorConfig(const std::string& path) {
  if (path.empty()) return AdvisorConfig();
  TP_ASSIGN_OR_RETURN(std::string text, ReadFlagFile(path, "--config"));
  return AdvisorConfig::Parse(text, path);
}

namespace {

// As the map does a file: traces with nothing to measure are an error when nothing else is left, else
// skipped with a warning, so that a command that keeps the traces counts the ranks every other one does.
Status LeaveOutEmptyTimelines(std::vector<Trace>* traces, std::vector<std::string>* skipped) {
  if (traces->empty()) return Status();
  if (const Status all = RefuseEmptyTimeline(traces->front().metadata().path, *traces); !all.ok()) return all;
  std::erase_if(*traces, [&](const Trace& trace) {
    if (!HoldsNothingToMeasure(trace)) return false;
    skipped->push_back(EmptyTimelineCause(trace.metadata().path, trace) + "; skipped");
    return true;
  });
  return Status();
}

// LoadTraces; with `hold_timeline_lines`, each rank's missing-timeline line is kept unsaid (LoadedTraces::unsaid).
Result<LoadedTraces> LoadTraces(const std::vector<std::string>& paths, bool hold_timeline_lines) {
  LoadedTraces loaded;
  std::vector<std::string> skipped;
  TP_ASSIGN_OR_RETURN(loaded.traces, ImportPaths(paths, &skipped));
  TP_RETURN_IF_ERROR(LeaveOutEmptyTimelines(&loaded.traces, &skipped));
  EmitWarnings(skipped, &loaded.warnings);
  for (size_t t = 0; t < loaded.traces.size(); ++t) {
    // A lone trace needs no rank number: said only when there are ranks to tell apart.
    const bool lone = loaded.traces.size() == 1;
    std::vector<IdentifiedWarning> ids;
    const std::vector<std::string> lines =
        TraceWarnings(loaded.traces[t], lone ? std::optional(WarningId::kNoRank) : std::nullopt, &ids);
    for (size_t line = 0; line < lines.size(); ++line) {
      if (hold_timeline_lines && IsWarningLine(ids, line, WarningId::kMissingTimeline)) {
        loaded.unsaid.push_back({loaded.warnings.size(), t});
        loaded.warnings.push_back(lines[line]);
      } else {
        EmitWarnings({lines[line]}, &loaded.warnings);
      }
    }
  }
  return loaded;
}

// The unsaid lines of ranks whose breakdown does not say they have no timeline are said now; the others
// stay in the run's warnings (the JSON documents keep each rank's line) but not on stderr, where the
// breakdown's one line across ranks says it.
void SayTimelineLinesNotSaidByBreakdown(const std::vector<LoadedTraces::Unsaid>& unsaid,
                                        const std::vector<bool>& breakdown_says,
                                        const std::vector<std::string>& lines) {
  for (const LoadedTraces::Unsaid& u : unsaid) {
    if (u.trace >= breakdown_says.size() || !breakdown_says[u.trace]) PrintWarning(lines[u.line]);
  }
}

}  // namespace

Result<LoadedTraces> LoadTraces(const std::vector<std::string>& paths) { return LoadTraces(paths, false); }

Result<AnalyzedRun> AnalyzeRun(const std::vector<std::string>& paths, const AnalysisFlags& flags) {
  return AnalyzeRun([&] { return LoadTraces(paths, true); }, flags);
}

std::vector<std::string> InputFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    auto listed = ListInputFiles(path);
    if (listed.ok()) files.insert(files.end(), listed->begin(), listed->end());
  }
  return files;
}

Status RefuseSummaries(const std::vector<std::string>& paths, std::string_view command) {
  return RefuseSummaries(paths, InputFiles(paths), command);
}

Status RefuseSummaries(const std::vector<std::string>& paths, const std::vector<std::string>& files,
                       std::string_view command) {
  for (const std::vector<std::string>* list : {&paths, &files}) {
    for (const std::string& file : *list) {
      if (IsSummaryPath(file)) return SummaryRefused(file, command);
    }
  }
  return Status::Ok();
}

namespace {

// The report reads the ranks' kernel tables only as their sum: the map's workers add each rank's table
// here as it is made instead of keeping it (a sixth of a small rank's summary).
struct FoldedKernels {
  std::mutex mutex;
  KernelTotalsBuilder totals;
};

// What every rank's summary is made with.
struct SummaryContext {
  const HardwareProfiles* profiles = nullptr;
  const HardwareProfile* forced = nullptr;
  const AdvisorConfig* config = nullptr;
  RunDetail detail = RunDetail::kReport;
  // A core is idle while this rank is analysed (fewer files than cores): the rank's memory analysis,
  // about a quarter of its analyses, runs on it beside the others, which read the same trace.
  bool spare_core = false;
  bool for_file = false;  // a summary file's rank: with what `memory --json` and `profile` read of it as well
  FoldedKernels* folded_kernels = nullptr;  // where the kernel tables go, when only their sum is read
  JobChips* chips = nullptr;                // the chip each rank is measured against, shared within its job
};

// Whether `files` leave a core idle in the map (ForEachOnAllCores runs one file per core).
bool SpareCore(size_t files) { return files < std::max(1u, std::thread::hardware_concurrency()); }

RankSummary SummarizeRank(const Trace& trace, RankBreakdown breakdown, const SummaryContext& context) {
  RankSummary s;
  s.breakdown_warnings = breakdown.warnings;
  s.breakdown_warning_ids = breakdown.warning_ids;
  auto detail = std::make_unique<RankReportDetail>();
  detail->breakdown = std::move(breakdown);
  detail->hardware = context.chips != nullptr ? context.chips->Select(trace)
                                              : SelectHardware(trace, *context.profiles, context.forced);
  std::future<MemoryAnalysis> memory;
  if (context.spare_core) {
    memory = std::async(std::launch::async, [&] { return AnalyzeMemory(trace, detail->hardware); });
  }
  // Built once for the compute units, the communication's lead-ins and the advice, which all read it.
  HostOpTree tree = BuildHostOpTree(trace);
  RankComputeUnits compute = ComputeRankComputeUnits(trace, detail->breakdown, detail->hardware, {}, &tree);
  s.comm = AnalyzeRankCommunication(trace, detail->breakdown, detail->hardware, &tree);
  detail->memory = context.spare_core ? memory.get() : AnalyzeMemory(trace, detail->hardware);
  s.advice = AdviseRank(RankInputs{&trace, &detail->breakdown, &compute, &detail->hardware, &detail->memory, &s.comm,
                                   &tree, context.spare_core},
                        *context.config);
  const bool whole = context.detail == RunDetail::kAll || context.for_file;
  if (!whole) KeepAscendOpsTheReduceReads(&s.comm);
  // Kept for the report and AnalyzeRun; analyze and advise keep only the advice made from it, so that
  // memory stays bounded by what the outputs print.
  if (context.detail != RunDetail::kAdvice) {
    detail->kernels = ComputeKernelBreakdown(trace);
    // A file that names no rank may yet be left out of the run (CollectMapWarnings, after the map): its table
    // stays in its summary, which reaches the reduce only where the file is a rank of the run.
    const bool may_be_left_out = HasWarning(trace.metadata().warning_ids, WarningId::kNoRank);
    if (context.folded_kernels != nullptr && !may_be_left_out) {
      const std::lock_guard<std::mutex> lock(context.folded_kernels->mutex);
      context.folded_kernels->totals.Add(detail->kernels);
      detail->kernels = {};
    }
    detail->flops = compute.flops;
    if (context.for_file) {
      detail->hta_shape = ShapeOfRankForHta(trace);
      detail->hta_memory_bw = ComputeRankHtaMemoryBw(trace);
      detail->modules = ComputeModuleView(trace);
    }
    if (whole) detail->compute = std::make_unique<RankComputeUnits>(std::move(compute));
    s.report = std::move(detail);
  }
  return s;
}

// A GPU pipeline rank's p2p wait, once the ranks have met, moved out of its steps' exposed communication into
// their bubble, as profile gives them: export, compare and the report then split the step as analyze does.
void SplitGpuPipelineBubbles(const CrossRankCommunication& cross, std::vector<RankBreakdown>* breakdowns) {
  if (!cross.pipeline) return;
  for (RankBreakdown& rank : *breakdowns) {
    if (const RankPipelineWait* wait = GpuPipelineWaitOf(*cross.pipeline, rank.rank)) {
      AddGpuPipelineBubble(*wait, &rank);
    }
  }
}

// The ranks' summaries are moved from, in the run's order, into the run's analyses. `kernels` holds the
// kernel tables the map summed already.
void ReduceRun(const std::vector<RankSummary*>& ranks, const AdvisorConfig& config, RunDetail detail, AnalyzedRun* run,
               KernelTotalsBuilder kernels = {}) {
  run->comm.thresholds.utilization = config.Get(threshold::kCommunicationBandwidthUtilizationPct) / 100;
  std::vector<RankAdviceDraft> drafts;
  run->comm.ranks.reserve(ranks.size());
  drafts.reserve(ranks.size());
  if (detail != RunDetail::kAdvice) {
    run->flops.reserve(ranks.size());
    run->breakdowns.reserve(ranks.size());
    run->hardware.reserve(ranks.size());
    if (detail == RunDetail::kAll) {
      run->compute.reserve(ranks.size());
      run->kernels.reserve(ranks.size());
    }
    run->memory.reserve(ranks.size());
  }
  for (RankSummary* summary : ranks) {
    RankSummary& rank = *summary;
    run->comm.ranks.push_back(std::move(rank.comm));
    drafts.push_back(std::move(rank.advice));
    if (detail == RunDetail::kAdvice) continue;
    RankReportDetail none;  // every rank of a report is summarized with it; none only guards the read
    RankReportDetail& report = rank.report ? *rank.report : none;
    run->flops.push_back(std::move(report.flops));
    run->breakdowns.push_back(std::move(report.breakdown));
    run->hardware.push_back(report.hardware);
    kernels.Add(report.kernels);  // a rank from a summary file, or any rank of AnalyzeRun
    if (detail == RunDetail::kAll) {
      run->compute.push_back(report.compute ? std::move(*report.compute) : RankComputeUnits());
      run->kernels.push_back(std::move(report.kernels));
    }
    run->memory.push_back(std::move(report.memory));
    rank.report.reset();
  }
  if (detail != RunDetail::kAdvice) run->kernel_totals = std::move(kernels).Finish();
  ResolveLinkRanks(&run->comm.ranks);
  run->comm.cross_rank = AnalyzeAcrossRanks(run->comm.ranks);
  SplitGpuPipelineBubbles(run->comm.cross_rank, &run->breakdowns);
  JudgeCommunication(&run->comm);
  WarnAboutMissingGroupMembers(run->comm, &run->warnings);
  std::vector<const RankCommunication*> comm;
  for (const RankCommunication& rank : run->comm.ranks) comm.push_back(&rank);
  run->advice = CombineAdvice(std::move(drafts), comm, config, &run->comm.cross_rank);
}

// The map -> summary -> reduce of analyze, advise and the report, and what `summarize` writes: each rank
// reduced to its RankSummary, which is what a summary file holds and what travels under MapSharing.
class RunReducer final : public SharedRankReducer<RankSummary> {
 public:
  RunReducer(const SummaryContext& context, SummaryInput summaries)
      : context_(context), summaries_(std::move(summaries)) {}
  bool WithBreakdown() const override { return true; }
  RankSummary Summarize(const Trace& trace, RankBreakdown breakdown) const override {
    return SummarizeRank(trace, std::move(breakdown), context_);
  }
  const SummaryInput& Summaries() const override { return summaries_; }
  RankSummary FromSummary(RankSummary rank) const override { return rank; }
  RankSummary ToSummary(RankSummary rank) const override { return rank; }
  // The ranks' summaries, moved from in the run's order, into the run's analyses (ReduceRun).
  void Reduce(const std::vector<RankSummary*>& ranks, AnalyzedRun* run, KernelTotalsBuilder kernels = {}) const {
    ReduceRun(ranks, *context_.config, context_.detail, run, std::move(kernels));
  }

 private:
  SummaryContext context_;
  SummaryInput summaries_;
};

}  // namespace

Result<RunSettings> LoadRunSettings(const AnalysisFlags& flags) {
  RunSettings settings;
  TP_ASSIGN_OR_RETURN(settings.summary, SummarySettingsOf(flags));
  if (!flags.config.empty()) {
    TP_ASSIGN_OR_RETURN(settings.config, AdvisorConfig::Parse(settings.summary.config_text, flags.config));
  }
  TP_ASSIGN_OR_RETURN(HardwareProfiles profiles,
                      ParseHardwareProfiles(settings.summary.hardware_file_text, flags.hardware_file));
  settings.profiles = std::make_shared<const HardwareProfiles>(std::move(profiles));
  TP_ASSIGN_OR_RETURN(settings.forced, ForcedHardware(*settings.profiles, flags.hardware));
  return settings;
}

Result<AnalyzedRun> AnalyzeRun(const TraceImport& import, const AnalysisFlags& flags) {
  AnalyzedRun run;
  TP_ASSIGN_OR_RETURN(const RunSettings settings, LoadRunSettings(flags));
  run.profiles = settings.profiles;
  TP_ASSIGN_OR_RETURN(LoadedTraces loaded, import());
  run.traces = std::move(loaded.traces);
  run.warnings = std::move(loaded.warnings);
  std::vector<bool> breakdown_says_no_timeline;
  JobChips chips(*run.profiles, settings.forced);
  SummaryContext context{run.profiles.get(), settings.forced, &settings.config, RunDetail::kAll, SpareCore(1)};
  context.chips = &chips;
  std::vector<RankSummary> ranks;
  ranks.reserve(run.traces.size());
  RankWarnings breakdown_warnings;
  std::vector<std::string> paths;
  for (const Trace& trace : run.traces) {
    chips.Select(trace);
    paths.push_back(trace.metadata().path);
  }
  chips.Share(paths);  // the traces are all here: the chips are chosen before any rank is summarized
  const RunReducer reducer(context, RefusingSummaries("compare"));  // the traces are here: no summary to read
  for (const Trace& trace : run.traces) {
    RankBreakdown breakdown = ComputeTimeBreakdown(trace);
    breakdown_warnings.Add(trace.metadata().path, breakdown.warnings);
    breakdown_says_no_timeline.push_back(HasWarning(breakdown.warning_ids, WarningId::kNoDeviceTimeline));
    ranks.push_back(reducer.Summarize(trace, std::move(breakdown)));
  }
  SayTimelineLinesNotSaidByBreakdown(loaded.unsaid, breakdown_says_no_timeline, run.warnings);
  breakdown_warnings.Emit(&run.warnings);
  std::vector<RankSummary*> summaries;
  for (RankSummary& rank : ranks) summaries.push_back(&rank);
  reducer.Reduce(summaries, &run);
  return run;
}

Result<AnalyzedRun> AnalyzeRunInBoundedMemory(const std::vector<std::string>& paths, const AnalysisFlags& flags,
                                              RunDetail detail) {
  // Listed first whatever the flags: under --mpi every process must reach the listing, which shares a
  // flag error with all of them.
  Result<RunSettings> loaded = LoadRunSettings(flags);
  TP_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListRunFiles(paths, loaded.status()));
  const RunSettings& settings = loaded.value();
  AnalyzedRun run;
  run.profiles = settings.profiles;
  JobChips chips(*run.profiles, settings.forced);
  SummaryContext context{run.profiles.get(), settings.forced, &settings.config, detail, SpareCore(files.size())};
  context.chips = &chips;
  // Where the processes of an MPI job exchange summaries, each keeps its kernel table (the report, the one
  // command that folds them, has no --mpi; this keeps it right if it gets one).
  FoldedKernels folded;
  if (detail == RunDetail::kReport && ActiveMapSharing() == nullptr) context.folded_kernels = &folded;
  SummaryInput summaries{detail != RunDetail::kAll, "report", settings.summary};
  summaries.report_detail = detail == RunDetail::kReport;
  summaries.profiles = run.profiles.get();
  const RunReducer reducer(context, summaries);
  std::vector<MappedFile<RankSummary>> mapped = MapRanks(files, reducer);
  // The first map added its ranks' kernel tables to the folded sum already: a rank mapped again keeps
  // its table apart and drops it, so that each is counted once.
  SummaryContext again = context;
  again.folded_kernels = nullptr;
  MapAgainWithSharedChips(files, RunReducer(again, summaries), &chips, &mapped, [&](RankSummary& rank) {
    if (context.folded_kernels != nullptr && rank.report) rank.report->kernels = {};
  });
  TP_RETURN_IF_ERROR(CollectMapWarnings(paths, files, mapped, &run.warnings));
  // What the workers freed (their last traces) is not what the reduce will allocate: hand it back.
  ReleaseFreedMemory();
  // Reduced where they are: moved into one list first, the summaries were held twice, a fifth of the
  // peak at 1,024 ranks.
  std::vector<RankSummary*> ranks;
  for (MappedFile<RankSummary>& file : mapped) {
    for (RankSummary& rank : file.ranks) ranks.push_back(&rank);
  }
  reducer.Reduce(ranks, &run, std::move(folded.totals));
  mapped.clear();  // the summaries' husks, before the command writes its output
  ReleaseFreedMemory();
  return run;
}

Result<SummaryFile> SummarizeRun(const std::string& path, const AnalysisFlags& flags) {
  TP_ASSIGN_OR_RETURN(const RunSettings settings, LoadRunSettings(flags));
  SummaryFile file;
  file.profiles = settings.profiles;
  file.source = path;
  file.settings = settings.summary;
  TP_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListRunFiles({path}));
  // Kept with the report's, `memory`'s and `profile`'s parts too, so that they read summaries as they read
  // traces.
  JobChips chips(*settings.profiles, settings.forced);
  SummaryContext context{settings.profiles.get(), settings.forced,         &settings.config,
                         RunDetail::kReport,      SpareCore(files.size()), true};
  context.chips = &chips;
  // A summary of summaries would only copy them: refused, as by every command that needs traces.
  const RunReducer reducer(context, RefusingSummaries("summarize"));
  std::vector<std::string> said;
  WarningLines file_lines;
  TP_ASSIGN_OR_RETURN(std::vector<MappedFile<RankSummary>> mapped,
                      MapRun({path}, files, reducer, &chips, &said, &file_lines));
  file.warnings = std::move(file_lines.lines);
  file.warning_ids = std::move(file_lines.ids);
  for (MappedFile<RankSummary>& mapped_file : mapped) {
    for (size_t k = 0; k < mapped_file.ranks.size(); ++k) {
      file.ranks.push_back(std::move(mapped_file.ranks[k]));
      file.starts.push_back(mapped_file.starts[k]);
    }
  }
  return file;
}

}  // namespace tuneprof

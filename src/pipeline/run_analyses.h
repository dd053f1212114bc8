#pragma once
// The analyses `analyze`, `advise`, `report` and `annotate` draw from, run once per input: the one place
// that wires the memory and communication analyses into the advisor.
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_cross_rank.h"
#include "analysis/compute/compute_units.h"
#include "analysis/compute/op_flops.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/memory/memory_timeline.h"
#include "base/status.h"
#include "model/trace.h"
#include "pipeline/analysis_flags.h"
#include "pipeline/summary_file.h"
#include "pipeline/trace_warnings.h"

namespace tuneprof {

// The traces of a run and what the user must be told about them, one line each naming the file:
// files skipped, and each trace's own warnings (cut off, rows or events dropped).
struct LoadedTraces {
  std::vector<Trace> traces;
  std::vector<std::string> warnings;
  // Lines of `warnings` kept but not yet written to stderr, with the trace each is about: a rank's missing
  // timeline file, which AnalyzeRun leaves to the line its breakdown shares across ranks.
  struct Unsaid {
    size_t line = 0;
    size_t trace = 0;
  };
  std::vector<Unsaid> unsaid;
};

// Imports `paths`, skipping unreadable files (an error only when nothing is left), and writes every
// warning to stderr.
Result<LoadedTraces> LoadTraces(const std::vector<std::string>& paths);

// Every analysis of a run, one entry per rank in each vector (same order as `traces`).
struct AnalyzedRun {
  // The chip profiles `hardware` points into, kept alive with the results that refer to them.
  std::shared_ptr<const HardwareProfiles> profiles;
  std::vector<Trace> traces;
  std::vector<std::string> warnings;  // as written to stderr
  std::vector<RankBreakdown> breakdowns;
  std::vector<RankComputeUnits> compute;
  std::vector<HardwareSelection> hardware;
  std::vector<KernelBreakdown> kernels;  // with kAll only
  KernelTotals kernel_totals;            // the kernel tables summed across ranks (kReport, kAll)
  std::vector<MemoryAnalysis> memory;
  std::vector<RankOpFlops> flops;
  CommAnalysis comm;
  AdvisorResult advice;
};

// Imports `paths` and runs every analysis; errors are the import's or the flags'. Warns on stderr about
// skipped files, cut-off traces, dropped input and incomplete steps.
Result<AnalyzedRun> AnalyzeRun(const std::vector<std::string>& paths, const AnalysisFlags& flags);

// The same with the traces from `import`, called once the flags are known to be good.
using TraceImport = std::function<Result<LoadedTraces>()>;
Result<AnalyzedRun> AnalyzeRun(const TraceImport& import, const AnalysisFlags& flags);

// What a command reads of an analysed run besides the advice and the communication analysis.
enum class RunDetail : uint8_t {
  kAdvice,  // analyze, advise: nothing more
  kReport,  // the HTML report: each rank's breakdown, hardware, kernels, memory and FLOPs too
  kAll,     // AnalyzeRun: the compute units as well (compare, export, the Python module)
};

// AnalyzeRun in bounded memory, for any number of ranks: the files are read on all cores and each rank
// is reduced to its summary before the worker takes the next file (rank_map.h), the run's analyses then
// put together from the summaries alone. The same results as AnalyzeRun but no `traces`; with kReport,
// no compute either (its FLOPs are in `flops`) and no per-rank kernel tables, only their sum; with
// kAdvice, no breakdowns, compute, hardware, kernels, memory or flops.
Result<AnalyzedRun> AnalyzeRunInBoundedMemory(const std::vector<std::string>& paths, const AnalysisFlags& flags,
                                              RunDetail detail);

// Summarizes every rank of `path` (a trace file, a rank directory, or a directory of them) for a
// summary file (summary_file.h), as the map of AnalyzeRunInBoundedMemory makes them for analyze.
// Errors: the flags', the path's, or no trace readable; warnings go to stderr and into the file.
Result<SummaryFile> SummarizeRun(const std::string& path, const AnalysisFlags& flags);

// The trace files behind `paths` (directories listed as import lists them), for the check that an
// output file is none of them; paths that cannot be listed are left to the import to report.
std::vector<std::string> InputFiles(const std::vector<std::string>& paths);

// For the commands that need the events: the first summary file among `paths` (or the files of the
// directories among them) refused with the command's name, before anything is imported; Ok when none.
Status RefuseSummaries(const std::vector<std::string>& paths, std::string_view command);
// The same with InputFiles(paths) that the caller has listed already (for its output check), so that
// the directories are listed once.
Status RefuseSummaries(const std::vector<std::string>& paths, const std::vector<std::string>& files,
                       std::string_view command);

// The flags' advisor thresholds and chips, their files read once (as summary files record them) and
// checked before any trace is read.
struct RunSettings {
  SummarySettings summary;
  std::shared_ptr<const HardwareProfiles> profiles;
  AdvisorConfig config;  // the defaults without --config
  const HardwareProfile* forced = nullptr;
};
Result<RunSettings> LoadRunSettings(const AnalysisFlags& flags);

// The advisor thresholds of --config FILE (defaults when `path` is empty).
Result<AdvisorConfig> LoadAdvisorConfig(const std::string& path);

}  // namespace tuneprof

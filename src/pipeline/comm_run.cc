#include "pipeline/comm_run.h"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>

// glibc's malloc_trim walks glibc's own arenas; under AddressSanitizer, which replaces malloc, they
// may never have been set up, and the call crashed (a SEGV in mtrim on a worker's return).
#if defined(__SANITIZE_ADDRESS__)
#define TUNEPROF_MALLOC_REPLACED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TUNEPROF_MALLOC_REPLACED 1
#endif
#endif
#if defined(__GLIBC__) && !defined(TUNEPROF_MALLOC_REPLACED)
#define TUNEPROF_TRIM_MALLOC 1
#include <malloc.h>
#endif

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/hardware_profile.h"
#include "importers/common/rank.h"
#include "importers/import.h"
#include "io/trace_files.h"
#include "pipeline/hardware_options.h"
#include "pipeline/run_analyses.h"

namespace tuneprof {
namespace {

// The ranks of one file read and reduced to their communication summaries (an nsys export of several
// processes is several ranks); the traces are dropped at once, so memory holds one file's traces per
// worker, whatever the number of ranks.
struct RankSlot {
  std::vector<RankCommunication> results;
  std::vector<int64_t> starts;  // each rank's first event
  Status status;
  std::vector<std::string> warnings;  // the traces'
  RankWarnings breakdown_warnings;    // their breakdowns', said once across ranks
};

void AnalyzeFile(const std::string& file, const HardwareProfiles& profiles, const HardwareProfile* forced,
                 RankSlot* slot) {
  {
    auto traces = ImportFileRanks(file);
    if (!traces.ok()) {
      slot->status = traces.status();
      return;
    }
    for (const Trace& trace : *traces) {
      std::vector<std::string> warnings = TraceWarnings(trace);
      slot->warnings.insert(slot->warnings.end(), warnings.begin(), warnings.end());
      RankBreakdown breakdown = ComputeTimeBreakdown(trace);
      slot->breakdown_warnings.Add(trace.metadata().path, breakdown.warnings);
      slot->results.push_back(AnalyzeRankCommunication(trace, breakdown, SelectHardware(trace, profiles, forced)));
      slot->starts.push_back(trace.start_ns());
    }
  }  // the traces are freed here
#ifdef TUNEPROF_TRIM_MALLOC
  // glibc keeps freed pages of the worker arenas resident; hand them back so that RSS follows live data.
  malloc_trim(0);
#endif
}

// Ranks are independent until they are matched: read them on all cores, results kept in path order.
std::vector<RankSlot> AnalyzeFiles(const std::vector<std::string>& files, const HardwareProfiles& profiles,
                                   const HardwareProfile* forced) {
  std::vector<RankSlot> slots(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) AnalyzeFile(files[i], profiles, forced, &slots[i]);
  };
  const size_t workers = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), files.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
  return slots;
}

}  // namespace

Result<CommRun> AnalyzeRunCommunication(const std::vector<std::string>& paths, const CommRunOptions& options) {
  TP_ASSIGN_OR_RETURN(HardwareProfiles profiles, LoadHardwareProfiles(options.hardware_file));
  TP_ASSIGN_OR_RETURN(const HardwareProfile* forced, ForcedHardware(profiles, options.hardware));
  CommRun run;
  for (const std::string& path : paths) {
    TP_ASSIGN_OR_RETURN(std::vector<std::string> listed, ListTraceFiles(path));
    run.files.insert(run.files.end(), listed.begin(), listed.end());
  }
  run.analysis.thresholds.utilization = options.utilization_threshold;
  std::vector<RankSlot> slots = AnalyzeFiles(run.files, profiles, forced);
  // As every command reads a run: an unreadable file is skipped with a warning, unless none is left.
  UnreadableFiles skipped;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].status.ok()) skipped.Add(run.files[i], slots[i].status);
  }
  const bool any_read = std::any_of(slots.begin(), slots.end(), [](const RankSlot& s) { return s.status.ok(); });
  if (!any_read && !skipped.empty()) return skipped.NothingLeft(paths);
  std::vector<std::string> lines;
  skipped.AppendWarnings(&lines);
  EmitWarnings(lines, &run.warnings);
  RankWarnings breakdown_warnings;
  const size_t rank_count = std::accumulate(slots.begin(), slots.end(), size_t{0},
                                            [](size_t n, const RankSlot& s) { return n + s.results.size(); });
  for (size_t f = 0; f < slots.size(); ++f) {
    RankSlot& slot = slots[f];
    if (!slot.status.ok()) continue;
    // A lone rank needs no rank number: said only when there are ranks to tell apart, as LoadTraces does.
    if (rank_count == 1) {
      std::erase_if(slot.warnings, [](const std::string& w) { return w.ends_with(kNoRankWarning); });
    }
    EmitWarnings(slot.warnings, &run.warnings);
    breakdown_warnings.Merge(slot.breakdown_warnings);
    for (size_t k = 0; k < slot.results.size(); ++k) {
      run.analysis.ranks.push_back(std::move(slot.results[k]));
      run.sources.push_back(CommRankSource{f, k, slot.starts[k]});
    }
  }
  breakdown_warnings.Emit(&run.warnings);
  run.analysis.cross_rank = AnalyzeAcrossRanks(run.analysis.ranks);
  JudgeCommunication(&run.analysis);
  return run;
}

}  // namespace tuneprof

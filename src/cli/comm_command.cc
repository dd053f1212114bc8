#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <cstdio>
#include <thread>
#include <vector>

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

#include "analysis/comm/comm_cross_rank.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/breakdown/time_breakdown.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/flag_checks.h"
#include "pipeline/hardware_options.h"
#include "importers/common/rank.h"
#include "importers/import.h"
#include "io/trace_files.h"
#include "pipeline/run_analyses.h"
#include "report/console/comm_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

void AddCommCommand(CLI::App* app, CommOptions* options) {
  CLI::App* comm = app->add_subcommand(
      "comm",
      "Communication: collectives' bandwidth vs the link peak, exposed vs hidden, wait vs transfer, stragglers");
  comm->add_option("paths", options->paths, "trace files or directories (one rank per trace inside)")->required();
  comm->add_flag("--json", options->json, "print one JSON document (schema tuneprof.comm/1)");
  comm->add_option("--hardware", options->hardware,
                   "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  comm->add_option("--hardware-file", options->hardware_file,
                   "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
  comm->add_option("--utilization-threshold", options->utilization_threshold,
                   "bandwidth utilization below which communication is a bottleneck (0..1, default 0.5)")
      ->check(Between(0.0, 1.0));
}

namespace {

// The ranks of one file read and reduced to their communication summaries (an nsys export of several
// processes is several ranks); the traces are dropped at once, so memory holds one file's traces per
// worker, whatever the number of ranks.
struct RankSlot {
  std::vector<RankCommunication> results;
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

int RunComm(const CommOptions& options) {
  auto profiles = LoadHardwareProfiles(options.hardware_file);
  if (!profiles.ok()) return ReportError(profiles.status());
  auto forced = ForcedHardware(*profiles, options.hardware);
  if (!forced.ok()) return ReportError(forced.status());
  std::vector<std::string> files;
  for (const std::string& path : options.paths) {
    auto listed = ListTraceFiles(path);
    if (!listed.ok()) return ReportError(listed.status());
    files.insert(files.end(), listed->begin(), listed->end());
  }
  CommAnalysis analysis;
  analysis.thresholds.utilization = options.utilization_threshold;
  std::vector<RankSlot> slots = AnalyzeFiles(files, *profiles, *forced);
  // As every command reads a run: an unreadable file is skipped with a warning, unless none is left.
  UnreadableFiles skipped;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].status.ok()) skipped.Add(files[i], slots[i].status);
  }
  const bool any_read = std::any_of(slots.begin(), slots.end(), [](const RankSlot& s) { return s.status.ok(); });
  if (!any_read && !skipped.empty()) return ReportError(skipped.NothingLeft(options.paths));
  std::vector<std::string> lines, warnings;
  skipped.AppendWarnings(&lines);
  EmitWarnings(lines, &warnings);
  RankWarnings breakdown_warnings;
  const size_t rank_count = std::accumulate(slots.begin(), slots.end(), size_t{0},
                                            [](size_t n, const RankSlot& s) { return n + s.results.size(); });
  for (RankSlot& slot : slots) {
    if (!slot.status.ok()) continue;
    // A lone rank needs no rank number: said only when there are ranks to tell apart, as LoadTraces does.
    if (rank_count == 1) {
      std::erase_if(slot.warnings, [](const std::string& w) { return w.ends_with(kNoRankWarning); });
    }
    EmitWarnings(slot.warnings, &warnings);
    breakdown_warnings.Merge(slot.breakdown_warnings);
    for (RankCommunication& result : slot.results) analysis.ranks.push_back(std::move(result));
  }
  breakdown_warnings.Emit(&warnings);
  analysis.cross_rank = AnalyzeAcrossRanks(analysis.ranks);
  JudgeCommunication(&analysis);
  const std::string text = options.json ? WithWarnings(RenderCommJson(analysis), warnings) : RenderCommText(analysis);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

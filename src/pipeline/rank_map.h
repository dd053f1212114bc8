#pragma once
// The map half of every command that reads a run in bounded memory: the trace files are imported on all
// cores, each rank reduced at once to the summary its command needs and its trace dropped before the
// worker takes the next file, so memory holds one file's traces per worker whatever the number of ranks.
// The reduce then reads the summaries only, in the files' order.
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "base/status.h"
#include "model/trace.h"
#include "pipeline/run_analyses.h"

namespace tuneprof {

// Runs `work(i)` for every i in [0, n) once, on min(cores, n) threads (the caller's among them).
void ForEachOnAllCores(size_t n, const std::function<void(size_t)>& work);

// What a worker kept of one file besides its ranks' summaries.
struct MappedFileStatus {
  Status status;                      // the import's; the file is skipped when not ok
  std::vector<std::string> warnings;  // the traces' (TraceWarnings)
  RankWarnings breakdown_warnings;    // their breakdowns', said once across ranks
  size_t ranks = 0;
};

// Imports `file` and calls `each` with every rank it holds and, `with_breakdown`, that rank's step
// breakdown (which most summaries start from; its warnings are kept), else an empty one; then frees the
// traces and hands their pages back to the system.
void MapFileRanks(const std::string& file, bool with_breakdown, MappedFileStatus* status,
                  const std::function<void(const Trace&, RankBreakdown)>& each);

// One file's ranks, each reduced to a `Summary`.
template <class Summary>
struct MappedFile {
  MappedFileStatus status;
  std::vector<Summary> ranks;
  std::vector<int64_t> starts;  // each rank's first event, on its own clock
};

// MapFileRanks over `files` on all cores; `summarize(trace, breakdown)`, or `summarize(trace)` for a
// summary that needs no breakdown, returns a rank's Summary. It runs on the workers, so it must only read
// what it is given and shared read-only state.
template <class Summary, class Summarize>
std::vector<MappedFile<Summary>> MapRanks(const std::vector<std::string>& files, const Summarize& summarize) {
  constexpr bool kWithBreakdown = std::is_invocable_v<Summarize, const Trace&, RankBreakdown>;
  std::vector<MappedFile<Summary>> mapped(files.size());
  ForEachOnAllCores(files.size(), [&](size_t i) {
    MappedFile<Summary>& file = mapped[i];
    MapFileRanks(files[i], kWithBreakdown, &file.status, [&](const Trace& trace, RankBreakdown breakdown) {
      file.starts.push_back(trace.start_ns());
      if constexpr (kWithBreakdown) {
        file.ranks.push_back(summarize(trace, std::move(breakdown)));
      } else {
        file.ranks.push_back(summarize(trace));
      }
    });
  });
  return mapped;
}

// The trace files behind `paths`, as every command lists them; an error when a path cannot be listed.
Result<std::vector<std::string>> ListRunFiles(const std::vector<std::string>& paths);

// As every command reads a run: an unreadable file is skipped with a warning unless none is left (then
// the error), a usage error (a file the tool cannot take) stops the run. Writes the files' warnings to
// stderr in the files' order, then the breakdowns' once across ranks, and appends them to `warnings`.
// `statuses[i]` is the map of `files[i]`.
Status CollectMapWarnings(const std::vector<std::string>& paths, const std::vector<std::string>& files,
                          const std::vector<MappedFileStatus*>& statuses, std::vector<std::string>* warnings);

}  // namespace tuneprof

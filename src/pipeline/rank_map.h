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
#include "pipeline/summary_file.h"

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

// How a map takes summary files (summary_file.h) among its files: only commands whose summary a file
// holds take them (`accepted`), and only files made under the run's own flags.
struct SummaryInput {
  bool accepted = false;
  std::string command;         // named in the refusal: "profile", "memory", "report"
  SummarySettings settings;    // the run's
  bool config_matters = true;  // false for comm, which applies no advisor threshold to a rank
};

// Reads the summary file `file` into `status` (its warnings, its ranks' breakdown warnings, or why it
// cannot be taken) and calls `each` with every rank and its first event.
void MapSummaryFile(const std::string& file, const SummaryInput& input, MappedFileStatus* status,
                    const std::function<void(RankSummary, int64_t)>& each);

// What a command's map keeps of a summary file's rank; the commands that take no summaries have none.
inline RankSummary TakeFromSummary(RankSummary rank, RankSummary*) { return rank; }
inline RankCommunication TakeFromSummary(RankSummary rank, RankCommunication*) { return std::move(rank.comm); }

// MapFileRanks over `files` on all cores; `summarize(trace, breakdown)`, or `summarize(trace)` for a
// summary that needs no breakdown, returns a rank's Summary. It runs on the workers, so it must only read
// what it is given and shared read-only state.
// Summary files among `files` are read as `summaries` says (refused without it).
template <class Summary, class Summarize>
std::vector<MappedFile<Summary>> MapRanks(const std::vector<std::string>& files, const Summarize& summarize,
                                          const SummaryInput& summaries = SummaryInput()) {
  constexpr bool kWithBreakdown = std::is_invocable_v<Summarize, const Trace&, RankBreakdown>;
  std::vector<MappedFile<Summary>> mapped(files.size());
  ForEachOnAllCores(files.size(), [&](size_t i) {
    MappedFile<Summary>& file = mapped[i];
    if (IsSummaryPath(files[i])) {
      MapSummaryFile(files[i], summaries, &file.status, [&](RankSummary rank, int64_t start) {
        if constexpr (requires { TakeFromSummary(std::move(rank), static_cast<Summary*>(nullptr)); }) {
          file.starts.push_back(start);
          file.ranks.push_back(TakeFromSummary(std::move(rank), static_cast<Summary*>(nullptr)));
        }
      });
      return;
    }
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
// `statuses[i]` is the map of `files[i]`. With `file_lines`, also the lines before the breakdowns' (files
// skipped, the traces' own warnings), as a summary file keeps them.
Status CollectMapWarnings(const std::vector<std::string>& paths, const std::vector<std::string>& files,
                          const std::vector<MappedFileStatus*>& statuses, std::vector<std::string>* warnings,
                          std::vector<std::string>* file_lines = nullptr);

}  // namespace tuneprof

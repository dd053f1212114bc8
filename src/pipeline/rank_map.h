#pragma once
// The map half of every command that reads a run in bounded memory: the trace files are imported on all
// cores, each rank reduced at once to the summary its command needs and its trace dropped before the
// worker takes the next file, so memory holds one file's traces per worker whatever the number of ranks.
// The reduce then reads the summaries only, in the files' order.
#include <functional>
#include <string>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "base/status.h"
#include "model/trace.h"
#include "pipeline/rank_reducer.h"
#include "pipeline/summary_file.h"
#include "pipeline/trace_warnings.h"

namespace tuneprof {

// Runs `work(i)` for every i in [0, n) once, on min(cores, n) threads (the caller's among them).
void ForEachOnAllCores(size_t n, const std::function<void(size_t)>& work);

// Hands the pages malloc keeps free back to the kernel (glibc; a no-op elsewhere).
void ReleaseFreedMemory();

// Whether a trace gives a step nothing to measure: no event on its timeline and none of the profiler's
// own tables a step split or its figures come from (a metadata-only export: process and thread names).
bool HoldsNothingToMeasure(const Trace& trace);

// Why `trace`, read from `file`, has nothing to measure: one line naming the file.
std::string EmptyTimelineCause(const std::string& file, const Trace& trace);

// The error for `file` when every trace it holds has nothing to measure (a breakdown of it would be a
// step of 0 ms, a wrong number rather than an unknown one); ok otherwise. The commands that measure
// steps refuse such a file as a bad input, `info` (an inventory) still describes it.
Status RefuseEmptyTimeline(const std::string& file, const std::vector<Trace>& traces);

// What a worker kept of one file besides its ranks' summaries.
struct MappedFileStatus {
  Status status;                               // the import's; the file is skipped when not ok
  std::vector<std::string> warnings;           // the traces' (TraceWarnings)
  std::vector<IdentifiedWarning> warning_ids;  // those of `warnings` that have an id
  std::vector<RankLines> breakdown_warnings;   // each rank's breakdown's
  std::vector<int64_t> rank_ids;               // its ranks' numbers, in order
  bool left_out = false;  // read, but not a rank of the run (CollectMapWarnings): its ranks are dropped
};

// Imports `file` and calls `each` with every rank it holds and, `with_breakdown`, that rank's step
// breakdown (which most summaries start from; its warnings are kept), else an empty one; then frees the
// traces, and after a large file hands their pages back to the system.
void MapFileRanks(const std::string& file, bool with_breakdown, MappedFileStatus* status,
                  const std::function<void(const Trace&, RankBreakdown)>& each);

// One file's ranks, each reduced to a `Summary`.
template <class Summary>
struct MappedFile {
  MappedFileStatus status;
  std::vector<Summary> ranks;
  std::vector<int64_t> starts;  // each rank's first event, on its own clock
};

// Reads the summary file `file` into `status` (its warnings, its ranks' breakdown warnings, or why it
// cannot be taken) and calls `each` with every rank and its first event.
void MapSummaryFile(const std::string& file, const SummaryInput& input, MappedFileStatus* status,
                    const std::function<void(RankSummary, int64_t)>& each);

// Who maps one file of a run shared among processes.
struct FileShare {
  bool mine = false;
  // Not empty: the processes see different files under this one path (per-host disks with the same
  // names); nobody reads it, and the run skips it with this reason rather than keep one host's.
  std::string conflict;
};

// A run read by several processes (MPI, one per node or more): each lists the paths as its host sees
// them, maps the files given to it, and hands what it mapped to the process that reduces, which then
// prints what one process reading every file prints. Installed by the MPI executable for the commands
// whose summaries travel (analyze, advise, comm); every call is collective, made once per run by every
// process in the same order.
class MapSharing {
 public:
  virtual ~MapSharing() = default;
  // The run's files: for each path in order, every process's own listing of it in process order, each
  // file once. `ready` is what the process found before (its flags): an error on any process is the run's
  // error on all of them (the lowest process's), so that none waits for the others in a later call. An
  // error too for a path no process could list (the lowest process's reason).
  virtual Result<std::vector<std::string>> ShareFileList(const std::vector<Result<std::vector<std::string>>>& listings,
                                                         const Status& ready) = 0;
  // Who maps each of `files`: one process that sees it (the least loaded, ties to the lowest), so files
  // local to a host are read there and files on a shared disk are spread evenly.
  virtual std::vector<FileShare> Assign(const std::vector<std::string>& files) = 0;
  // Whether this process reduces and prints (the others' results are empty).
  virtual bool Reduces() const = 0;
  // Every process's payload, in process order, on the process that reduces; nothing on the others. An
  // error (on every process) when the payloads together exceed what one transfer carries.
  virtual Result<std::vector<std::string>> Gather(std::string payload) = 0;
};

// nullptr (the default): this process maps every file.
void SetMapSharing(MapSharing* sharing);
MapSharing* ActiveMapSharing();

// Hands the files this process mapped (`mine`) to the reducing process, which gets every process's
// records back into `records` by file; an error there when a payload arrived damaged.
Status ExchangeMappedFiles(MapSharing* sharing, std::vector<MappedFileRecord> mine,
                           std::vector<MappedFileRecord>* records);

// Under MapSharing: the files this process mapped go to the reducing process, whose `mapped` then holds
// every process's; a damaged payload is the first file's error.
template <class Summary>
void ShareMapped(MapSharing* sharing, const SharedRankReducer<Summary>& reducer, const std::vector<bool>& mine,
                 std::vector<MappedFile<Summary>>* mapped) {
  std::vector<MappedFileRecord> records;
  for (size_t i = 0; i < mapped->size(); ++i) {
    if (!mine[i]) continue;
    MappedFile<Summary>& file = (*mapped)[i];
    MappedFileRecord& record = records.emplace_back();
    record.file = i;
    record.status_code = file.status.status.code();
    record.status_message = file.status.status.message();
    record.warnings = std::move(file.status.warnings);
    record.warning_ids = std::move(file.status.warning_ids);
    record.breakdown_warnings = std::move(file.status.breakdown_warnings);
    record.starts = std::move(file.starts);
    for (Summary& rank : file.ranks) record.ranks.push_back(reducer.ToSummary(std::move(rank)));
    file = MappedFile<Summary>();
  }
  std::vector<MappedFileRecord> all;
  const Status received = ExchangeMappedFiles(sharing, std::move(records), &all);
  if (!received.ok()) {  // what arrived cannot be trusted: no file of the run is read
    for (MappedFile<Summary>& file : *mapped) file.status.status = received;
    return;
  }
  for (MappedFileRecord& record : all) {
    if (record.file >= mapped->size()) continue;
    MappedFile<Summary>& file = (*mapped)[record.file];
    if (record.status_code != StatusCode::kOk) file.status.status = Status(record.status_code, record.status_message);
    file.status.warnings = std::move(record.warnings);
    file.status.warning_ids = std::move(record.warning_ids);
    file.status.breakdown_warnings = std::move(record.breakdown_warnings);
    for (const RankSummary& rank : record.ranks) file.status.rank_ids.push_back(rank.comm.rank);
    file.starts = std::move(record.starts);
    for (RankSummary& rank : record.ranks) file.ranks.push_back(reducer.FromSummary(std::move(rank)));
  }
}

// MapFileRanks over `files` on all cores, each rank summarized by `reducer` (its trace given with its
// breakdown where the reducer asks for it) and each summary file among `files` read or refused as the
// reducer says; under MapSharing, `shared` (the same reducer, whose ranks travel) hands this process's
// files to the one that reduces. MapRanks below picks it by the reducer's type.
template <class Summary>
std::vector<MappedFile<Summary>> MapRanksWith(const std::vector<std::string>& files,
                                              const RankReducer<Summary>& reducer,
                                              const SharedRankReducer<Summary>* shared) {
  std::vector<MappedFile<Summary>> mapped(files.size());
  MapSharing* sharing = shared != nullptr ? ActiveMapSharing() : nullptr;
  std::vector<bool> mine(files.size(), true);
  if (sharing != nullptr) {
    const std::vector<FileShare> shares = sharing->Assign(files);
    for (size_t i = 0; i < files.size(); ++i) {
      mine[i] = shares[i].mine;
      if (!shares[i].conflict.empty() && sharing->Reduces()) {
        mapped[i].status.status = Status(StatusCode::kInvalidInput, shares[i].conflict);
      }
    }
  }
  const bool with_breakdown = reducer.WithBreakdown();
  ForEachOnAllCores(files.size(), [&](size_t i) {
    if (!mine[i]) return;
    MappedFile<Summary>& file = mapped[i];
    if (IsSummaryPath(files[i])) {
      MapSummaryFile(files[i], reducer.Summaries(), &file.status, [&](RankSummary rank, int64_t start) {
        file.starts.push_back(start);
        file.ranks.push_back(reducer.FromSummary(std::move(rank)));
      });
      // A command that makes no breakdown of a trace says nothing of a summary's.
      if (!with_breakdown) file.status.breakdown_warnings.clear();
      return;
    }
    MapFileRanks(files[i], with_breakdown, &file.status, [&](const Trace& trace, RankBreakdown breakdown) {
      file.starts.push_back(trace.start_ns());
      file.ranks.push_back(reducer.Summarize(trace, std::move(breakdown)));
    });
  });
  if (sharing != nullptr) ShareMapped(sharing, *shared, mine, &mapped);
  return mapped;
}

// A reducer whose ranks stay in this process: every file mapped here.
template <class Summary>
std::vector<MappedFile<Summary>> MapRanks(const std::vector<std::string>& files, const RankReducer<Summary>& reducer) {
  return MapRanksWith(files, reducer, static_cast<const SharedRankReducer<Summary>*>(nullptr));
}

// A reducer whose ranks travel: the files shared among the processes under MapSharing.
template <class Summary>
std::vector<MappedFile<Summary>> MapRanks(const std::vector<std::string>& files,
                                          const SharedRankReducer<Summary>& reducer) {
  return MapRanksWith(files, reducer, &reducer);
}

// The trace files behind `paths`, as every command lists them; an error when a path cannot be listed,
// or `ready` (what the command found before: its flags) when it is one. Under MapSharing the processes
// list together (MapSharing::ShareFileList): a command calls this before any early return of its own.
// Each file is listed once however often it is named (KeepEachFileOnce; not across the processes of an
// MPI job), and what the listing left out is said by the CollectMapWarnings that follows on this thread.
Result<std::vector<std::string>> ListRunFiles(const std::vector<std::string>& paths, const Status& ready = Status());

// As every command reads a run: an unreadable file is skipped with a warning unless none is left (then
// the error), a usage error (a file the tool cannot take) stops the run. Writes the files' warnings to
// stderr in the files' order, then the breakdowns' once across ranks, and appends them to `warnings`.
// `statuses[i]` is the map of `files[i]`. With `file_lines`, also the lines before the breakdowns' (files
// skipped, the traces' own warnings), as a summary file keeps them: all of them, the "no rank" warning
// of a lone rank too.
Status CollectMapWarnings(const std::vector<std::string>& paths, const std::vector<std::string>& files,
                          const std::vector<MappedFileStatus*>& statuses, std::vector<std::string>* warnings,
                          WarningLines* file_lines = nullptr);

// The same over the files MapRanks returned.
template <class Summary>
Status CollectMapWarnings(const std::vector<std::string>& paths, const std::vector<std::string>& files,
                          std::vector<MappedFile<Summary>>& mapped, std::vector<std::string>* warnings,
                          WarningLines* file_lines = nullptr) {
  std::vector<MappedFileStatus*> statuses;
  for (MappedFile<Summary>& file : mapped) statuses.push_back(&file.status);
  Status status = CollectMapWarnings(paths, files, statuses, warnings, file_lines);
  for (MappedFile<Summary>& file : mapped) {  // files left out there hold no rank for the reduce
    if (!file.status.left_out) continue;
    file.ranks.clear();
    file.starts.clear();
  }
  return status;
}

}  // namespace tuneprof

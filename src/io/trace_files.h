#pragma once
// Expands user paths (files or directories) into the trace files to import.
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tuneprof {

// What the importers say of a directory's files (importers/registry.h): which names and layouts are whose
// is format knowledge, theirs; io only walks directories and asks.
struct TraceFileKinds {
  // A directory read whole, as one rank or one run, and never searched; null: none is.
  bool (*is_rank_directory)(const std::string& dir) = nullptr;
  // A file that a directory search takes as a trace, by its name alone; null: none is.
  bool (*is_trace_name)(std::string_view name) = nullptr;
  // The error for a file no importer reads that is read through its export instead (a profiler's own
  // format): given, it is refused; met in a directory, it is refused unless its export lies beside it,
  // rather than a rank going missing. OK for every other file; null: no file is such.
  Status (*refuse_unexported)(const std::string& file, bool given) = nullptr;
  // The names a search takes, as the error for a directory without any says them ("*.json, *.sqlite").
  std::string trace_names;
};

// A file is returned as is, unless `kinds` refuses it. A directory yields every file below it whose name
// `kinds` takes, and tuneprof's rank summaries (*.tps), sorted by path (numbers in names compared as
// numbers) so that output is deterministic.
// A directory `kinds` reads whole (given, or met while searching) is returned whole, as is, and not
// searched. A directory without any trace is an error naming it and what was looked for.
// "-" is an error: the run reads files, never standard input. tuneprof's own outputs found in a directory
// (a run merged by `annotate --merge`) are left out, each with a line in `notes` where given: read, they
// would count every rank once more.
Result<std::vector<std::string>> ListTraceFiles(const std::string& path, const TraceFileKinds& kinds,
                                                std::vector<std::string>* notes = nullptr);

// `files` with each file once, at its first place: the same file named again, or reached through a symlink
// or a hard link (device and inode), is one rank read once. One line per such file in `notes`
// (`FILE: named N times (or through links to it); read once`), five, then one line for the rest.
std::vector<std::string> KeepEachFileOnce(const std::vector<std::string>& files, std::vector<std::string>* notes);

// The first bytes of every merged run `annotate --merge` writes (report/trace/merged_trace.h writes them).
inline constexpr std::string_view kMergedRunHead = "{\"tuneprof\":\"merged run\",";
bool IsMergedRunTrace(const std::string& path);

// tuneprof's rank summaries (`tuneprof summarize`), listed beside traces for the commands that read them.
inline constexpr std::string_view kSummaryExtension = ".tps";
// The first bytes of every rank summary (docs/summary-format.md).
inline constexpr std::string_view kSummaryMagic = "TUNEPROF-SUMMARY\n";
bool IsSummaryPath(std::string_view path);

// The usage error of a command that needs the events, given a summary: one line naming the file.
Status SummaryRefused(const std::string& path, std::string_view command);

// torch's export_memory_timeline file, raw events or plot points, by its first bytes: a JSON array whose
// first element is an array starting with a number.
bool IsMemoryTimelineHead(std::string_view head);

// The export_memory_timeline files under `dir` (recursively), sorted, found by content among its first
// kMaxPeekedForTimeline files that are neither traces (by `kinds`) nor summaries by name: only a directory
// that holds no trace is searched for them, to name what it holds instead.
inline constexpr size_t kMaxPeekedForTimeline = 256;
std::vector<std::string> MemoryTimelineExportsIn(const std::string& dir, const TraceFileKinds& kinds);

}  // namespace tuneprof

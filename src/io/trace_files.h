#pragma once
// Expands user paths (files or directories) into the trace files to import.
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tuneprof {

// Says whether a directory is one rank (or one run) of a format read whole. Which layouts are is format
// knowledge, the importers' (importers/registry.h); io only lists.
using RankDirectoryTest = bool (*)(const std::string& dir);

// A file is returned as is. A directory yields every file below it whose name looks like a trace
// (*.json, *.json.gz, *.pt.trace.json*; *.sqlite, Nsight Systems exports; *.tps, tuneprof's rank
// summaries), sorted by path so that output is deterministic. A .nsys-rep (given, or in a directory without its .sqlite export) is an error saying
// to export it first.
// A directory `is_rank_directory` accepts (given, or met while searching) is returned whole, as is, and
// not searched; a null test accepts none. A directory without any trace is an error naming it.
// "-" is an error: the run reads files, never standard input. tuneprof's own outputs found in a directory
// (a run merged by `annotate --merge`) are left out, each with a line in `notes` where given: read, they
// would count every rank once more.
Result<std::vector<std::string>> ListTraceFiles(const std::string& path, RankDirectoryTest is_rank_directory,
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
// kMaxPeekedForTimeline files that are neither traces nor summaries by name: only a directory that holds no
// trace is searched for them, to name what it holds instead.
inline constexpr size_t kMaxPeekedForTimeline = 256;
std::vector<std::string> MemoryTimelineExportsIn(const std::string& dir);

}  // namespace tuneprof

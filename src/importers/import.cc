#include "importers/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "importers/ascend/ascend_db.h"
#include "importers/ascend/ascend_cluster.h"
#include "importers/ascend/ascend_directory.h"
#include "importers/chrome_json/chrome_trace_importer.h"
#include "importers/memory_export/memory_timeline_export_reader.h"
#include "importers/nsys/nsys_importer.h"
#include "io/byte_source.h"
#include "io/pickle_reader.h"
#include "io/load_progress.h"
#include "io/sqlite_file.h"
#include "io/trace_files.h"

namespace tuneprof {
namespace {

constexpr size_t kSniffBytes = 64;
constexpr size_t kTablesNamed = 6;

// A SQLite file of some other program: say what it holds, so the user sees it is the wrong file.
Status UnknownDatabase(const std::string& path, const SqliteFile& db) {
  // Profiler tables that are views (or other objects that run code when read) are not read: said as such.
  const std::vector<std::string> refused = db.Diagnostics();
  if (!refused.empty()) {
    return InvalidInput(refused.size() == 1 ? refused.front()
                                            : fmt::format("{} (and {} more such objects)", refused.front(),
                                                          refused.size() - 1));
  }
  const std::vector<std::string> tables = db.TableNames();
  std::string held;
  for (size_t i = 0; i < tables.size() && i < kTablesNamed; ++i) held += (i ? ", " : "") + tables[i];
  if (tables.size() > kTablesNamed) held += fmt::format(", ... ({} tables)", tables.size());
  return InvalidInput(fmt::format(
      "{}: a SQLite database but not a profile: no Nsight Systems tables (StringIds with CUPTI_ACTIVITY_KIND_*) "
      "and no Ascend tables (TASK, PYTORCH_API); it holds {}; give an `nsys export --type sqlite` file or a torch_npu "
      ".db",
      path, held.empty() ? "no tables" : "tables " + held));
}

// `export --sqlite` writes the run's tables beside this one: a directory holding an export (a .sqlite)
// must not read it as one more rank, nor as "not a profile".
constexpr std::string_view kExportMetaTable = "tuneprof_meta";

Status OwnExport(const std::string& path) {
  return InvalidInput(path + ": a database tuneprof export --sqlite wrote, not a profile; give the traces it was "
                             "exported from");
}

// A JSON document is a trace when it has a traceEvents array (an empty one too: an empty trace, which
// gets a warning) or is an array of events. `{"foo": 1}` or `[]` has nothing a trace has; reading it as
// a trace without work would pass a wrong file off as a quiet run.
Status CheckIsTrace(const Trace& trace) {
  const TraceMetadata& meta = trace.metadata();
  if (meta.truncated || meta.entry_count > 0 || meta.has_trace_events_array) return Status::Ok();
  return InvalidInput(meta.path +
                      ": not a trace: a JSON document without trace events (no \"traceEvents\" array and no event "
                      "objects); give the profiler's trace file (Kineto *.pt.trace.json, trace_view.json)");
}

// One trace per file, except an nsys export of several processes.
Result<std::vector<Trace>> ImportOne(Result<Trace> trace) {
  if (!trace.ok()) return trace.status();
  std::vector<Trace> traces;
  traces.push_back(std::move(trace).value());
  return traces;
}

}  // namespace

Result<Trace> ImportFile(const std::string& path) {
  TP_ASSIGN_OR_RETURN(std::vector<Trace> traces, ImportFileRanks(path));
  if (traces.size() != 1) {
    return InvalidInput(
        fmt::format("{}: holds {} ranks (an Nsight Systems export of {} processes that ran device "
                    "work) where one trace was expected",
                    path, traces.size(), traces.size()));
  }
  return std::move(traces.front());
}

Result<std::vector<Trace>> ImportFileRanks(const std::string& path) {
  if (IsSummaryPath(path)) return SummaryRefused(path, "this command");  // no events to import
  // Ascend's profiler writes a directory per rank; ListTraceFiles hands those over whole.
  std::error_code ec;
  // What a progress bar draws (io/load_progress.h); a directory's total is unknown (0).
  const uintmax_t size_on_disk = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
  ScopedLoad load(path, ec ? 0 : static_cast<uint64_t>(size_on_disk));
  if (std::filesystem::is_directory(path, ec)) {
    if (IsAscendProfilerDirectory(path)) return ImportOne(ImportAscendDirectory(path));
    if (IsClusterAnalysisDirectory(path)) return ImportClusterAnalysis(path);
    return InvalidInput(path + ": a directory that is not Ascend profiler output (no ASCEND_PROFILER_OUTPUT/)");
  }
  TP_ASSIGN_OR_RETURN(std::string head, ReadHead(path, kSniffBytes));
  if (const std::string_view compression = CompressionOf(head); !compression.empty()) {
    return UnreadCompression(path, compression);
  }
  if (head.starts_with(std::string_view("SQLite format 3\0", 16))) {
    // Nsight Systems exports: StringIds plus CUPTI/NVTX tables (torch_npu .db files have neither).
    TP_ASSIGN_OR_RETURN(auto db, SqliteFile::Open(path));
    if (db->HasTable(kExportMetaTable)) return OwnExport(path);
    if (IsNsysExport(*db)) return ImportNsysSqlite(*db, std::filesystem::file_size(path, ec));
    // torch_npu's ascend_pytorch_profiler*.db and msprof's msprof_*.db given as a file: the CANN tables.
    if (db->HasTable("TASK") || db->HasTable("PYTORCH_API")) return ImportOne(ImportAscendDatabase(path, path));
    return UnknownDatabase(path, *db);
  }
  if (head.starts_with(kSummaryMagic)) {  // summaries are told by their name, as directories are searched
    return InvalidInput(path + ": a tuneprof rank summary not named *" + std::string(kSummaryExtension) +
                        "; rename it so that the commands that read summaries take it");
  }
  if (LooksLikePickle(head)) {
    return InvalidInput(path + ": a Python pickle (a PyTorch memory snapshot?): `tuneprof memory` reads snapshots; "
                               "this command reads traces");
  }
  if (LooksLikeMemoryTimelineExport(head)) {
    return InvalidInput(path + ": a memory timeline (torch export_memory_timeline), not a trace: give it alone to "
                               "`tuneprof memory`");
  }
  if (!SniffChromeTrace(head)) {
    return InvalidInput(path +
                        ": not a trace tuneprof reads (expected Chrome-trace JSON, .json or .json.gz; an Nsight "
                        "Systems or torch_npu SQLite export; an Ascend rank directory; or a rank summary, *.tps)");
  }
  TP_ASSIGN_OR_RETURN(auto source, OpenByteSource(path));
  TP_ASSIGN_OR_RETURN(Trace trace, ImportChromeTrace(source.get()));
  TP_RETURN_IF_ERROR(CheckIsTrace(trace));
  return ImportOne(std::move(trace));
}

Result<std::vector<Trace>> ImportPaths(const std::vector<std::string>& paths, std::vector<std::string>* warnings) {
  std::vector<Trace> traces;
  UnreadableFiles skipped;
  std::vector<std::string> listed, notes;
  for (const std::string& path : paths) {
    TP_ASSIGN_OR_RETURN(std::vector<std::string> files, ListTraceFiles(path, &notes));
    listed.insert(listed.end(), files.begin(), files.end());
  }
  for (const std::string& file : KeepEachFileOnce(listed, &notes)) {
    Result<std::vector<Trace>> ranks = ImportFileRanks(file);
    if (ranks.ok()) {
      for (Trace& trace : *ranks) traces.push_back(std::move(trace));
    } else if (warnings == nullptr || ranks.status().code() == StatusCode::kUsage) {
      return ranks.status();
    } else {
      skipped.Add(file, ranks.status());
    }
  }
  if (traces.empty() && !skipped.empty()) return skipped.NothingLeft(paths);
  if (warnings != nullptr) {
    warnings->insert(warnings->end(), notes.begin(), notes.end());
    skipped.AppendWarnings(warnings);
  }
  return traces;
}

void UnreadableFiles::Add(const std::string& file, const Status& status) {
  if (count_++ == 0) first_ = status;
  if (named_.size() < kNamed) {
    named_.push_back(status.message() + "; skipped");
    return;
  }
  // The message names the file first; what follows is the reason, shared by files that fail alike.
  std::string_view reason = status.message();
  if (reason.starts_with(file + ": ")) reason.remove_prefix(file.size() + 2);
  ++by_reason_[std::string(reason)];
}

Status UnreadableFiles::NothingLeft(const std::vector<std::string>& paths) const {
  if (count_ == 1) return first_;
  const std::string where = paths.size() == 1 ? paths[0] : "the inputs";
  return Status(first_.code(), where + ": none of the " + std::to_string(count_) +
                                   " trace files could be read; the first: " + first_.message());
}

void UnreadableFiles::AppendWarnings(std::vector<std::string>* out) const {
  for (const std::string& line : named_) out->push_back(line);
  if (count_ <= named_.size()) return;
  std::vector<std::pair<uint64_t, std::string>> reasons;
  for (const auto& [reason, n] : by_reason_) reasons.emplace_back(n, reason);
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string line = std::to_string(count_ - named_.size()) + " more unreadable files skipped (";
  for (size_t i = 0; i < reasons.size() && i < kReasons; ++i) {
    line += (i > 0 ? "; " : "") + std::to_string(reasons[i].first) + ": " + reasons[i].second;
  }
  if (reasons.size() > kReasons) line += "; other reasons";
  out->push_back(line + ")");
}

}  // namespace tuneprof

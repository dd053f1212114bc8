#include "importers/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "importers/registry.h"
#include "io/byte_source.h"
#include "io/load_progress.h"
#include "io/sqlite_file.h"
#include "io/trace_files.h"

namespace tuneprof {
namespace {

constexpr size_t kTablesNamed = 6;

// A SQLite file of some other program: say what it holds, so the user sees it is the wrong file.
Status UnknownDatabase(const std::string& path, const SqliteFile& db) {
  // Profiler tables that are views (or other objects that run code when read) are not read: said as such.
  const std::vector<std::string> refused = db.Diagnostics();
  if (!refused.empty()) {
    return InvalidInput(refused.size() == 1
                            ? refused.front()
                            : fmt::format("{} (and {} more such objects)", refused.front(), refused.size() - 1));
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

// A directory no entry claims: the layouts read whole are Ascend's.
Status UnknownDirectory(const std::string& path) {
  return InvalidInput(path + ": a directory that is not Ascend profiler output (no ASCEND_PROFILER_OUTPUT/)");
}

Result<std::vector<Trace>> ImportDatabase(ImportInput input) {
  TP_ASSIGN_OR_RETURN(auto db, SqliteFile::Open(input.path));
  input.database = db.get();
  if (const InputFormat* format = FormatClaiming(RecognisedBy::kDatabase, input)) return format->import(input);
  return UnknownDatabase(input.path, *db);
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
  // A directory format's rank (Ascend's profiler writes one per rank) comes whole from ListInputFiles.
  std::error_code ec;
  // What a progress bar draws (io/load_progress.h); a directory's total is unknown (0).
  const uintmax_t size_on_disk = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
  ScopedLoad load(path, ec ? 0 : static_cast<uint64_t>(size_on_disk));
  if (std::filesystem::is_directory(path, ec)) {
    const ImportInput input{path};
    if (const InputFormat* format = FormatClaiming(RecognisedBy::kDirectory, input)) return format->import(input);
    return UnknownDirectory(path);
  }
  TP_ASSIGN_OR_RETURN(std::string head, ReadHead(path, kSniffBytes));
  if (const std::string_view compression = CompressionOf(head); !compression.empty()) {
    return UnreadCompression(path, compression);
  }
  const ImportInput input{path, head};
  if (head.starts_with(kSqliteHead)) return ImportDatabase(input);
  if (const InputFormat* format = FormatClaiming(RecognisedBy::kHead, input)) return format->import(input);
  return InvalidInput(path + ": not a trace tuneprof reads (expected " + ExpectedFormats() + ")");
}

Result<std::vector<std::string>> ListInputFiles(const std::string& path, std::vector<std::string>* notes) {
  return ListTraceFiles(path, DirectoryFileKinds(), notes);
}

Result<std::vector<Trace>> ImportPaths(const std::vector<std::string>& paths, std::vector<std::string>* warnings) {
  std::vector<Trace> traces;
  UnreadableFiles skipped;
  std::vector<std::string> listed, notes;
  for (const std::string& path : paths) {
    TP_ASSIGN_OR_RETURN(std::vector<std::string> files, ListInputFiles(path, &notes));
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

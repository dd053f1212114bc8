#include "importers/registry.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <system_error>
#include <utility>

#include "importers/ascend/ascend_cluster.h"
#include "importers/ascend/ascend_db.h"
#include "importers/ascend/ascend_directory.h"
#include "importers/ascend/ascend_layout.h"
#include "importers/chrome_json/chrome_trace_importer.h"
#include "importers/memory_export/memory_timeline_export_reader.h"
#include "importers/nsys/nsys_importer.h"
#include "io/byte_source.h"
#include "io/pickle_reader.h"
#include "io/trace_files.h"

namespace tuneprof {
namespace {

// One trace per input, as most formats give.
Result<std::vector<Trace>> ImportOne(Result<Trace> trace) {
  if (!trace.ok()) return trace.status();
  std::vector<Trace> traces;
  traces.push_back(std::move(trace).value());
  return traces;
}

// Chrome-trace JSON (Kineto, legacy PyTorch, torch_npu's trace_view.json). A memory timeline export is
// JSON too, and its own entry's.
bool ClaimsChromeTrace(const ImportInput& in) {
  return SniffChromeTrace(in.head) && !LooksLikeMemoryTimelineExport(in.head);
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

Result<std::vector<Trace>> ImportChromeFile(const ImportInput& in) {
  TP_ASSIGN_OR_RETURN(auto source, OpenByteSource(in.path));
  TP_ASSIGN_OR_RETURN(Trace trace, ImportChromeTrace(source.get()));
  TP_RETURN_IF_ERROR(CheckIsTrace(trace));
  return ImportOne(std::move(trace));
}

// `export --sqlite` writes the run's tables beside this one: a directory holding an export (a .sqlite)
// must not read it as one more rank, nor as "not a profile".
constexpr std::string_view kExportMetaTable = "tuneprof_meta";

Result<std::vector<Trace>> RefuseOwnExport(const ImportInput& in) {
  return InvalidInput(in.path +
                      ": a database tuneprof export --sqlite wrote, not a profile; give the traces it "
                      "was exported from");
}

Result<std::vector<Trace>> ImportNsysFile(const ImportInput& in) {
  std::error_code ec;
  return ImportNsysSqlite(*in.database, std::filesystem::file_size(in.path, ec));
}

// torch_npu's ascend_pytorch_profiler*.db and msprof's msprof_*.db given as a file: the CANN tables
// (Nsight Systems exports have neither).
bool ClaimsAscendDatabase(const ImportInput& in) {
  return in.database->HasTable("TASK") || in.database->HasTable("PYTORCH_API");
}

Result<std::vector<Trace>> RefuseMisnamedSummary(const ImportInput& in) {
  // Summaries are told by their name, as directories are searched.
  return InvalidInput(in.path + ": a tuneprof rank summary not named *" + std::string(kSummaryExtension) +
                      "; rename it so that the commands that read summaries take it");
}

Result<std::vector<Trace>> RefusePickle(const ImportInput& in) {
  return InvalidInput(in.path +
                      ": a Python pickle (a PyTorch memory snapshot?): `tuneprof memory` reads "
                      "snapshots; this command reads traces");
}

Result<std::vector<Trace>> RefuseMemoryTimeline(const ImportInput& in) {
  return InvalidInput(in.path +
                      ": a memory timeline (torch export_memory_timeline), not a trace: give it alone "
                      "to `tuneprof memory`");
}

// The entries; their order gives the wording of ExpectedFormats().
const std::array kFormats{
    InputFormat{"chrome_json", RecognisedBy::kHead, "Chrome-trace JSON, .json or .json.gz", "", "*.json *.json.gz",
                &ClaimsChromeTrace, &ImportChromeFile},
    InputFormat{"tuneprof_export", RecognisedBy::kDatabase, "", "", "",
                [](const ImportInput& in) { return in.database->HasTable(kExportMetaTable); }, &RefuseOwnExport},
    InputFormat{"nsys_sqlite", RecognisedBy::kDatabase, "Nsight Systems", "SQLite export", "*.sqlite",
                [](const ImportInput& in) { return IsNsysExport(*in.database); }, &ImportNsysFile,
                &RefuseUnexportedNsysReport},
    // msprof's msprof_*.db and torch_npu's ascend_pytorch_profiler*.db, which a directory of ranks may hold
    // loose (outside a rank directory); other .db files (analysis.db) are read only with their rank.
    InputFormat{"ascend_db", RecognisedBy::kDatabase, "torch_npu", "SQLite export",
                "msprof_*.db ascend_pytorch_profiler*.db", &ClaimsAscendDatabase,
                [](const ImportInput& in) { return ImportOne(ImportAscendDatabase(in.path, in.path)); }},
    InputFormat{"ascend_directory", RecognisedBy::kDirectory, "an Ascend rank directory", "", "",
                [](const ImportInput& in) { return IsAscendProfilerDirectory(in.path); },
                [](const ImportInput& in) { return ImportAscendDirectoryRanks(in.path); }},
    InputFormat{"ascend_cluster", RecognisedBy::kDirectory, "", "", "",
                [](const ImportInput& in) { return IsClusterAnalysisDirectory(in.path); },
                [](const ImportInput& in) { return ImportClusterAnalysis(in.path); }},
    InputFormat{"rank_summary", RecognisedBy::kHead, "a rank summary, *.tps", "", "",
                [](const ImportInput& in) { return in.head.starts_with(kSummaryMagic); }, &RefuseMisnamedSummary},
    InputFormat{"memory_snapshot", RecognisedBy::kHead, "", "", "",
                [](const ImportInput& in) { return LooksLikePickle(in.head); }, &RefusePickle},
    InputFormat{"memory_timeline", RecognisedBy::kHead, "", "", "",
                [](const ImportInput& in) { return LooksLikeMemoryTimelineExport(in.head); }, &RefuseMemoryTimeline},
};

// The phrase of the entries [first, end) that share first's group.
std::string GroupPhrase(std::span<const InputFormat> formats, size_t first, size_t end) {
  if (formats[first].group.empty()) return std::string(formats[first].expected);
  std::string phrase = "an ";
  for (size_t i = first; i < end; ++i)
    phrase += std::string(i > first ? " or " : "") + std::string(formats[i].expected);
  return phrase + " " + std::string(formats[first].group);
}

// The words of a space-separated list.
std::vector<std::string_view> PatternWords(std::string_view list) {
  std::vector<std::string_view> words;
  for (size_t at = 0; at < list.size();) {
    const size_t end = std::min(list.find(' ', at), list.size());
    if (end > at) words.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  return words;
}

// `name` against a pattern with one `*`: what comes before it starts the name, what comes after ends it.
bool MatchesLoosePattern(std::string_view name, std::string_view pattern) {
  const size_t star = pattern.find('*');
  const std::string_view prefix = pattern.substr(0, star), suffix = pattern.substr(star + 1);
  return name.size() >= prefix.size() + suffix.size() && name.starts_with(prefix) && name.ends_with(suffix);
}

Status RefuseAnyUnexported(const std::string& file, bool given) {
  for (const InputFormat& format : kFormats) {
    if (format.refuse_unexported != nullptr) TP_RETURN_IF_ERROR(format.refuse_unexported(file, given));
  }
  return Status::Ok();
}

// Every entry's loose-file patterns, in the registry's order, for "holds no trace files (...)".
std::string LooseTraceNames() {
  std::string names;
  for (const InputFormat& format : kFormats) {
    for (std::string_view pattern : PatternWords(format.loose_files))
      names += (names.empty() ? "" : ", ") + std::string(pattern);
  }
  return names;
}

}  // namespace

std::span<const InputFormat> InputFormats() { return kFormats; }

const InputFormat* FormatClaiming(RecognisedBy by, const ImportInput& input) {
  for (const InputFormat& format : kFormats) {
    if (format.by == by && format.claims(input)) return &format;
  }
  return nullptr;
}

bool IsRankDirectory(const std::string& dir) {
  return FormatClaiming(RecognisedBy::kDirectory, ImportInput{dir}) != nullptr;
}

bool IsLooseTraceName(std::string_view name) {
  for (const InputFormat& format : kFormats) {
    for (std::string_view pattern : PatternWords(format.loose_files))
      if (MatchesLoosePattern(name, pattern)) return true;
  }
  return false;
}

const TraceFileKinds& DirectoryFileKinds() {
  static const TraceFileKinds kinds{&IsRankDirectory, &IsLooseTraceName, &RefuseAnyUnexported, LooseTraceNames()};
  return kinds;
}

std::string ExpectedFormats() {
  std::vector<std::string> phrases;
  const std::span<const InputFormat> formats = kFormats;
  for (size_t i = 0; i < formats.size();) {
    if (formats[i].expected.empty()) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (!formats[i].group.empty() && end < formats.size() && formats[end].group == formats[i].group) ++end;
    phrases.push_back(GroupPhrase(formats, i, end));
    i = end;
  }
  std::string out;
  for (size_t i = 0; i < phrases.size(); ++i) {
    out += std::string(i > 0 ? "; " : "") + (i > 0 && i + 1 == phrases.size() ? "or " : "") + phrases[i];
  }
  return out;
}

}  // namespace tuneprof

#include "importers/ascend/ascend_msprof.h"

#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>
#include <vector>

#include "base/decimal.h"

#include "importers/ascend/ascend_communication.h"
#include "importers/ascend/ascend_db.h"
#include "importers/ascend/ascend_tables.h"
#include "importers/chrome_json/chrome_trace_importer.h"
#include "importers/common/rank.h"
#include "io/byte_source.h"
#include "importers/ascend/ascend_layout.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOutputDir = "mindstudio_profiler_output";
constexpr std::string_view kAnalyzeDir = "analyze";
constexpr std::string_view kProfPrefix = "PROF_";

// Where the rank's files are: `root` is PROF_*, `output` its mindstudio_profiler_output/.
using Layout = RankLayout;

Layout Resolve(const std::string& dir) { return ResolveLayout(dir, kOutputDir); }
fs::path Normal(const std::string& dir) { return NormalDir(dir); }
bool IsFile(const fs::path& p) { return IsRegularFile(p); }

bool IsDirectory(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::vector<fs::path> Entries(const fs::path& dir, bool directories) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (directories ? IsDirectory(it->path()) : IsFile(it->path())) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// msprof names its exports {kind}_{timestamp}.{ext} (op_summary_20240101120000.csv): match the prefix.
bool Named(const fs::path& p, std::string_view prefix, std::string_view extension) {
  const std::string name = p.filename().string();
  return name.starts_with(prefix) && p.extension() == extension;
}

std::vector<fs::path> Matching(const fs::path& dir, std::string_view prefix, std::string_view extension) {
  std::vector<fs::path> out;
  for (const fs::path& p : Entries(dir, false)) {
    if (Named(p, prefix, extension)) out.push_back(p);
  }
  return out;
}

// The Db export: msprof_{ts}.db, in mindstudio_profiler_output/ or (newer CANN) in PROF_* itself.
fs::path FindDatabase(const Layout& layout) {
  for (const fs::path& dir : {layout.output, layout.root}) {
    const auto dbs = Matching(dir, "msprof", ".db");
    if (!dbs.empty()) return dbs.front();
  }
  return {};
}

// The timeline, or an empty one (with a warning) when it is missing or broken: the summaries still load.
Trace ImportTimeline(const fs::path& timeline, const std::string& dir) {
  std::string problem =
      (Normal(dir) / kOutputDir / "msprof_*.json").string() + std::string(kMissingTimelineWarning) + dir;
  return ImportTimelineOrEmpty(timeline, dir, problem);
}

void ReadOpSummary(const fs::path& path, SideTableBuilder* out) {
  auto csv = CsvReader::Open(path.string());
  Status status = csv.ok() ? ReadKernelDetails(&csv.value(), out) : csv.status();
  if (!status.ok()) out->Warn(status.message());
}

// step_trace_{ts}.csv: one row per iteration of a model and device (Device_id, Iteration ID, FP Start,
// BP End, Iteration End, Iteration Time, ..., Model ID; absolute µs). An iteration runs
// [Iteration End - Iteration Time, Iteration End].
struct Iteration {
  std::pair<int64_t, int64_t> group;  // (Device_id, Model ID); kNoId when the column is absent
  int64_t number = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

int64_t IntCell(const CsvReader& csv, int column) {
  int64_t value;
  return column != kNoColumn && ParseInt64(csv.Text(column), &value) ? value : kNoId;
}

Status ReadIterations(const fs::path& path, std::vector<Iteration>* out, SideTableBuilder* side) {
  TP_ASSIGN_OR_RETURN(CsvReader csv, CsvReader::Open(path.string()));
  const int id = csv.Column("Iteration ID"), end = csv.Column("Iteration End(us)");
  const int time = csv.Column("Iteration Time(us)");
  if (id == kNoColumn || end == kNoColumn || time == kNoColumn) {
    return InvalidInput(path.string() + ": no Iteration ID, Iteration End(us) and Iteration Time(us) columns");
  }
  const int device = csv.Column("Device_id"), model = csv.Column("Model ID");
  return ForEachRecord(&csv, side, [&] {
    Iteration it;
    int64_t duration;
    if (!ParseInt64(csv.Text(id), &it.number) || !ParseMicrosToNanos(csv.Text(end), &it.end_ns) ||
        !ParseMicrosToNanos(csv.Text(time), &duration) || duration < 0) {
      side->Warn(csv.Where("no Iteration ID, End or Time; row skipped"));
      return;
    }
    it.start_ns = it.end_ns - duration;
    it.group = {IntCell(csv, device), IntCell(csv, model)};
    out->push_back(it);
  });
}

// msprof's iterations are the steps of a timeline that has no ProfilerStep of its own (a graph-mode or
// non-PyTorch run), each taken as torch_npu takes a ProfilerStep's range. A timeline with ProfilerStep
// keeps those. Rows of several (device, model) pairs: the pair with the most iterations (the training
// graph; the others are typically one-off init graphs), with a warning naming the choice.
void ReadStepTrace(const fs::path& path, const Trace& trace, SideTableBuilder* out) {
  std::vector<Iteration> iterations;
  if (Status s = ReadIterations(path, &iterations, out); !s.ok()) return out->Warn(s.message());
  if (iterations.empty()) return;
  if (!trace.steps().empty()) {
    return out->Warn(path.string() + ": not used for steps: the timeline has ProfilerStep steps of its own");
  }
  std::map<std::pair<int64_t, int64_t>, size_t> rows;
  for (const Iteration& it : iterations) ++rows[it.group];
  const auto chosen = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
                        return a.second < b.second;  // the first (lowest ids) of equals
                      })->first;
  if (rows.size() > 1) {
    out->Warn(path.string() + ": iterations of " + std::to_string(rows.size()) +
              " (Device_id, Model ID) pairs; steps from Device_id " + std::to_string(chosen.first) + ", Model ID " +
              std::to_string(chosen.second) + " (the most iterations)");
  }
  std::erase_if(iterations, [&](const Iteration& it) { return it.group != chosen; });
  std::stable_sort(iterations.begin(), iterations.end(),
                   [](const Iteration& a, const Iteration& b) { return a.start_ns < b.start_ns; });
  for (const Iteration& it : iterations) out->AddStep(Step{it.number, kNoIndex, it.start_ns, it.end_ns});
}

// analyze/ (msprof --analyze=on): the JSON files as torch_npu writes them, else the same tables in
// communication_analyzer.db (analysis.db's CommAnalyzer* schema).
void ReadAnalyze(const Layout& layout, SideTableBuilder* out) {
  const fs::path dir = layout.root / kAnalyzeDir;
  const fs::path communication = dir / "communication.json";
  const fs::path matrix = dir / "communication_matrix.json";
  if (IsFile(communication) || IsFile(matrix)) {
    for (const Status& status :
         {ReadCommunicationFile(communication.string(), out), ReadCommunicationMatrixFile(matrix.string(), out)}) {
      if (!status.ok()) out->Warn(status.message());
    }
    return;
  }
  const fs::path db = dir / "communication_analyzer.db";
  if (IsFile(db)) {
    if (Status s = ReadAnalysisDatabase(db.string(), out); !s.ok()) out->Warn(s.message());
  }
}

// Scalars as text ("1800", 24); objects and arrays are not flattened further.
std::string ScalarText(simdjson::dom::element element) {
  std::string_view text;
  if (element.get_string().get(text) == simdjson::SUCCESS) return std::string(text);
  return simdjson::minify(element);
}

// device_{N}/info.json; also info.json.{N}, the name some CANN versions give it (inferred).
std::vector<fs::path> InfoFiles(const fs::path& root) {
  std::vector<fs::path> out;
  for (const fs::path& device : Entries(root, true)) {
    if (!device.filename().string().starts_with("device_")) continue;
    for (const fs::path& p : Entries(device, false)) {
      const std::string name = p.filename().string();
      if (name == "info.json" || name.starts_with("info.json.")) out.push_back(p);
    }
  }
  return out;
}

struct DeviceFacts {
  std::string chip;
  int64_t rank = kNoId;
};

// One info.json: its DeviceInfo block as "msprof_info.<device dir>.<key>" entries, the chip and the rank.
void ReadInfoJson(const fs::path& path, SideTableBuilder* out, DeviceFacts* facts) {
  // Read (and recorded as read) through io as every input is; an info.json holds a few KB.
  Result<std::string> text = ReadWholeFile(path.string(), size_t{64} << 20);
  if (!text.ok()) {
    out->Warn(text.status().message() + "; ignored");
    return;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto error = parser.parse(simdjson::padded_string(*text)).get(doc); error) {
    out->Warn(path.string() + ": unreadable (" + simdjson::error_message(error) + "); ignored");
    return;
  }
  const std::string prefix = "msprof_info." + path.parent_path().filename().string() + ".";
  simdjson::dom::array devices;
  if (doc["DeviceInfo"].get_array().get(devices) == simdjson::SUCCESS) {
    for (simdjson::dom::element device : devices) {
      simdjson::dom::object fields;
      if (device.get_object().get(fields) != simdjson::SUCCESS) continue;
      for (auto field : fields) out->AddMetadataEntry(prefix + std::string(field.key), ScalarText(field.value));
      break;  // a device directory describes its one device
    }
  } else {
    out->Warn(path.string() + ": no DeviceInfo array");
  }
  std::string_view chip;
  if (facts->chip.empty() && doc["platform_version"].get_string().get(chip) == simdjson::SUCCESS && !chip.empty()) {
    facts->chip = std::string(chip);
    out->AddMetadataEntry(prefix + "platform_version", facts->chip);
  }
  int64_t rank;
  if (facts->rank == kNoId && doc["rank_id"].get_int64().get(rank) == simdjson::SUCCESS && rank >= 0) {
    facts->rank = rank;
  }
}

// The chip and (unless the .db already said) the rank from device_*/info.json.
void ReadDeviceInfo(const Layout& layout, SideTableBuilder* out) {
  DeviceFacts facts;
  for (const fs::path& path : InfoFiles(layout.root)) ReadInfoJson(path, out, &facts);
  if (!facts.chip.empty()) out->NameDevices(DeviceType::kNpu, facts.chip);
  TraceMetadata* meta = out->mutable_metadata();
  if (facts.rank == kNoId || meta->rank_source == RankSource::kTrace) return;
  meta->rank = facts.rank;
  meta->rank_source = RankSource::kTrace;
  DropWarnings(meta, WarningId::kNoRank);
}

// What the import read, so that the inventory says "rows" for those and "counted only" for the rest.
struct ReadFiles {
  fs::path timeline;
  fs::path op_summary;
  fs::path step_trace;
  fs::path db;
};

std::string Relative(const Layout& layout, const fs::path& p) {
  return p.lexically_relative(layout.root).generic_string();
}

// One entry per file of `dir` (a folder of PROF_*), rows counted; databases per table.
void AddFolderInventory(const Layout& layout, const fs::path& dir, const ReadFiles& read, TraceMetadata* meta) {
  static const std::vector<std::string_view> kNone;
  const bool analyze_json = IsFile(layout.root / kAnalyzeDir / "communication.json") ||
                            IsFile(layout.root / kAnalyzeDir / "communication_matrix.json");
  for (const fs::path& p : Entries(dir, false)) {
    const std::string name = Relative(layout, p);
    const std::string file = p.filename().string();
    const bool analyze = dir.filename() == kAnalyzeDir;
    if (p.extension() == ".db") {
      const bool main = p == read.db;
      const bool comm_db = analyze && file == "communication_analyzer.db" && !analyze_json;
      const std::vector<std::string_view>& modelled = main      ? AscendDbModelledTables()
                                                      : comm_db ? AnalysisDbModelledTables()
                                                                : kNone;
      (void)AddDatabaseInventory(p.string(), name, modelled, meta);  // an unreadable file is an entry
      continue;
    }
    const bool modelled = p == read.timeline || p == read.op_summary || p == read.step_trace ||
                          (analyze && (file == "communication.json" || file == "communication_matrix.json"));
    const SourceState state = modelled ? SourceState::kRead : SourceState::kCounted;
    if (p.extension() == ".csv") {
      CountCsvRows(p, name, state, meta);
    } else {
      // timeline entries (every phase) as the Chrome importer counted them
      AddInventoryEntry(meta, name, state, p == read.timeline ? static_cast<int64_t>(meta->entry_count) : kNoId);
    }
  }
}

void AddInventory(const Layout& layout, const ReadFiles& read, TraceMetadata* meta) {
  const auto infos = InfoFiles(layout.root);
  for (const fs::path& p : infos) AddInventoryEntry(meta, Relative(layout, p), SourceState::kRead, kNoId);
  if (infos.empty()) AddInventoryEntry(meta, "device_*/info.json", SourceState::kMissing, kNoId);
  for (const fs::path& p : Matching(layout.root, "msprof", ".db")) {
    (void)AddDatabaseInventory(p.string(), Relative(layout, p),
                               p == read.db ? AscendDbModelledTables() : std::vector<std::string_view>{}, meta);
  }
  AddFolderInventory(layout, layout.output, read, meta);
  AddFolderInventory(layout, layout.root / kAnalyzeDir, read, meta);
  const std::string output(kOutputDir);
  if (!read.db.empty()) return;  // the Db export writes no text files: their absence says nothing
  if (read.timeline.empty()) AddInventoryEntry(meta, output + "/msprof_*.json", SourceState::kMissing, kNoId);
  if (read.op_summary.empty()) AddInventoryEntry(meta, output + "/op_summary_*.csv", SourceState::kMissing, kNoId);
  for (std::string_view name : {"communication.json", "communication_matrix.json"}) {
    if (!IsFile(layout.root / kAnalyzeDir / name)) {
      AddInventoryEntry(meta, std::string(kAnalyzeDir) + "/" + std::string(name), SourceState::kMissing, kNoId);
    }
  }
}

// The timeline (msprof_*.json), else the Db export; `read` says which files were read.
Result<Trace> ImportMain(const Layout& layout, const std::string& dir, ReadFiles* read) {
  if (read->timeline.empty() && read->op_summary.empty()) {
    read->db = FindDatabase(layout);
    if (read->db.empty()) {
      return InvalidInput(dir + ": msprof directory with neither " + std::string(kOutputDir) +
                          "/msprof_*.json, op_summary_*.csv nor msprof_*.db (not exported yet? run msprof --export=on "
                          "--output=" +
                          layout.root.string() + ")");
    }
    return ImportAscendDatabase(read->db.string(), dir);
  }
  return ImportTimeline(read->timeline, dir);
}

}  // namespace

bool IsMsprofDirectory(const std::string& dir) {
  const fs::path p = Normal(dir);
  if (!IsDirectory(p)) return false;
  return p.filename() == kOutputDir || p.filename().string().starts_with(kProfPrefix) || IsDirectory(p / kOutputDir);
}

Result<Trace> ImportMsprofDirectory(const std::string& dir) {
  const Layout layout = Resolve(dir);
  ReadFiles read;
  const auto timelines = Matching(layout.output, "msprof", ".json");
  const auto summaries = Matching(layout.output, "op_summary", ".csv");
  const auto step_traces = Matching(layout.output, "step_trace", ".csv");
  if (!timelines.empty()) read.timeline = timelines.front();
  if (!summaries.empty()) read.op_summary = summaries.front();
  if (!step_traces.empty()) read.step_trace = step_traces.front();
  Result<Trace> trace = ImportMain(layout, dir, &read);
  if (!trace.ok()) return trace.status();
  SideTableBuilder out(&trace.value());
  out.mutable_metadata()->path = dir;
  // Several exports (re-runs of msprof --export, or sliced timelines) are not merged: the first is read.
  auto several = [&](const std::vector<fs::path>& files, std::string_view pattern) {
    if (files.size() > 1) {
      out.Warn(layout.output.string() + ": several " + std::string(pattern) + "; read " + files[0].filename().string());
    }
  };
  several(timelines, "msprof_*.json");
  several(summaries, "op_summary_*.csv");
  several(step_traces, "step_trace_*.csv");
  if (!read.step_trace.empty()) ReadStepTrace(read.step_trace, trace.value(), &out);
  if (!read.op_summary.empty()) {
    ReadOpSummary(read.op_summary, &out);
  } else if (read.db.empty()) {
    out.Warn((layout.output / "op_summary_*.csv").string() + ": missing");
  }
  ReadAnalyze(layout, &out);
  ReadDeviceInfo(layout, &out);
  AddInventory(layout, read, out.mutable_metadata());
  return trace;
}

}  // namespace tuneprof

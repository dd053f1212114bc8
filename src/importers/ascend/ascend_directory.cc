#include "importers/ascend/ascend_directory.h"

#include <simdjson.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

#include "base/decimal.h"
#include "importers/ascend/ascend_communication.h"
#include "importers/ascend/ascend_db.h"
#include "importers/ascend/ascend_large_tables.h"
#include "importers/ascend/ascend_memory_tables.h"
#include "importers/ascend/ascend_msprof.h"
#include "importers/ascend/ascend_tables.h"
#include "importers/ascend/ge_graph.h"
#include "importers/chrome_json/chrome_trace_importer.h"
#include "importers/common/rank.h"
#include "io/byte_source.h"
#include "importers/ascend/ascend_layout.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOutputDir = "ASCEND_PROFILER_OUTPUT";
constexpr std::string_view kProfilerInfoPrefix = "profiler_info";
constexpr std::string_view kProfilerMetadata = "profiler_metadata.json";
constexpr std::string_view kTraceView = "trace_view.json";
constexpr std::string_view kKernelDetails = "kernel_details.csv";
constexpr std::string_view kStepTraceTime = "step_trace_time.csv";
constexpr std::string_view kTimelineExportHint =
    "export it with torch_npu.profiler._ExperimentalConfig(export_type=torch_npu.profiler.ExportType.Text)";
// Summary files that still say something about a rank without a timeline or profiler database.
constexpr std::string_view kSummaryFiles[] = {"step_trace_time.csv", "communication.json", "communication_matrix.json",
                                              "analysis.db"};

// Where the rank's files are: `root` holds profiler_info*.json, `output` the exported summaries.
using Layout = RankLayout;

Layout Resolve(const std::string& dir) { return ResolveLayout(dir, kOutputDir); }
bool IsFile(const fs::path& p) { return IsRegularFile(p); }

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsFile(it->path())) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// SQLite, whatever the suffix: torch_npu writes .db, MindStudio Insight's samples also .dat.
bool IsDatabaseName(const fs::path& p) { return p.extension() == ".db" || p.extension() == ".dat"; }

// The Db export's main file: ascend_pytorch_profiler[_{rank}].db (msprof: msprof_*.db); empty when none.
fs::path FindProfilerDatabase(const fs::path& output) {
  for (std::string_view prefix : {"ascend_pytorch_profiler", "msprof"}) {
    for (const fs::path& p : FilesIn(output)) {
      if (IsDatabaseName(p) && p.filename().string().starts_with(prefix)) return p;
    }
  }
  return {};
}

// analysis.dat sorts before analysis.db, as the listing would order them. Two stats rather than a listing
// of the directory: this is asked several times per rank, and runs have thousands of ranks.
fs::path FindAnalysisDatabase(const fs::path& output) {
  for (std::string_view name : {"analysis.dat", "analysis.db"}) {
    if (IsFile(output / name)) return output / name;
  }
  return {};
}

// Settings files hold a few KB; one far past this is damaged, not read.
constexpr size_t kSettingsFileLimit = size_t{64} << 20;

// Parses a small JSON file, read (and recorded as read) through io as every input is; a problem is a
// warning naming the file, and an empty result.
bool LoadJson(const fs::path& path, simdjson::dom::parser* parser, simdjson::dom::element* doc, SideTableBuilder* out) {
  Result<std::string> text = ReadWholeFile(path.string(), kSettingsFileLimit);
  if (!text.ok()) {
    out->Warn(text.status().message() + "; ignored");
    return false;
  }
  if (auto error = parser->parse(simdjson::padded_string(*text)).get(*doc); error) {
    out->Warn(path.string() + ": unreadable (" + simdjson::error_message(error) + "); ignored");
    return false;
  }
  return true;
}

int64_t IntField(simdjson::dom::element doc, std::string_view pointer) {
  int64_t value;
  if (doc.at_pointer(pointer).get_int64().get(value)) return kNoId;
  return value;
}

struct RankInfo {
  int64_t rank = kNoId;
  int64_t world_size = kNoId;
};

// profiler_info_{rank}.json: the rank is in its name (single-card runs write profiler_info.json) and
// in rank_id (-1 when not distributed).
void ReadProfilerInfo(const fs::path& root, SideTableBuilder* out, RankInfo* info) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(kProfilerInfoPrefix) && name.ends_with(".json") && IsFile(it->path()))
      files.push_back(it->path());
  }
  if (files.empty()) return;
  std::sort(files.begin(), files.end());
  if (files.size() > 1)
    out->Warn(root.string() + ": several profiler_info*.json; using " + files[0].filename().string());
  const std::string stem = files[0].stem().string();
  int64_t from_name;
  if (stem.size() > kProfilerInfoPrefix.size() + 1 &&
      ParseInt64(std::string_view(stem).substr(kProfilerInfoPrefix.size() + 1), &from_name) && from_name >= 0) {
    info->rank = from_name;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (!LoadJson(files[0], &parser, &doc, out)) return;
  AddFlattenedMetadata(doc, "profiler_info", out);
  const int64_t rank_id = IntField(doc, "/rank_id");
  if (info->rank == kNoId && rank_id != kNoId && rank_id >= 0) info->rank = rank_id;
}

void ReadProfilerMetadata(const fs::path& root, SideTableBuilder* out, RankInfo* info) {
  const fs::path path = root / kProfilerMetadata;
  if (!IsFile(path)) return;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (!LoadJson(path, &parser, &doc, out)) return;
  AddFlattenedMetadata(doc, "profiler_metadata", out);
  const int64_t rank = IntField(doc, "/distributed_args/rank");
  if (info->rank == kNoId && rank != kNoId && rank >= 0) info->rank = rank;
  info->world_size = IntField(doc, "/distributed_args/world_size");
}

void SettleAscendRank(const fs::path& root, SideTableBuilder* out) {
  RankInfo info;
  ReadProfilerInfo(root, out, &info);
  ReadProfilerMetadata(root, out, &info);
  TraceMetadata* meta = out->mutable_metadata();
  if (info.world_size > 0 && meta->distributed.world_size == kNoId) meta->distributed.world_size = info.world_size;
  if (info.rank == kNoId) return;  // the path (or the default) that the timeline import settled stands
  meta->rank = info.rank;
  meta->rank_source = RankSource::kTrace;
  DropWarnings(meta, WarningId::kNoRank);
}

// The timeline, or an empty one (with a warning) when trace_view.json is missing or broken: the
// summaries still load. Where the Db export wrote the rank (its analysis.db is there), the timeline
// was in the profiler database that is missing, and that is what the warning names.
Trace ImportTimeline(const fs::path& trace_view, const Layout& layout, const std::string& dir) {
  const bool db_export = !FindAnalysisDatabase(layout.output).empty();
  std::string problem = db_export ? (layout.output / "ascend_pytorch_profiler_*.db").string() +
                                        std::string(kMissingTimelineWarning) + dir +
                                        " (the Db export keeps it there: copy it with the rank)"
                                  : trace_view.string() + std::string(kMissingTimelineWarning) + dir + " (" +
                                        std::string(kTimelineExportHint) + ")";
  return ImportTimelineOrEmpty(IsFile(trace_view) ? trace_view : fs::path(), dir, problem);
}

// The rows CsvReader::Next() gives from here to the end added to those it gave so far; an error when
// the rest does not read.
Result<int64_t> RowsToEnd(CsvReader* csv) {
  for (;;) {
    TP_ASSIGN_OR_RETURN(bool more, csv->Next());
    if (!more) break;
  }
  return static_cast<int64_t>(csv->row() - csv->dropped_rows());
}

// Reads one optional summary CSV with `read`; a missing or malformed file is a warning. Where `counts`
// is given and the file read to its end, its rows are recorded there.
template <typename ReadFn>
void ReadSummary(const fs::path& path, ReadFn read, SideTableBuilder* out, CsvRowCounts* counts = nullptr) {
  if (!IsFile(path)) {
    out->Warn(path.string() + ": missing");
    return;
  }
  auto csv = CsvReader::Open(path.string());
  Status status = csv.ok() ? read(&csv.value(), out) : csv.status();
  if (!status.ok()) {
    out->Warn(status.message());
    return;
  }
  if (counts == nullptr) return;
  if (Result<int64_t> rows = RowsToEnd(&csv.value()); rows.ok()) counts->emplace_back(path, *rows);
}

// How LargeTables reads each table: as every summary CSV is read.
void ReadLargeTable(LargeTables::Table table, const fs::path& path, SideTableBuilder* out, CsvRowCounts* counts) {
  switch (table) {
    case LargeTables::kKernelDetails:
      return ReadSummary(path, ReadKernelDetails, out, counts);
    case LargeTables::kMemoryRecord:
      return ReadSummary(path, ReadMemoryRecord, out, counts);
    case LargeTables::kOperatorMemory:
    case LargeTables::kTables:
      return ReadSummary(path, ReadOperatorMemory, out, counts);
  }
}

// The inventory's entry of one CSV: its rows as counted while it was read, else counted now.
void AddCsvInventory(const fs::path& path, const std::string& file, SourceState state, const CsvRowCounts& counts,
                     TraceMetadata* meta) {
  for (const auto& [counted, rows] : counts) {
    if (counted == path) return AddInventoryEntry(meta, file, state, rows);
  }
  CountCsvRows(path, file, state, meta);
}

// The text export's files, so that the inventory also says which were absent.
constexpr std::string_view kTextFiles[] = {"trace_view.json",     "kernel_details.csv",        "step_trace_time.csv",
                                           "op_statistic.csv",    "operator_details.csv",      "api_statistic.csv",
                                           "memory_record.csv",   "operator_memory.csv",       "npu_module_mem.csv",
                                           "communication.json",  "communication_matrix.json", "l2_cache.csv",
                                           "data_preprocess.csv", "static_op_mem.csv"};
// Those of them the importer models; the rest are counted.
constexpr std::string_view kModelledTextFiles[] = {
    "trace_view.json",     "kernel_details.csv", "step_trace_time.csv",      "memory_record.csv",
    "operator_memory.csv", "communication.json", "communication_matrix.json"};

bool Contains(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string OutputName(const fs::path& p) { return std::string(kOutputDir) + "/" + p.filename().string(); }

// The directory that holds the rank directory ("" at the filesystem's root).
fs::path ParentOf(const fs::path& root) {
  std::error_code ec;
  fs::path dir = fs::absolute(root, ec).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // "run/rank0/" names rank0
  return dir.has_relative_path() ? dir.parent_path() : fs::path();
}

// GE's graph dumps (DUMP_GE_GRAPH) in the rank directory, else beside it (GE writes them to the process's
// working directory, which is often the one the profiler's rank directories are made in): read for the
// graph-fusion check (importers/ascend/ge_graph.h), and listed as one inventory entry that says what was
// found and where.
void ReadGeGraphs(const fs::path& root, SideTableBuilder* out) {
  uint64_t dumps = ReadGeGraphDumps(root.string(), out);
  const fs::path parent = dumps == 0 ? ParentOf(root) : fs::path();
  if (!parent.empty()) dumps = ReadGeGraphDumps(parent.string(), out);
  if (dumps == 0) return;
  const GeGraphTable& table = out->trace().ge_graphs();
  std::vector<std::pair<uint32_t, StringId>> graphs;
  for (const GeGraphOp& op : table.ops) graphs.emplace_back(op.file, op.graph);
  std::sort(graphs.begin(), graphs.end());
  graphs.erase(std::unique(graphs.begin(), graphs.end()), graphs.end());
  const uint64_t unreadable = dumps - table.files.size();
  std::string value = fmt::format("{} files read: {} ops in {} graphs; the graph-fusion check reads them",
                                  table.files.size(), table.ops.size(), graphs.size());
  if (unreadable > 0) value += fmt::format("; {} unreadable (see the warnings)", unreadable);
  if (!parent.empty()) value += "; found beside the rank directory, in " + parent.string();
  out->AddMetadataEntry("inventory.ge_graph_dumps", std::move(value));
}

// The rank directory's own files (profiler_info_{rank}.json, profiler_metadata.json), and GE graph dumps
// beside them as one entry.
void AddRootInventory(const fs::path& root, SideTableBuilder* out) {
  TraceMetadata* meta = out->mutable_metadata();
  bool metadata = false;
  for (const fs::path& p : FilesIn(root)) {
    const std::string name = p.filename().string();
    if (name == kProfilerMetadata) metadata = true;
    if (name == kProfilerMetadata || (name.starts_with(kProfilerInfoPrefix) && name.ends_with(".json"))) {
      AddInventoryEntry(meta, name, SourceState::kRead, kNoId);
    }
  }
  if (!metadata) AddInventoryEntry(meta, std::string(kProfilerMetadata), SourceState::kMissing, kNoId);
  ReadGeGraphs(root, out);
}

// Every file of ASCEND_PROFILER_OUTPUT/ with its rows, and the expected files that are absent.
// `main_db` is the profiler database the import read (empty for the text form: databases beside
// the text files are counted only).
// `timeline_set_aside`: trace_view.json was cut off and left unread (CutTimelineProblem).
void AddOutputInventory(const Layout& layout, const fs::path& main_db, TraceMetadata* meta,
                        bool timeline_set_aside = false, const CsvRowCounts& counts = {}) {
  static const std::vector<std::string_view> kNone;
  std::vector<std::string> present;
  for (const fs::path& p : FilesIn(layout.output)) {
    const std::string name = p.filename().string();
    present.push_back(name);
    const std::string file = OutputName(p);
    if (IsDatabaseName(p)) {
      const bool analysis = p.stem() == "analysis";
      const bool read = !main_db.empty() && (p == main_db || analysis);
      const std::vector<std::string_view>& modelled = !read      ? kNone
                                                      : analysis ? AnalysisDbModelledTables()
                                                                 : AscendDbModelledTables();
      (void)AddDatabaseInventory(p.string(), file, modelled, meta);  // an unreadable file is an entry
      continue;
    }
    const SourceState state =
        Contains(kModelledTextFiles, name) && main_db.empty() ? SourceState::kRead : SourceState::kCounted;
    if (name == kTraceView && timeline_set_aside) {
      AddInventoryEntry(meta, file, SourceState::kUnreadable, kNoId, "cut off; set aside");
    } else if (p.extension() == ".csv") {
      AddCsvInventory(p, file, state, counts, meta);
    } else {
      const bool events = name == kTraceView && main_db.empty();  // traceEvents entries, every phase
      AddInventoryEntry(meta, file, state, events ? static_cast<int64_t>(meta->entry_count) : kNoId);
    }
  }
  auto missing = [&](std::string_view name) {
    if (std::find(present.begin(), present.end(), name) == present.end()) {
      AddInventoryEntry(meta, std::string(kOutputDir) + "/" + std::string(name), SourceState::kMissing, kNoId);
    }
  };
  if (!main_db.empty()) {
    if (FindAnalysisDatabase(layout.output).empty()) missing("analysis.db");
    return;  // the Db export writes no text files: their absence says nothing
  }
  for (std::string_view name : kTextFiles) missing(name);
}

bool HasSummaryFiles(const Layout& layout) {
  return std::any_of(std::begin(kSummaryFiles), std::end(kSummaryFiles),
                     [&](std::string_view name) { return IsFile(layout.output / name); });
}

// The step split: step_trace_time.csv, else analysis.db's StepTraceTime (and CommAnalyzerTime), which
// the Db export writes beside the text files when both were asked for. With communication.json present
// the database is left alone, so that no operator is read twice.
void ReadStepSplit(const Layout& layout, SideTableBuilder* out) {
  const fs::path csv = layout.output / kStepTraceTime;
  const fs::path analysis = FindAnalysisDatabase(layout.output);
  if (!IsFile(csv) && !analysis.empty() && !IsFile(layout.output / "communication.json")) {
    if (Status s = ReadAnalysisDatabase(analysis.string(), out); !s.ok()) out->Warn(s.message());
    return;
  }
  ReadSummary(csv, ReadStepTraceTime, out);
}

// Events are in file order, which torch_npu writes close to time order but not exactly (device tasks
// are flushed in batches): the earliest start among the last ones read bounds where work can be missing.
constexpr size_t kCutWindowEvents = 256;

// ProfilerStep markers that end before the cut point; none when the cut left no device work at all.
size_t CompleteSteps(const Trace& timeline) {
  const EventTable& e = timeline.events();
  bool device_work = false;
  for (size_t i = 0; i < e.size() && !device_work; ++i) device_work = IsDeviceKind(e.kind[i]) && e.dur_ns[i] >= 0;
  if (!device_work) return 0;
  int64_t cut = std::numeric_limits<int64_t>::max();
  for (size_t i = e.size() > kCutWindowEvents ? e.size() - kCutWindowEvents : 0; i < e.size(); ++i) {
    cut = std::min(cut, e.ts_ns[i]);
  }
  return static_cast<size_t>(std::count_if(timeline.steps().begin(), timeline.steps().end(),
                                           [&](const Step& step) { return step.end_ns <= cut; }));
}

// The steps step_trace_time.csv (or analysis.db) reports, cluster-stage rows (no step number, beside
// numbered rows) left out. Read into a scratch trace, so that the rank's own tables are read once, in
// the usual order, whichever timeline they join.
size_t ReportedSteps(const Layout& layout, const std::string& dir) {
  TraceBuilder builder(dir);
  Trace scratch = builder.Finish();
  SideTableBuilder out(&scratch);
  ReadStepSplit(layout, &out);
  const std::vector<ReportedStepTime>& rows = scratch.reported_step_times();
  if (rows.size() <= 1) return rows.size();
  return static_cast<size_t>(
      std::count_if(rows.begin(), rows.end(), [](const ReportedStepTime& row) { return row.step != kNoId; }));
}

// torch_npu writes step_trace_time.csv from the whole run. A timeline cut before the end of those steps
// would give kernels, copies and collectives of a part of the run beside step figures of all of it, so
// the rank is read as one without a timeline, from its summaries alone; this says so. Empty when the
// timeline is whole, or holds every step the summary reports.
std::string CutTimelineProblem(const Trace& timeline, const Layout& layout, const std::string& dir) {
  if (!timeline.metadata().truncated) return {};
  const size_t reported = ReportedSteps(layout, dir);
  if (reported == 0) return {};
  const size_t complete = CompleteSteps(timeline);
  if (complete >= reported) return {};
  return dir + ": the timeline is cut off (" + std::to_string(complete) + " complete step" +
         (complete == 1 ? "" : "s") + " of the " + std::to_string(reported) +
         " that step_trace_time.csv holds); read as a rank without a timeline; copy the rank's whole "
         "trace_view.json or its ascend_pytorch_profiler_*.db";
}

// A rank without a timeline, as ImportTimeline leaves one whose trace_view.json is missing, but still
// marked cut off, so that what is said of its timeline says it was cut rather than absent.
Trace SetAsideTimeline(const std::string& dir, const std::string& problem) {
  TraceBuilder builder(dir);
  TraceMetadata* meta = builder.mutable_metadata();
  meta->format = TraceFormat::kTorchNpuTraceView;
  meta->truncated = true;
  builder.Warn(problem);
  SettleRank(meta);
  return builder.Finish();
}

// The Db export: the timeline and side tables from the profiler database, the split from analysis.db.
Result<Trace> ImportDatabaseDirectory(const Layout& layout, const fs::path& db, const std::string& dir) {
  auto trace = ImportAscendDatabase(db.string(), dir);
  if (!trace.ok()) return trace.status();
  SideTableBuilder out(&trace.value());
  const fs::path analysis = FindAnalysisDatabase(layout.output);
  if (!analysis.empty()) {
    if (Status s = ReadAnalysisDatabase(analysis.string(), &out); !s.ok()) out.Warn(s.message());
  }
  SettleAscendRank(layout.root, &out);
  AddRootInventory(layout.root, &out);
  AddOutputInventory(layout, db, out.mutable_metadata());
  return trace;
}

// The device ids of the step split's rows, each once, in id order.
std::vector<int64_t> ReportedDevices(const Trace& trace) {
  std::vector<int64_t> ids;
  for (const ReportedStepTime& row : trace.reported_step_times()) {
    if (row.device_id != kNoId) ids.push_back(row.device_id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// Whether the trace holds nothing but its step split (and metadata): only then can its rows be shared out
// among devices without leaving another table with the wrong one.
bool HoldsOnlyStepSplit(const Trace& trace) {
  const CommunicationTables& comm = trace.communication();
  return trace.events().size() == 0 && !trace.kernel_details().present && !comm.ops_present && !comm.matrix_present &&
         trace.npu_memory_records().empty() && trace.npu_operator_memory().empty();
}

// Device `device`'s rows of `whole`, as a rank of that number; the warnings and inventory stay with the first.
Trace DeviceRank(const Trace& whole, int64_t device, bool first) {
  TraceBuilder builder(whole.metadata().path);
  TraceMetadata* meta = builder.mutable_metadata();
  *meta = whole.metadata();
  if (!first) {
    meta->warnings.clear();
    meta->warning_ids.clear();
  }
  DropWarnings(meta, WarningId::kNoRank);  // said once for all the devices, by the caller
  meta->rank = device;
  meta->rank_source = RankSource::kTrace;
  Trace trace = builder.Finish();
  SideTableBuilder out(&trace);
  for (const ReportedStepTime& row : whole.reported_step_times()) {
    if (row.device_id == device) out.AddReportedStepTime(row);
  }
  return trace;
}

}  // namespace

Result<std::vector<Trace>> ImportAscendDirectoryRanks(const std::string& dir) {
  TP_ASSIGN_OR_RETURN(Trace whole, ImportAscendDirectory(dir));
  std::vector<Trace> traces;
  const std::vector<int64_t> devices = ReportedDevices(whole);
  if (devices.size() < 2 || !HoldsOnlyStepSplit(whole)) {
    traces.push_back(std::move(whole));
    return traces;
  }
  for (size_t d = 0; d < devices.size(); ++d) traces.push_back(DeviceRank(whole, devices[d], d == 0));
  const std::string said = fmt::format(
      "{}: the step split holds {} devices' rows and no timeline: read as {} ranks numbered by their deviceId", dir,
      devices.size(), devices.size());
  SideTableBuilder first(&traces.front());
  // Device ids are no rank numbers of a run: beside ranks that have them, the directory is left out as
  // one that names no rank would be.
  if (whole.metadata().rank_source == RankSource::kDefault) {
    AddWarning(first.mutable_metadata(), WarningId::kNoRank, said + " (the directory names no rank)");
  } else {
    first.Warn(said);
  }
  return traces;
}

Result<Trace> ImportAscendDirectory(const std::string& dir) {
  const Layout layout = Resolve(dir);
  // msprof's PROF_* has its own layout; one with ASCEND_PROFILER_OUTPUT/ is torch_npu's.
  std::error_code msprof_ec;
  if (!fs::is_directory(layout.output, msprof_ec) && IsMsprofDirectory(dir)) return ImportMsprofDirectory(dir);
  std::error_code ec;
  if (!fs::is_directory(layout.output, ec)) {
    return InvalidInput(dir +
                        ": Ascend profiler directory without ASCEND_PROFILER_OUTPUT/ (not analysed yet? "
                        "run torch_npu.profiler.profiler.analyse on it)");
  }
  const fs::path trace_view = layout.output / kTraceView;
  const fs::path kernel_details = layout.output / kKernelDetails;
  std::string db_problem;
  if (!IsFile(trace_view) && !IsFile(kernel_details)) {
    const fs::path db = FindProfilerDatabase(layout.output);
    if (!db.empty()) {
      auto trace = ImportDatabaseDirectory(layout, db, dir);
      // A damaged profiler database beside readable summaries costs the timeline, not the rank.
      if (trace.ok() || !HasSummaryFiles(layout)) return trace;
      db_problem = trace.status().message() + "; using the summary files beside it";
    } else if (!HasSummaryFiles(layout)) {
      return InvalidInput(dir +
                          ": ASCEND_PROFILER_OUTPUT/ holds neither trace_view.json, kernel_details.csv, "
                          "ascend_pytorch_profiler*.db, step_trace_time.csv, communication.json nor analysis.db");
    }
  }
  const fs::path memory_record = layout.output / "memory_record.csv";
  const fs::path operator_memory = layout.output / "operator_memory.csv";
  LargeTables tables(layout.output, {kernel_details, memory_record, operator_memory}, ReadLargeTable);
  Trace trace = ImportTimeline(trace_view, layout, dir);
  const std::string cut_problem = CutTimelineProblem(trace, layout, dir);
  if (!cut_problem.empty()) trace = SetAsideTimeline(dir, cut_problem);
  SideTableBuilder out(&trace);
  out.mutable_metadata()->path = dir;
  if (!db_problem.empty()) out.Warn(db_problem);
  CsvRowCounts counts;
  if (IsFile(kernel_details)) {
    tables.Read(LargeTables::kKernelDetails, &out, &counts);
  } else {
    // The Db export keeps the kernels in the profiler database, whose absence the timeline's warning names.
    if (FindAnalysisDatabase(layout.output).empty()) {
      out.Warn((layout.output / kKernelDetails).string() + ": missing; no per-kernel figures");
    }
  }
  ReadStepSplit(layout, &out);
  // memory_record.csv exists only with profile_memory=True: its absence is no warning.
  if (IsFile(memory_record)) tables.Read(LargeTables::kMemoryRecord, &out, &counts);
  if (IsFile(operator_memory)) tables.Read(LargeTables::kOperatorMemory, &out, &counts);
  // communication.json / communication_matrix.json (optional): a problem is a warning, as for the CSVs.
  for (const Status& status :
       {ReadCommunicationFile((layout.output / "communication.json").string(), &out),
        ReadCommunicationMatrixFile((layout.output / "communication_matrix.json").string(), &out)}) {
    if (!status.ok()) out.Warn(status.message());
  }
  // Files there, but none of them readable: an error, as a directory without them, not a rank of nothing.
  if (HoldsOnlyStepSplit(trace) && trace.reported_step_times().empty()) {
    const std::vector<std::string>& said = trace.metadata().warnings;
    return InvalidInput(dir + ": nothing readable in the rank directory" +
                        (said.empty() ? std::string() : ": " + said.back()));
  }
  SettleAscendRank(layout.root, &out);
  AddRootInventory(layout.root, &out);
  tables.AddOtherCounts(&counts);
  AddOutputInventory(layout, fs::path(), out.mutable_metadata(), !cut_problem.empty(), counts);
  return trace;
}

}  // namespace tuneprof

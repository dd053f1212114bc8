#include "importers/ascend/ascend_db.h"

#include <fmt/format.h>

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/decimal.h"
#include "importers/ascend/ascend_db_reading.h"
#include "importers/ascend/ascend_layout.h"
#include "importers/ascend/step_trace_columns.h"
#include "importers/common/rank.h"
#include "io/sqlite_file.h"

namespace tuneprof {
namespace {

using ascend_db::BuildTimeline;
using ascend_db::Col;
using ascend_db::ColumnIndex;
using ascend_db::ForEachRow;
using ascend_db::IntOr;
using ascend_db::ReadCommAnalyzer;
using ascend_db::ReadCommMatrix;
using ascend_db::SpanNs;
using ascend_db::StringIds;

// COMPUTE_TASK_INFO / COMMUNICATION_OP write this for "no value" in 32-bit id columns.
constexpr int64_t kNoValue32 = 4294967295;

// The tables this importer reads, for the inventory (the rest are counted only).
const std::vector<std::string_view> kModelledTables = {
    "STRING_IDS",    "PYTORCH_API",       "PYTORCH_CALLCHAINS", "CONNECTION_IDS",   "CANN_API",
    "TASK",          "COMPUTE_TASK_INFO", "TASK_PMU_INFO",      "COMMUNICATION_OP", "COMMUNICATION_TASK_INFO",
    "MEMORY_RECORD", "OP_MEMORY",         "NPU_INFO",           "RANK_DEVICE_MAP",  "META_DATA",
    "STEP_TIME",     "AICORE_FREQ"};
const std::vector<std::string_view> kModelledAnalysisTables = {"StepTraceTime", "CommAnalyzerTime",
                                                               "CommAnalyzerBandwidth", "CommAnalyzerMatrix"};

// The ids COMPUTE_TASK_INFO writes as 2^32-1 mean "none".
int64_t Id32(const SqliteStatement& s, int column) {
  const int64_t v = IntOr(s, column);
  return v == kNoValue32 ? kNoId : v;
}

// kernel_details cells as the CSV reader leaves them: "N/A" (Level0 types, communication rows) is an
// absent cell, i.e. the empty string.
std::string_view Cell(std::string_view text) { return text == "N/A" ? std::string_view() : text; }

// Shapes are stored as the CSV writes them before quoting ("\"32,3,224,224\""); the text importer
// hands out the bare text, so the quotes go here too.
std::string_view Unquoted(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') return text.substr(1, text.size() - 2);
  return text;
}

// ---- metadata -------------------------------------------------------------------------------

Status ReadDevice(const SqliteFile& db, TraceBuilder* b) {
  if (!db.HasTable("NPU_INFO")) return Status();
  Device device;
  device.type = DeviceType::kNpu;
  device.id = kNoId;  // as for trace_view: the analyses take all NPU processes of a rank as one device
  Status s = ForEachRow(db, "SELECT name FROM NPU_INFO LIMIT 1",
                        [&](const SqliteStatement& r) { device.name = b->Intern(r.Text(0)); });
  if (device.name.value != 0) b->AddDevice(device);
  return s;
}

Status ReadRank(const SqliteFile& db, TraceMetadata* meta) {
  if (!db.HasTable("RANK_DEVICE_MAP")) return Status();
  return ForEachRow(db, "SELECT rankId FROM RANK_DEVICE_MAP LIMIT 1", [&](const SqliteStatement& r) {
    const std::optional<int64_t> rank = r.OptionalInt(0);
    if (!rank || *rank < 0) return;
    meta->rank = *rank;
    meta->rank_source = RankSource::kTrace;
  });
}

// The Db export stores profiler_metadata.json's distributed_args and parallel_group_info as META_DATA
// rows of JSON text: kept under profiler_metadata.json's keys, so that the pp / dp groups are found
// where the rank directory lost that file, and read alike where it has it.
bool IsMetadataObject(std::string_view name) { return name == "parallel_group_info" || name == "distributed_args"; }

// META_DATA's ENV_VARIABLES is profiler_metadata.json's object of the same name: kept under the same
// keys, so the advisor's environment checks read both forms alike.
Status ReadMetaData(const SqliteFile& db, SideTableBuilder* out) {
  if (!db.HasTable("META_DATA")) return Status();
  return ForEachRow(db, "SELECT name, value FROM META_DATA", [&](const SqliteStatement& r) {
    const std::string name(r.Text(0));
    const std::string value(r.Text(1));
    if (name != "ENV_VARIABLES" && !IsMetadataObject(name)) {
      out->AddMetadataEntry("db.META_DATA." + name, value);
      return;
    }
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    simdjson::dom::object object;
    if (parser.parse(value).get(doc) != simdjson::SUCCESS || doc.get_object().get(object) != simdjson::SUCCESS) {
      out->Warn(db.path() + ": META_DATA " + name + " is not a JSON object; ignored");
      return;
    }
    if (IsMetadataObject(name)) {
      AddFlattenedMetadata(doc, "profiler_metadata." + name, out);
      return;
    }
    for (auto field : object) {
      std::string_view text;
      const std::string key = "profiler_metadata.ENV_VARIABLES." + std::string(field.key);
      if (field.value.get_string().get(text) == simdjson::SUCCESS) {
        out->AddMetadataEntry(key, std::string(text));
      } else {
        out->AddMetadataEntry(key, simdjson::minify(field.value));
      }
    }
  });
}

// ---- side tables ----------------------------------------------------------------------------

struct StepWindow {
  int64_t id;
  int64_t start_ns;
  int64_t end_ns;
};

// STEP_TIME; a problem is a warning (the rows then have no Step Id).
std::vector<StepWindow> ReadStepWindows(const SqliteFile& db, SideTableBuilder* out) {
  std::vector<StepWindow> windows;
  if (!db.HasTable("STEP_TIME")) return windows;
  Status s = ForEachRow(db, "SELECT id, startNs, endNs FROM STEP_TIME ORDER BY startNs", [&](const SqliteStatement& r) {
    if (!r.SkipIllTyped({0, 1, 2})) windows.push_back(StepWindow{r.Int(0), r.Int(1), r.Int(2)});
  });
  if (!s.ok()) out->Warn(s.message());
  return windows;
}

// kernel_details' Step Id: the step whose host range holds the task's launch (its CANN call), else its start.
int64_t StepOf(const std::vector<StepWindow>& windows, int64_t t) {
  if (t == kNoId) return kNoId;
  for (const StepWindow& w : windows) {
    if (w.start_ns <= t && t <= w.end_ns) return w.id;
  }
  return kNoId;
}

struct PendingRow {
  NpuOpRow row;
  int64_t global_task_id = kNoId;
  int64_t launch_ns = kNoId;
};

// TASK_PMU_INFO names the kernel_details PMU columns without units and stores times in ns;
// kernel_details writes µs under "<name>(us)", and names the two totals aicore_time / aiv_time.
// Other counters (cycles, ratios) are the same numbers under the same names.
struct PmuColumn {
  std::string name;
  double scale = 1;
};

PmuColumn PmuColumnFor(std::string_view db_name) {
  if (db_name == "aic_total_time") return PmuColumn{"aicore_time(us)", 1e-3};
  if (db_name == "aiv_total_time") return PmuColumn{"aiv_time(us)", 1e-3};
  if (db_name.ends_with("_time")) return PmuColumn{std::string(db_name) + "(us)", 1e-3};
  return PmuColumn{std::string(db_name), 1};
}

Status ReadComputeRows(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out,
                       std::vector<PendingRow>* rows) {
  if (!db.HasTable("COMPUTE_TASK_INFO") || !db.HasTable("TASK")) return Status();
  const bool cann = db.HasTable("CANN_API");
  const std::string sql =
      "SELECT t.startNs, t.endNs, t.deviceId, t.streamId, t.taskId, t.modelId, t.contextId, c.globalTaskId, "
      "c.name, c.opType, c.taskType, c.blockDim, " +
      Col(db, "COMPUTE_TASK_INFO", "c", "mixBlockDim") +
      ", c.inputShapes, c.inputDataTypes, c.inputFormats, c.outputShapes, c.outputDataTypes, c.outputFormats, " +
      Col(db, "COMPUTE_TASK_INFO", "c", "waitNs") + ", " + (cann ? "a.startNs" : "NULL") +
      " FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId" +
      (cann ? " LEFT JOIN CANN_API a ON a.connectionId = t.connectionId" : "");
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    if (r.SkipIllTyped({0, 1, 7})) return;
    PendingRow p;
    NpuOpRow& row = p.row;
    row.start_ns = r.Int(0);
    row.dur_ns = SpanNs(row.start_ns, r.Int(1));
    row.device_id = IntOr(r, 2);
    row.stream_id = IntOr(r, 3);
    row.task_id = IntOr(r, 4);
    row.model_id = IntOr(r, 5);
    const int64_t context = Id32(r, 6);
    if (context != kNoId) row.context_id = out->Intern(std::to_string(context));
    p.global_task_id = r.Int(7);
    row.name = out->Intern(strings.Get(r, 8));
    row.type = out->Intern(Cell(strings.Get(r, 9)));
    row.accelerator_core = out->Intern(Cell(strings.Get(r, 10)));
    row.block_dim = IntOr(r, 11);
    row.mix_block_dim = IntOr(r, 12);
    row.input_shapes = out->Intern(Cell(Unquoted(strings.Get(r, 13))));
    row.input_data_types = out->Intern(Cell(strings.Get(r, 14)));
    row.input_formats = out->Intern(Cell(strings.Get(r, 15)));
    row.output_shapes = out->Intern(Cell(Unquoted(strings.Get(r, 16))));
    row.output_data_types = out->Intern(Cell(strings.Get(r, 17)));
    row.output_formats = out->Intern(Cell(strings.Get(r, 18)));
    row.wait_ns = IntOr(r, 19);
    p.launch_ns = IntOr(r, 20);
    rows->push_back(std::move(p));
  });
}

// COMMUNICATION_OP rows are kernel_details' HCCL rows (Accelerator Core HCCL, Type the op type).
Status ReadCommunicationRows(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out,
                             std::vector<PendingRow>* rows) {
  if (!db.HasTable("COMMUNICATION_OP")) return Status();
  const bool cann = db.HasTable("CANN_API");
  const std::string sql = "SELECT o.opName, o.startNs, o.endNs, o.opType, " +
                          Col(db, "COMMUNICATION_OP", "o", "waitNs") + ", " + (cann ? "a.startNs" : "NULL") +
                          " FROM COMMUNICATION_OP o" +
                          (cann ? " LEFT JOIN CANN_API a ON a.connectionId = o.connectionId" : "");
  const StringId core = out->Intern("HCCL");
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    if (r.SkipIllTyped({1, 2})) return;
    PendingRow p;
    p.row.name = out->Intern(strings.Get(r, 0));
    p.row.start_ns = r.Int(1);
    p.row.dur_ns = SpanNs(p.row.start_ns, r.Int(2));
    p.row.type = out->Intern(Cell(strings.Get(r, 3)));
    p.row.accelerator_core = core;
    p.row.wait_ns = IntOr(r, 4);
    p.launch_ns = IntOr(r, 5);
    rows->push_back(std::move(p));
  });
}

Status ReadPmu(const SqliteFile& db, const StringIds& strings, const std::unordered_map<int64_t, uint32_t>& row_of,
               SideTableBuilder* out) {
  if (!db.HasTable("TASK_PMU_INFO")) return Status();
  std::unordered_map<std::string, std::pair<uint32_t, double>> columns;  // db name -> (column, scale)
  return ForEachRow(db, "SELECT globalTaskId, name, value FROM TASK_PMU_INFO", [&](const SqliteStatement& r) {
    if (r.SkipIllTyped({0})) return;
    auto row = row_of.find(r.Int(0));
    if (row == row_of.end()) return;
    const std::optional<double> value = r.OptionalDouble(2);
    if (!value) return;
    const std::string db_name(strings.Get(r, 1));
    auto it = columns.find(db_name);
    if (it == columns.end()) {
      const PmuColumn column = PmuColumnFor(db_name);
      it = columns.emplace(db_name, std::make_pair(out->KernelMetricColumn(column.name), column.scale)).first;
    }
    out->SetKernelMetric(it->second.first, row->second, *value * it->second.second);
  });
}

Status ReadKernelDetailRows(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out) {
  if (!db.HasTable("COMPUTE_TASK_INFO") && !db.HasTable("COMMUNICATION_OP")) return Status();
  std::vector<PendingRow> rows;
  Status s = ReadComputeRows(db, strings, out, &rows);
  if (s.ok()) s = ReadCommunicationRows(db, strings, out, &rows);
  if (!s.ok()) return s;
  // kernel_details.csv lists tasks by start time.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const PendingRow& a, const PendingRow& b) { return a.row.start_ns < b.row.start_ns; });
  const std::vector<StepWindow> windows = ReadStepWindows(db, out);
  out->StartKernelDetails();
  std::unordered_map<int64_t, uint32_t> row_of;
  for (PendingRow& p : rows) {
    p.row.step = StepOf(windows, p.launch_ns != kNoId ? p.launch_ns : p.row.start_ns);
    const uint32_t index = out->AddKernelDetail(p.row);
    if (p.global_task_id != kNoId) row_of.emplace(p.global_task_id, index);
  }
  return ReadPmu(db, strings, row_of, out);
}

// A deviceId as the text exports write the device ("NPU:0"); the empty string for NULL.
StringId NpuDeviceAt(const SqliteStatement& r, int column, SideTableBuilder* out) {
  const std::optional<int64_t> device = r.OptionalInt(column);
  return device ? out->Intern("NPU:" + std::to_string(*device)) : StringId{};
}

// MEMORY_RECORD: memory_record.csv in bytes and ns.
Status ReadMemoryRecords(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out) {
  if (!db.HasTable("MEMORY_RECORD")) return Status();
  const std::string sql = "SELECT m.component, m.timestamp, m.totalAllocated, m.totalReserved, m.totalActive, " +
                          Col(db, "MEMORY_RECORD", "m", "deviceId") + " FROM MEMORY_RECORD m ORDER BY m.timestamp";
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    NpuMemoryRecord record;
    record.component = out->Intern(strings.Get(r, 0));
    record.ts_ns = IntOr(r, 1);
    record.total_allocated_bytes = IntOr(r, 2);
    record.total_reserved_bytes = IntOr(r, 3);
    record.total_active_bytes = IntOr(r, 4);
    record.device = NpuDeviceAt(r, 5, out);
    out->AddNpuMemoryRecord(record);
  });
}

// OP_MEMORY: operator_memory.csv in bytes and ns (NULL release: held when the window closed).
Status ReadDbOperatorMemory(const SqliteFile& db, const StringIds& strings, SideTableBuilder* out) {
  if (!db.HasTable("OP_MEMORY")) return Status();
  const std::string sql = "SELECT o.name, o.size, o.allocationTime, o.releaseTime, " +
                          Col(db, "OP_MEMORY", "o", "streamPtr") + ", " + Col(db, "OP_MEMORY", "o", "deviceId") +
                          " FROM OP_MEMORY o ORDER BY o.rowid";
  return ForEachRow(db, sql, [&](const SqliteStatement& r) {
    NpuOperatorMemory row;
    row.op = out->Intern(strings.Get(r, 0));
    row.bytes = IntOr(r, 1);
    row.alloc_ns = IntOr(r, 2);
    row.release_ns = IntOr(r, 3);
    row.from_pta = !r.IsNull(4);
    row.device = NpuDeviceAt(r, 5, out);
    if (row.bytes == kNoId || row.alloc_ns == kNoId) {
      out->Warn(db.path() + ": OP_MEMORY row without size or allocation time skipped");
      return;
    }
    out->AddNpuOperatorMemory(row);
  });
}

// µs text (as SQLite renders a REAL: shortest round trip) -> exact ns; kNoId for NULL or non-numbers.
int64_t MicrosAt(const SqliteStatement& s, int column) {
  if (column < 0 || s.IsNull(column)) return kNoId;
  int64_t ns;
  return ParseMicrosToNanos(s.Text(column), &ns) ? ns : kNoId;
}

Status ReadDbStepTraceTime(const SqliteFile& db, SideTableBuilder* out) {
  const std::vector<std::string> columns = db.Columns("StepTraceTime");
  if (columns.empty()) return Status();
  const int device = ColumnIndex(columns, "deviceId"), step = ColumnIndex(columns, "step");
  std::array<int, kStepTraceColumnCount> durations;
  for (size_t i = 0; i < kStepTraceColumnCount; ++i) durations[i] = ColumnIndex(columns, kStepTraceColumns[i].db_name);
  return ForEachRow(db, "SELECT * FROM StepTraceTime", [&](const SqliteStatement& r) {
    ReportedStepTime t;
    if (device >= 0) t.device_id = r.OptionalInt(device).value_or(t.device_id);
    int64_t number;
    if (step >= 0 && ParseInt64(r.Text(step), &number)) t.step = number;
    for (size_t i = 0; i < kStepTraceColumnCount; ++i) t.*kStepTraceColumns[i].field = MicrosAt(r, durations[i]);
    out->AddReportedStepTime(t);
  });
}

}  // namespace

Status ascend_db::StringIds::Load(const SqliteFile& db) {
  if (!db.HasTable("STRING_IDS")) return Status();
  return ForEachRow(db, "SELECT id, value FROM STRING_IDS", [&](const SqliteStatement& r) {
    if (!r.SkipIllTyped({0})) values_.emplace(r.Int(0), std::string(r.Text(1)));
  });
}

void AddInventoryEntry(TraceMetadata* meta, const std::string& name, SourceState state, int64_t rows,
                       std::string_view problem) {
  std::string value;
  switch (state) {
    case SourceState::kRead:
      value = rows == kNoId ? "present" : std::to_string(rows) + " rows";
      break;
    case SourceState::kCounted:
      value = rows == kNoId ? "present" : std::to_string(rows) + " rows, counted only";
      break;
    case SourceState::kMissing:
      value = "missing";
      break;
    case SourceState::kUnreadable:
      value = "unreadable: " + std::string(problem);
      break;
  }
  meta->entries.push_back(MetadataEntry{"inventory." + name, std::move(value)});
}

Status AddDatabaseInventory(const std::string& path, const std::string& file,
                            const std::vector<std::string_view>& modelled, TraceMetadata* meta) {
  auto db = SqliteFile::Open(path);
  if (!db.ok()) {
    AddInventoryEntry(meta, file, SourceState::kUnreadable, kNoId, db.status().message());
    return db.status();
  }
  for (const std::string& table : (*db)->TableNames()) {
    const bool read = std::find(modelled.begin(), modelled.end(), table) != modelled.end();
    auto rows = (*db)->CountRows(table);
    if (rows.ok()) {
      AddInventoryEntry(meta, file + ":" + table, read ? SourceState::kRead : SourceState::kCounted, *rows);
    } else {
      AddInventoryEntry(meta, file + ":" + table, SourceState::kUnreadable, kNoId, rows.status().message());
    }
  }
  for (const std::string& name : (*db)->RefusedNames()) {
    AddInventoryEntry(meta, file + ":" + name, SourceState::kUnreadable, kNoId,
                      fmt::format("{}, not a stored table", SqliteObjectWhat((*db)->Kind(name))));
  }
  return Status();
}

Result<Trace> ImportAscendDatabase(const std::string& db_path, const std::string& dir) {
  auto db = SqliteFile::Open(db_path);
  if (!db.ok()) return db.status();
  StringIds strings;
  if (Status s = strings.Load(**db); !s.ok()) return s;

  TraceBuilder builder(dir);
  TraceMetadata* meta = builder.mutable_metadata();
  meta->format = TraceFormat::kTorchNpuTraceView;  // torch_npu output: the analyses treat both forms alike
  meta->path = dir;
  if (!(*db)->HasTable("TASK")) builder.Warn(db_path + ": no TASK table; no device timeline");
  if (Status s = BuildTimeline(**db, strings, &builder); !s.ok()) return s;
  meta->entry_count = builder.partial().events().size();
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(db_path, ec);
  if (!ec) meta->file_bytes = bytes;
  // Device, rank and settings are extras: a broken table there is a warning, the timeline still loads.
  for (const Status& s : {ReadDevice(**db, &builder), ReadRank(**db, meta)}) {
    if (!s.ok()) builder.Warn(s.message());
  }
  if (meta->rank_source != RankSource::kTrace) SettleRank(meta);
  Trace trace = builder.Finish();

  SideTableBuilder out(&trace);
  for (const Status& s : {ReadKernelDetailRows(**db, strings, &out), ReadMemoryRecords(**db, strings, &out),
                          ReadDbOperatorMemory(**db, strings, &out)}) {
    if (!s.ok()) out.Warn(s.message());
  }
  if (Status s = ReadMetaData(**db, &out); !s.ok()) out.Warn(s.message());
  // Views and other objects asked for that are not stored tables, and values of the wrong type.
  for (const std::string& line : (*db)->Diagnostics()) out.Warn(line);
  return trace;
}

Status ReadAnalysisDatabase(const std::string& path, SideTableBuilder* out) {
  auto db = SqliteFile::Open(path);
  if (!db.ok()) return db.status();
  Status status;
  for (const Status& s : {ReadDbStepTraceTime(**db, out), ReadCommAnalyzer(**db, out), ReadCommMatrix(**db, out)}) {
    if (!s.ok() && status.ok()) status = s;
  }
  for (const std::string& line : (*db)->Diagnostics()) out->Warn(line);
  return status;
}

// The tables each file's importer reads, for callers building the inventory.
const std::vector<std::string_view>& AscendDbModelledTables() { return kModelledTables; }
const std::vector<std::string_view>& AnalysisDbModelledTables() { return kModelledAnalysisTables; }

}  // namespace tuneprof

// libFuzzer target: the fuzz bytes drive a small generator that writes a SQLite database with the table
// names the Nsight Systems, torch_npu and msprof importers read, in hostile shapes: views in place of
// tables (some over endless recursive CTEs), virtual tables, generated columns, triggers, columns of the
// wrong declared and stored type (TEXT, REAL, BLOB, NULL where integers belong), large blobs, missing and
// extra columns, empty tables, and joins that multiply rows. The file is then imported through ImportFile,
// as sqlite_import_fuzzer does, and the analysis.db reader reads it too. Byte-level mutation of a real
// file rarely gets past SQLite's page checks into these shapes; this reaches them on every input. Any
// outcome is fine except a crash, a hang (a query past its budget must end) or a leak.
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "importers/ascend/ascend_db.h"
#include "importers/import.h"
#include "model/trace.h"
#include "model/trace_builder.h"
#include "scratch_file.h"

namespace {

struct TableSpec {
  const char* name;
  std::vector<const char*> columns;
};

// The tables and columns the importers read, by schema family.
const std::vector<TableSpec> kNsys = {
    {"StringIds", {"id", "value"}},
    {"META_DATA_EXPORT", {"name", "value"}},
    {"CUPTI_ACTIVITY_KIND_KERNEL",
     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "demangledName", "shortName", "gridX",
      "blockX", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory", "clusterX", "clusterY", "clusterZ"}},
    {"CUPTI_ACTIVITY_KIND_MEMCPY",
     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "copyKind", "srcKind", "dstKind"}},
    {"CUPTI_ACTIVITY_KIND_MEMSET",
     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "memKind"}},
    {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "graphId"}},
    {"CUPTI_ACTIVITY_KIND_RUNTIME", {"start", "end", "globalTid", "correlationId", "nameId", "eventClass"}},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", {"start", "end", "correlationId", "globalPid", "syncType"}},
    {"NVTX_EVENTS", {"start", "end", "eventType", "text", "textId", "globalTid", "domainId", "jsonText", "binaryData"}},
    {"TARGET_INFO_GPU", {"id", "name", "totalMemory", "smCount", "computeMajor", "threadsPerWarp", "maxWarpsPerSm"}},
    {"TARGET_INFO_CUDA_DEVICE", {"cudaId", "numMultiprocessors"}},
    {"CUDA_GPU_MEMORY_USAGE_EVENTS", {"start", "globalPid", "deviceId", "address", "bytes", "memoryOperationType"}},
    {"GPU_METRICS", {"timestamp", "typeId", "metricId", "value"}},
    {"TARGET_INFO_GPU_METRICS", {"typeId", "metricId", "metricName"}},
    {"NVTX_PAYLOAD_SCHEMA_ENTRIES", {"domainId", "schemaId", "idx", "name", "type", "offset"}},
    {"PROCESSES", {"globalPid", "name"}},
    {"ThreadNames", {"nameId", "globalTid"}},
};

const std::vector<TableSpec> kAscend = {
    {"STRING_IDS", {"id", "value"}},
    {"PYTORCH_API", {"startNs", "endNs", "globalTid", "connectionId", "name", "type"}},
    {"CONNECTION_IDS", {"id", "connectionId"}},
    {"CANN_API", {"startNs", "endNs", "globalTid", "connectionId", "name"}},
    {"TASK",
     {"startNs", "endNs", "deviceId", "connectionId", "globalTaskId", "globalPid", "taskType", "contextId", "streamId",
      "taskId", "modelId"}},
    {"COMPUTE_TASK_INFO",
     {"name", "globalTaskId", "blockDim", "mixBlockDim", "taskType", "opType", "inputFormats", "inputDataTypes",
      "inputShapes", "outputFormats", "outputDataTypes", "outputShapes", "waitNs"}},
    {"TASK_PMU_INFO", {"globalTaskId", "name", "value"}},
    {"COMMUNICATION_OP", {"opName", "startNs", "endNs", "connectionId", "groupName", "opType", "waitNs"}},
    {"COMMUNICATION_TASK_INFO", {"name", "globalTaskId", "taskType", "planeId", "groupName"}},
    {"MEMORY_RECORD", {"component", "timestamp", "totalAllocated", "totalReserved", "totalActive", "deviceId"}},
    {"OP_MEMORY", {"name", "size", "allocationTime", "releaseTime", "streamPtr", "deviceId"}},
    {"NPU_INFO", {"id", "name"}},
    {"RANK_DEVICE_MAP", {"rankId", "deviceId"}},
    {"META_DATA", {"name", "value"}},
    {"STEP_TIME", {"id", "startNs", "endNs"}},
    {"AICORE_FREQ", {"deviceId", "timestampNs", "freq"}},
    {"HBM", {"deviceId", "timestampNs", "bandwidth", "hbmId", "type"}},
};

const std::vector<TableSpec> kAnalysis = {
    {"StepTraceTime", {"deviceId", "step", "computing", "communication_not_overlapped", "overlapped", "free"}},
    {"CommAnalyzerTime",
     {"hccl_op_name", "group_name", "start_timestamp", "elapse_time", "transit_time", "wait_time", "step", "type"}},
    {"CommAnalyzerBandwidth",
     {"hccl_op_name", "group_name", "transport_type", "transit_size", "transit_time", "bandwidth", "package_size",
      "count", "total_duration", "step", "type"}},
    {"CommAnalyzerMatrix",
     {"hccl_op_name", "group_name", "src_rank", "dst_rank", "transport_type", "transit_size", "transit_time",
      "bandwidth", "step", "type", "op_name"}},
};

constexpr int kMaxRows = 12;            // rows written one by one
constexpr int kBulkRows = 400;          // rows a bulk insert writes (joins of them multiply)
constexpr int kMaxBlobBytes = 1 << 16;  // one blob; the generator stays fast
constexpr int kAllBlobBytes = 1 << 20;  // all blobs of one database

// Reads the fuzz bytes as choices; past the end every choice is 0.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  int Pick(int n) { return Byte() % n; }
  int64_t Int64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | Byte();
    return static_cast<int64_t>(v);
  }
  bool done() const { return at_ >= size_; }
  // Bytes for one more blob of up to `want` bytes, within kAllBlobBytes per database.
  int Blob(int want) {
    const int bytes = std::min({want, kMaxBlobBytes, blob_bytes_left_});
    blob_bytes_left_ -= bytes;
    return bytes;
  }

 private:
  int blob_bytes_left_ = kAllBlobBytes;
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

std::string Quoted(std::string_view name) { return "\"" + std::string(name) + "\""; }

const char* DeclaredType(Choices& in) {
  static const char* const kTypes[] = {"INTEGER", "INTEGER", "TEXT", "REAL", "BLOB", "", "NUMERIC"};
  return kTypes[in.Pick(7)];
}

// One value of a hostile mix: small and huge integers, integral and fractional REALs, numeric and
// non-numeric text, blobs up to kMaxBlobBytes, NULL.
void BindValue(Choices& in, sqlite3_stmt* insert, int index) {
  switch (in.Pick(10)) {
    case 0:
    case 1:
      sqlite3_bind_int64(insert, index, in.Pick(64));
      break;
    case 2:
      sqlite3_bind_int64(insert, index, in.Int64());
      break;
    case 3:
      sqlite3_bind_double(insert, index, static_cast<double>(in.Pick(64)));
      break;
    case 4:
      sqlite3_bind_double(insert, index, static_cast<double>(in.Int64()) / 7.0);
      break;
    case 5:
      sqlite3_bind_text(insert, index, "236000000", -1, SQLITE_STATIC);
      break;
    case 6: {
      static const char* const kTexts[] = {"abc", "", "1e3", "-0", "nan", "ProfilerStep#1", "rank 3", "\x1b[2J"};
      sqlite3_bind_text(insert, index, kTexts[in.Pick(8)], -1, SQLITE_STATIC);
      break;
    }
    case 7:
      sqlite3_bind_zeroblob(insert, index, in.Blob(in.Pick(256) * 256));
      break;
    default:
      sqlite3_bind_null(insert, index);
      break;
  }
}

void Exec(sqlite3* db, const std::string& sql) { sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr); }

// The columns of a table as the generator writes them: some left out, an extra one now and then.
std::vector<std::string> ColumnsOf(Choices& in, const TableSpec& table) {
  std::vector<std::string> columns;
  for (const char* column : table.columns) {
    if (in.Pick(16) != 0) columns.emplace_back(column);  // now and then a column is missing
  }
  if (in.Pick(4) == 0) columns.emplace_back("extra_column");
  if (columns.empty()) columns.emplace_back(table.columns[0]);
  return columns;
}

void WriteRows(Choices& in, sqlite3* db, const std::string& table, const std::vector<std::string>& columns) {
  std::string sql = "INSERT INTO " + Quoted(table) + " VALUES (";
  for (size_t i = 0; i < columns.size(); ++i) sql += i ? ", ?" : "?";
  sql += ")";
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &insert, nullptr) != SQLITE_OK) return;
  const int rows = in.Pick(kMaxRows + 1);
  for (int r = 0; r < rows && !in.done(); ++r) {
    for (size_t c = 0; c < columns.size(); ++c) BindValue(in, insert, static_cast<int>(c + 1));
    sqlite3_step(insert);
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  if (in.Pick(8) != 0) return;
  // Many rows alike: the same small integer in every column, so that every join key matches every row.
  std::string bulk = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " +
                     std::to_string(kBulkRows) + ") INSERT INTO " + Quoted(table) + " SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) bulk += i ? ", 1" : "x";
  Exec(db, bulk + " FROM c");
}

// A view of the table's columns: over an endless recursive CTE, or over a few constant rows.
void WriteView(Choices& in, sqlite3* db, const TableSpec& table) {
  const bool endless = in.Pick(2) == 0;
  std::string select = "SELECT ";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    select += (i ? ", x AS " : "x AS ") + Quoted(table.columns[i]);
  }
  std::string sql = "CREATE VIEW " + Quoted(table.name) +
                    " AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c" +
                    (endless ? "" : " WHERE x < 3") + ") " + select + " FROM c";
  Exec(db, sql);
}

void WriteTable(Choices& in, sqlite3* db, const TableSpec& table) {
  switch (in.Pick(12)) {
    case 0:
    case 1:
      WriteView(in, db, table);
      return;
    case 2:
      Exec(db, "CREATE VIRTUAL TABLE " + Quoted(table.name) +
                   (in.Pick(2) ? " USING fts5(a, b)" : " USING rtree(id, x0, x1)"));
      return;
    default:
      break;
  }
  const std::vector<std::string> columns = ColumnsOf(in, table);
  std::string sql = "CREATE TABLE " + Quoted(table.name) + " (";
  for (size_t i = 0; i < columns.size(); ++i) sql += (i ? ", " : "") + Quoted(columns[i]) + " " + DeclaredType(in);
  const int shape = in.Pick(8);
  if (shape == 0) sql += ", computed AS (length(" + Quoted(columns[0]) + ") * 2)";  // a generated column
  Exec(db, sql + ")");
  if (shape == 1) {
    Exec(db, "CREATE TRIGGER " + Quoted(std::string(table.name) + "_t") + " AFTER INSERT ON " + Quoted(table.name) +
                 " BEGIN SELECT 1; END");
  }
  if (shape == 2) return;  // an empty table
  WriteRows(in, db, table.name, columns);
}

bool WriteDatabase(Choices& in, const std::string& path) {
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return false;
  }
  Exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN");
  const int family = in.Pick(3);
  const std::vector<TableSpec>& tables = family == 0 ? kNsys : family == 1 ? kAscend : kAnalysis;
  // Each table present or not; the importers tell the formats apart by which are there.
  for (const TableSpec& table : tables) {
    if (in.Pick(4) != 0) WriteTable(in, db, table);
  }
  Exec(db, "COMMIT");
  return sqlite3_close(db) == SQLITE_OK;
}

const std::string& ScratchPath() { return tuneprof::fuzz::ScratchPath("sqlite_schema_fuzzer", ".sqlite"); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Choices in(data, size);
  if (!WriteDatabase(in, ScratchPath())) {
    std::perror("sqlite_schema_fuzzer: cannot write the scratch database");
    std::abort();
  }
  auto trace = tuneprof::ImportFile(ScratchPath());
  (void)trace;
  tuneprof::Trace side;
  tuneprof::SideTableBuilder out(&side);
  (void)tuneprof::ReadAnalysisDatabase(ScratchPath(), &out);
  return 0;
}

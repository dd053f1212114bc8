#include "report/sqlite/sqlite_export.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <unistd.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"
#include "report/tables/run_tables.h"

namespace tuneprof {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()))).string();
}

DataTable Sample() {
  DataTable table;
  table.name = "things";
  DataColumn id;
  id.name = "id";
  id.type = DataColumnType::kInt64;
  id.has_null_value = true;
  id.ints = {1, -1};
  DataColumn value;
  value.name = "value";
  value.type = DataColumnType::kFloat64;
  value.floats = {2.5, std::numeric_limits<double>::quiet_NaN()};
  DataColumn label;
  label.name = "label";
  label.type = DataColumnType::kString;
  label.categories = {"a", "b"};
  label.codes = {1, 0};
  table.columns = {id, value, label};
  return table;
}

TEST(SqliteExportTest, WritesRowsWithNullsAndTheSchemaVersion) {
  const std::string path = TempPath("tp_sqlite_export_test.db");
  ASSERT_TRUE(WriteSqlite(path, {Sample()}, {"in.json"}).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* row = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT id, value, label FROM things ORDER BY rowid", -1, &row, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(row), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(row, 0), 1);
  EXPECT_DOUBLE_EQ(sqlite3_column_double(row, 1), 2.5);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(row, 2)), "b");
  ASSERT_EQ(sqlite3_step(row), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_type(row, 0), SQLITE_NULL);
  EXPECT_EQ(sqlite3_column_type(row, 1), SQLITE_NULL);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(row, 2)), "a");
  sqlite3_finalize(row);
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM tuneprof_meta WHERE key = 'schema'", -1, &row, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(row), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(row, 0)), kSqliteSchema);
  sqlite3_finalize(row);
  sqlite3_close(db);
  std::filesystem::remove(path);
}

TEST(SqliteExportTest, ReplacesAnOldFileWholeAndFailsWithTheFileNamed) {
  const std::string path = TempPath("tp_sqlite_replace_test.db");
  { std::ofstream(path) << "not a database"; }
  ASSERT_TRUE(WriteSqlite(path, {Sample()}, {}).ok());
  const Status failed = WriteSqlite("/nonexistent-dir/x.db", {Sample()}, {});
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("/nonexistent-dir/x.db"), std::string::npos);
  std::filesystem::remove(path);
}

// A torch_npu rank without a timeline: its kernel_details rows and operator_memory blocks reach the
// kernels and memory_events tables, with NULL where nothing joins or nothing was recorded.
TEST(SqliteExportTest, WritesATorchNpuRankWithoutATimeline) {
  std::vector<Trace> traces;
  traces.push_back(hand_built::HandBuiltTrace().Finish());
  SideTableBuilder side(&traces.front());
  side.StartKernelDetails();
  NpuOpRow task;
  task.name = side.Intern("trans_TransData_0");
  task.accelerator_core = side.Intern("AI_CORE");
  task.start_ns = 1000;
  task.dur_ns = 250;
  side.AddKernelDetail(task);
  NpuMemoryRecord record;
  record.component = side.Intern("PTA");
  record.ts_ns = 0;
  record.device = side.Intern("NPU:0");
  side.AddNpuMemoryRecord(record);
  NpuOperatorMemory block;
  block.op = side.Intern("aten::empty");
  block.bytes = 4096;
  block.alloc_ns = 1000;
  block.release_ns = 1500;
  block.from_pta = true;
  block.device = record.device;
  side.AddNpuOperatorMemory(block);
  RunTablesInput input;
  input.traces = &traces;
  const std::string path = TempPath("tp_sqlite_npu_test.db");
  ASSERT_TRUE(WriteSqlite(path, {BuildTable("kernels", input), BuildTable("memory_events", input)}, {}).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* row = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT name, \"index\", ts_ns, dur_ns FROM kernels", -1, &row, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(row), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(row, 0)), "trans_TransData_0");
  EXPECT_EQ(sqlite3_column_type(row, 1), SQLITE_NULL);
  EXPECT_EQ(sqlite3_column_int64(row, 2), 1000);
  EXPECT_EQ(sqlite3_column_int64(row, 3), 250);
  EXPECT_EQ(sqlite3_step(row), SQLITE_DONE);
  sqlite3_finalize(row);
  ASSERT_EQ(
      sqlite3_prepare_v2(db, "SELECT ts_ns, bytes, address, device_type, device_id FROM memory_events ORDER BY rowid",
                         -1, &row, nullptr),
      SQLITE_OK);
  for (const auto& [ts, bytes] : {std::pair<int64_t, int64_t>{1000, 4096}, {1500, -4096}}) {
    ASSERT_EQ(sqlite3_step(row), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int64(row, 0), ts);
    EXPECT_EQ(sqlite3_column_int64(row, 1), bytes);
    EXPECT_EQ(sqlite3_column_type(row, 2), SQLITE_NULL);
    EXPECT_EQ(sqlite3_column_int64(row, 3), 20);
    EXPECT_EQ(sqlite3_column_int64(row, 4), 0);
  }
  EXPECT_EQ(sqlite3_step(row), SQLITE_DONE);
  sqlite3_finalize(row);
  sqlite3_close(db);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tuneprof

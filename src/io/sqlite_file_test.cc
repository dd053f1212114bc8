#include "io/sqlite_file.h"
#include "test_corpus.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "io/scratch_dir_for_test.h"

namespace tuneprof {
namespace {

const std::string kMock = std::string(TUNEPROF_SHARED_DIR) + "/traces/nsys/rtx3080_mock.sqlite";
const std::string kSynthetic = std::string(TUNEPROF_SHARED_DIR) + "/traces/nsys/synthetic_healthy_1pct.sqlite";

TEST(SqliteFile, ReadsTablesColumnsAndRowsOfARealExport) {
  TUNEPROF_REQUIRE_CORPUS();
  auto file = SqliteFile::Open(kMock);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_TRUE((*file)->HasTable("TARGET_INFO_GPU"));
  EXPECT_FALSE((*file)->HasTable("NO_SUCH_TABLE"));
  EXPECT_TRUE((*file)->HasColumn("TARGET_INFO_GPU", "smCount"));
  EXPECT_FALSE((*file)->HasColumn("TARGET_INFO_GPU", "noSuchColumn"));
  auto kernels = (*file)->CountRows("CUPTI_ACTIVITY_KIND_KERNEL");
  ASSERT_TRUE(kernels.ok());
  EXPECT_EQ(*kernels, 2);  // README: reduce_kernel and vectorized_elementwise_kernel

  auto statement = (*file)->Prepare("SELECT smCount, memoryBandwidth FROM TARGET_INFO_GPU");
  ASSERT_TRUE(statement.ok()) << statement.status().message();
  auto row = statement->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(statement->Int(0), 68);
  EXPECT_EQ(statement->Int(1), 760080000000);
}

TEST(SqliteFile, BindsParametersAndReadsText) {
  TUNEPROF_REQUIRE_CORPUS();
  auto file = SqliteFile::Open(kSynthetic);
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto statement = (*file)->Prepare("SELECT name FROM TARGET_INFO_GPU WHERE ? = 1");
  ASSERT_TRUE(statement.ok());
  ASSERT_TRUE(statement->BindInt(1, 1).ok());
  auto row = statement->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(statement->Text(0), "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(statement->IsNull(0));
  auto end = statement->Step();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(*end);
}

TEST(SqliteFile, MissingFileAndNonDatabaseAreOneLineErrorsNamingThePath) {
  auto missing = SqliteFile::Open("/nonexistent/x.sqlite");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/x.sqlite"), std::string::npos);

  const std::string text_path = testing::TempDir() + "not_a_db.sqlite";
  std::ofstream(text_path) << "this is not a database, just text long enough to have a header......\n";
  auto text = SqliteFile::Open(text_path);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find(text_path), std::string::npos);
  EXPECT_EQ(text.status().message().find('\n'), std::string::npos);
  std::remove(text_path.c_str());
}

TEST(SqliteFile, BadQueryNamesTheFile) {
  TUNEPROF_REQUIRE_CORPUS();
  auto file = SqliteFile::Open(kSynthetic);
  ASSERT_TRUE(file.ok());
  auto statement = (*file)->Prepare("SELECT nope FROM nowhere");
  ASSERT_FALSE(statement.ok());
  EXPECT_NE(statement.status().message().find(kSynthetic), std::string::npos);
}

TEST(SqliteFile, OpeningNeverWritesBesideTheFile) {
  TUNEPROF_REQUIRE_CORPUS();
  auto file = SqliteFile::Open(kMock);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->CountRows("StringIds").ok());
  EXPECT_FALSE(std::filesystem::exists(kMock + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(kMock + "-shm"));
}

// A fresh database at a temporary path built by `sql`; false when this SQLite cannot run it (a module
// it was built without).
bool MakeDatabase(const std::string& path, const std::string& sql) {
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
            sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(db);
  return ok;
}

// A database built by `sql` in the test's own scratch folder, removed with the object; `made` is false
// when this SQLite cannot run `sql`.
struct ScratchDatabase {
  explicit ScratchDatabase(std::string_view sql) : made(MakeDatabase(path, std::string(sql))) {}

  ScratchDir folder{"tp_sqlite_"};
  const std::string path = (folder.path() / "test.sqlite").string();
  const bool made;
};

bool Contains(const std::vector<std::string>& lines, std::string_view text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

constexpr std::string_view kEndless =
    "CREATE TABLE StringIds(id INTEGER, value TEXT);"
    "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "SELECT x AS start, x + 1 AS \"end\" FROM c;";

TEST(SqliteFile, AViewIsRefusedWithItsNameAndNeverRead) {
  const ScratchDatabase scratch(kEndless);
  ASSERT_TRUE(scratch.made);
  auto file = SqliteFile::Open(scratch.path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_TRUE((*file)->HasTable("StringIds"));
  EXPECT_FALSE((*file)->HasTable("CUPTI_ACTIVITY_KIND_KERNEL"));
  EXPECT_EQ((*file)->Kind("CUPTI_ACTIVITY_KIND_KERNEL"), SqliteObject::kView);
  EXPECT_TRUE((*file)->Columns("CUPTI_ACTIVITY_KIND_KERNEL").empty());
  EXPECT_EQ((*file)->TableNames(), std::vector<std::string>{"StringIds"});
  const std::vector<std::string> said = (*file)->Diagnostics();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], scratch.path + ": CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table; tuneprof reads tables only");
}

TEST(SqliteFile, AnEndlessQueryEndsOverBudgetInSeconds) {
  const ScratchDatabase scratch(kEndless);
  ASSERT_TRUE(scratch.made);
  auto file = SqliteFile::Open(scratch.path);  // the default budget of a tiny file
  ASSERT_TRUE(file.ok()) << file.status().message();
  const auto start = std::chrono::steady_clock::now();
  auto statement = (*file)->Prepare("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  ASSERT_TRUE(statement.ok()) << statement.status().message();
  auto row = statement->Step();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(row.ok());
  EXPECT_NE(row.status().message().find(scratch.path + ": query over budget: CUPTI_ACTIVITY_KIND_KERNEL"),
            std::string::npos)
      << row.status().message();
  EXPECT_EQ(row.status().message().find('\n'), std::string::npos);
  EXPECT_LT(seconds, 5.0);
}

TEST(SqliteFile, TheBudgetIsPerQueryAndInjectable) {
  const ScratchDatabase scratch(
      "CREATE TABLE TASK(startNs INTEGER); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
      "SELECT x + 1 FROM c WHERE x < 5000) INSERT INTO TASK SELECT x FROM c;");
  ASSERT_TRUE(scratch.made);
  auto tiny = SqliteFile::Open(scratch.path, 2000);
  ASSERT_TRUE(tiny.ok()) << tiny.status().message();
  auto first = (*tiny)->Prepare("SELECT startNs FROM TASK ORDER BY startNs");
  ASSERT_TRUE(first.ok());
  Result<bool> row = true;
  while (row.ok() && *row) row = first->Step();
  ASSERT_FALSE(row.ok());
  EXPECT_NE(row.status().message().find(": query over budget: TASK"), std::string::npos) << row.status().message();
  // A small query after it has a budget of its own.
  auto small = (*tiny)->Prepare("SELECT startNs FROM TASK LIMIT 3");
  ASSERT_TRUE(small.ok());
  int rows = 0;
  for (row = small->Step(); row.ok() && *row; row = small->Step()) ++rows;
  EXPECT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(rows, 3);
  // The default budget reads the whole table.
  auto file = SqliteFile::Open(scratch.path);
  ASSERT_TRUE(file.ok());
  auto sum = (*file)->Prepare("SELECT sum(startNs) FROM TASK");
  ASSERT_TRUE(sum.ok());
  row = sum->Step();
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(sum->Int(0), 5000 * 5001 / 2);
  EXPECT_GT((*file)->max_query_steps(), 0);
  EXPECT_LT((*file)->max_query_steps(), SqliteFile::DefaultQueryBudget(std::filesystem::file_size(scratch.path)) / 100);
}

TEST(SqliteFile, VirtualTablesAndGeneratedColumnsAreRefused) {
  const ScratchDatabase scratch(
      "CREATE TABLE TASK(startNs INTEGER, endNs INTEGER, span AS (endNs - startNs));"
      "CREATE TABLE PLAIN(a INTEGER);");
  ASSERT_TRUE(scratch.made);
  bool fts5 = false;
  {
    sqlite3* db = nullptr;
    sqlite3_open(scratch.path.c_str(), &db);
    fts5 =
        sqlite3_exec(db, "CREATE VIRTUAL TABLE PYTORCH_API USING fts5(name)", nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close(db);
  }
  auto file = SqliteFile::Open(scratch.path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_TRUE((*file)->HasTable("PLAIN"));
  EXPECT_FALSE((*file)->HasTable("TASK"));
  EXPECT_EQ((*file)->Kind("TASK"), SqliteObject::kGeneratedColumns);
  EXPECT_TRUE(Contains((*file)->Diagnostics(), "TASK has generated columns"));
  if (!fts5) GTEST_SKIP() << "this SQLite has no fts5: the virtual-table case is not checked";
  EXPECT_FALSE((*file)->HasTable("PYTORCH_API"));
  EXPECT_EQ((*file)->Kind("PYTORCH_API"), SqliteObject::kVirtualTable);
  EXPECT_TRUE(Contains((*file)->Diagnostics(), "PYTORCH_API is a virtual table, not a stored one"));
  // fts5's own shadow tables are stored tables.
  EXPECT_TRUE((*file)->HasTable("PYTORCH_API_data"));
  const std::vector<std::string> refused = (*file)->RefusedNames();
  EXPECT_EQ(refused, (std::vector<std::string>{"PYTORCH_API", "TASK"}));
}

TEST(SqliteFile, IllTypedIntegersAreNeverReadAsZeroAndAreCounted) {
  const ScratchDatabase scratch(
      "CREATE TABLE T(start, id); INSERT INTO T VALUES (5, 1), ('abc', 2), (7.0, 3), "
      "(2.5, 4), (x'00', 5), (NULL, 6), (8, 'x'), (9, 'y'), ('42', 7), ('236 ms', 8), ('', 9);");
  ASSERT_TRUE(scratch.made);
  auto file = SqliteFile::Open(scratch.path);
  ASSERT_TRUE(file.ok());
  std::vector<int64_t> starts;
  int unknown_ids = 0;
  {
    auto statement = (*file)->Prepare("SELECT start, id FROM T ORDER BY rowid");
    ASSERT_TRUE(statement.ok());
    for (auto row = statement->Step(); row.ok() && *row; row = statement->Step()) {
      if (statement->SkipIllTyped({0})) continue;
      ASSERT_FALSE(statement->IllTyped(0));
      starts.push_back(statement->OptionalInt(0).value_or(-1));
      if (!statement->OptionalInt(1) && !statement->OptionalInt(1)) ++unknown_ids;  // read twice, counted once
    }
  }
  EXPECT_EQ(starts, (std::vector<int64_t>{5, 7, -1, 8, 9, 42}));  // integer text is an integer
  EXPECT_EQ(unknown_ids, 2);
  const std::vector<std::string> said = (*file)->Diagnostics();
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0], scratch.path + ": T: 2 rows with a non-integer id: the value read as unknown");
  EXPECT_EQ(said[1], scratch.path + ": T: 5 rows with a non-integer start skipped");
}

TEST(SqliteFile, NumbersAreNeverReadFromText) {
  const ScratchDatabase scratch("CREATE TABLE M(value); INSERT INTO M VALUES (1.5), (2), ('fast'), (NULL);");
  ASSERT_TRUE(scratch.made);
  auto file = SqliteFile::Open(scratch.path);
  ASSERT_TRUE(file.ok());
  std::vector<double> values;
  {
    auto statement = (*file)->Prepare("SELECT value FROM M ORDER BY rowid");
    ASSERT_TRUE(statement.ok());
    for (auto row = statement->Step(); row.ok() && *row; row = statement->Step()) {
      values.push_back(statement->OptionalDouble(0).value_or(-1));
    }
  }
  EXPECT_EQ(values, (std::vector<double>{1.5, 2, -1, -1}));
  EXPECT_EQ((*file)->Diagnostics(),
            std::vector<std::string>{scratch.path + ": M: 1 row with a non-numeric value: the value read as unknown"});
}

}  // namespace
}  // namespace tuneprof

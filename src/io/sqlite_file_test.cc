#include "io/sqlite_file.h"
#include "test_corpus.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace tuneprof

#include "io/trace_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

class TraceFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tp_trace_files_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Touch(const std::string& name) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "x";
    return path.string();
  }
  fs::path dir_;
};

TEST_F(TraceFilesTest, DiscoversNsightSqliteExportsBesideJsonTraces) {
  const std::string json = Touch("a.pt.trace.json");
  const std::string sqlite = Touch("sub/b.sqlite");
  Touch("notes.txt");
  auto files = ListTraceFiles(dir_.string());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{json, sqlite}));
}

TEST_F(TraceFilesTest, RanksAreListedInNumberOrderNotCharacterOrder) {
  const std::string r10 = Touch("rank10.json");
  const std::string r2 = Touch("rank2.json");
  const std::string r1 = Touch("rank1.json");
  const std::string r002 = Touch("rank002.json");
  auto files = ListTraceFiles(dir_.string());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{r1, r2, r002, r10}));
}

TEST_F(TraceFilesTest, NsysReportIsAnErrorSayingToExportIt) {
  const std::string report = Touch("run.nsys-rep");
  auto given = ListTraceFiles(report);
  ASSERT_FALSE(given.ok());
  EXPECT_NE(given.status().message().find(report + ": "), std::string::npos) << given.status().message();
  EXPECT_NE(given.status().message().find("nsys export --type sqlite"), std::string::npos);
  EXPECT_EQ(given.status().message().find('\n'), std::string::npos);

  auto in_directory = ListTraceFiles(dir_.string());  // no export beside it: a rank would go missing
  ASSERT_FALSE(in_directory.ok());
  EXPECT_NE(in_directory.status().message().find("nsys export --type sqlite"), std::string::npos);
}

TEST_F(TraceFilesTest, NsysReportWithItsExportIsReadThroughTheExport) {
  Touch("run.nsys-rep");
  const std::string sqlite = Touch("run.sqlite");
  auto files = ListTraceFiles(dir_.string());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, std::vector<std::string>{sqlite});
}

}  // namespace
}  // namespace tuneprof

#include "io/load_progress.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "io/byte_source.h"

namespace tuneprof {
namespace {

class Recorder final : public LoadObserver {
 public:
  void OnLoadProgress(const LoadProgress& progress) override {
    reports.push_back(progress);
    paths.push_back(*progress.path);  // the pointer is valid only during the call
  }
  std::vector<LoadProgress> reports;
  std::vector<std::string> paths;
};

class LoadProgressTest : public ::testing::Test {
 protected:
  void SetUp() override { SetLoadObserver(&recorder_); }
  void TearDown() override { SetLoadObserver(nullptr); }
  Recorder recorder_;
};

std::string WriteFile(const std::string& name, size_t bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
  return path;
}

TEST_F(LoadProgressTest, BytesReadOnTheLoadingThreadCountTowardsItsLoad) {
  const std::string path = WriteFile("tp_load_progress_bytes.json", 3000);
  {
    ScopedLoad load(path, 3000);
    ASSERT_TRUE(ReadHead(path, 64).ok());  // sniffing is not the load
    auto source = OpenByteSource(path);
    ASSERT_TRUE(source.ok());
    char buffer[1024];
    for (;;) {
      auto n = (*source)->Read(buffer, sizeof(buffer));
      ASSERT_TRUE(n.ok());
      if (*n == 0) break;
    }
    ReportEventsParsed(42);
  }
  std::filesystem::remove(path);
  ASSERT_GE(recorder_.reports.size(), 3u);
  const LoadProgress& first = recorder_.reports.front();
  EXPECT_EQ(first.bytes_read, 0u);
  EXPECT_EQ(first.total_bytes, 3000u);
  EXPECT_EQ(recorder_.paths.front(), path);
  const LoadProgress& last = recorder_.reports.back();
  EXPECT_TRUE(last.finished);
  EXPECT_EQ(last.bytes_read, 3000u);
  EXPECT_EQ(last.events, 42u);
  EXPECT_EQ(last.load_id, first.load_id);
  uint64_t previous = 0;
  for (const LoadProgress& report : recorder_.reports) {
    EXPECT_GE(report.bytes_read, previous);
    previous = report.bytes_read;
  }
}

TEST_F(LoadProgressTest, NothingIsReportedOutsideALoadOrWithoutAnObserver) {
  ReportBytesRead(10);
  ReportEventsParsed(10);
  EXPECT_TRUE(recorder_.reports.empty());
  SetLoadObserver(nullptr);
  {
    ScopedLoad load("x", 1);
    ReportBytesRead(1);
  }
  EXPECT_TRUE(recorder_.reports.empty());
}

TEST_F(LoadProgressTest, NestedLoadsReportToTheInnermost) {
  {
    ScopedLoad outer("outer", 0);
    {
      ScopedLoad inner("inner", 0);
      ReportBytesRead(5);
    }
    ReportBytesRead(7);
  }
  ASSERT_EQ(recorder_.reports.size(), 6u);
  EXPECT_EQ(recorder_.paths[2], "inner");
  EXPECT_EQ(recorder_.reports[2].bytes_read, 5u);
  EXPECT_EQ(recorder_.paths[4], "outer");
  EXPECT_EQ(recorder_.reports[4].bytes_read, 7u);
  EXPECT_NE(recorder_.reports[2].load_id, recorder_.reports[4].load_id);
}

}  // namespace
}  // namespace tuneprof

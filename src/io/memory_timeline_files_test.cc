#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/scratch_dir_for_test.h"
#include "io/trace_files.h"
#include "text_cases.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

TEST(MemoryTimelineHeadTest, TellsRawEventsAndPlotPointsFromOtherJson) {
  const test_support::TextCase<bool> kCases[] = {
      {"[[1696966047096061874, -1, 0, 0], [1, 2", true},
      {" [ [ -5, 3", true},
      {"{\"traceEvents\": []}", false},
      {"[{\"ph\": \"X\"}]", false},
      {"[[\"a\"]]", false},
      {"", false},
  };
  test_support::ExpectEachCase(IsMemoryTimelineHead, kCases);
}

// The listing's kinds as the importers hand them, cut to the JSON traces this test needs.
const TraceFileKinds kJsonTraces{nullptr, [](std::string_view name) { return name.ends_with(".json"); }, nullptr,
                                 "*.json"};

class MemoryTimelineFilesTest : public ::testing::Test {
 protected:
  ScratchDir scratch_{"tp_memory_timeline_files_"};
  const fs::path& dir_ = scratch_.path();

  std::string Write(const std::string& name, const std::string& text) { return scratch_.Write(name, text); }
};

TEST_F(MemoryTimelineFilesTest, ADirectoryWithoutTracesNamesItsTimeline) {
  const std::string timeline = Write("memory_timeline.raw", "[[10, -1, 0, 0], [20, 0, 1, 4096]]");
  Write("notes.txt", "not a timeline");
  EXPECT_EQ(MemoryTimelineExportsIn(dir_.string(), kJsonTraces), std::vector<std::string>{timeline});
  const auto listed = ListTraceFiles(dir_.string(), kJsonTraces);
  ASSERT_FALSE(listed.ok());
  EXPECT_NE(listed.status().message().find("directory holds no trace files"), std::string::npos);
  EXPECT_NE(listed.status().message().find("memory timeline " + timeline), std::string::npos);
}

TEST_F(MemoryTimelineFilesTest, AnEmptyDirectoryKeepsThePlainMessage) {
  const auto listed = ListTraceFiles(dir_.string(), kJsonTraces);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().message().find("memory timeline"), std::string::npos);
}

}  // namespace
}  // namespace tuneprof

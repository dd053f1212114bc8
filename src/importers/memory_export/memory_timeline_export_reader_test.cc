#include "importers/memory_export/memory_timeline_export_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "text_cases.h"

namespace tuneprof {
namespace {

TEST(MemoryTimelineExport, SniffsBothFormsAndNoTrace) {
  const test_support::TextCase<bool> kCases[] = {
      {"[[-1, 1, 512, 7], [-1, 1, 512, 7]]", true},
      {" [ [1696966047096061, 1696966047096245], [[0, 1", true},
      {"{\"traceEvents\": [[1, 2]]}", false},
      {"[{\"name\": \"aten::add\"}]", false},
      {"[[\"a\"]]", false},
      {"[[]]", false},
      {"[[", false},
  };
  test_support::ExpectEachCase(LooksLikeMemoryTimelineExport, kCases);
}

TEST(MemoryTimelineExport, ReadsRawEventsInFileOrder) {
  auto file = MemoryTimelineExportFromText(
      "[[-1, 1, 512, 7], [10, 2, 100, 4], [20, 3, -100, 4], [20, 3, 100, 5],"
      " [30, 4, -100, 5]]",
      "t.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_TRUE(file->raw);
  ASSERT_EQ(file->changes.size(), 5u);
  EXPECT_EQ(file->changes[0].ts_ns, kPreexistingTime);
  EXPECT_EQ(file->changes[0].category, MemoryCategory::kUnknown);
  EXPECT_EQ(file->changes[2].bytes, -100);
  EXPECT_EQ(file->changes[3].category, MemoryCategory::kGradients);
}

TEST(MemoryTimelineExport, TurnsPlotPointsIntoChanges) {
  auto file = MemoryTimelineExportFromText(
      "[[5, 7, 9], [[0, 10, 0, 0, 0, 0, 0, 0, 0], [0, 10, 0, 0, 0, 4, 0, 0, 0], [0, 10, 0, 0, 0, 4, 0, 0, 0]]]",
      "p.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_FALSE(file->raw);
  ASSERT_EQ(file->changes.size(), 3u);
  EXPECT_EQ(file->changes[0].ts_ns, 5000);
  EXPECT_EQ(file->changes[0].category, MemoryCategory::kParameters);
  EXPECT_EQ(file->changes[1].ts_ns, 7000);
  EXPECT_EQ(file->changes[1].bytes, 4);
  EXPECT_EQ(file->changes[1].category, MemoryCategory::kActivations);
  EXPECT_EQ(file->changes[2].ts_ns, 9000);  // a point that changes nothing keeps its time
  EXPECT_EQ(file->changes[2].bytes, 0);
}

// Each odd file: one line naming the file and the cause.
TEST(MemoryTimelineExport, RefusesOddFilesWithOneLine) {
  const char* kOdd[][2] = {
      {"[[-1, 1, 512, 8]]", "category 8"},
      {"[[-1, 9, 512, 7]]", "action 9"},
      {"[[-1, 1, 512]]", "not [time, action, bytes, category]"},
      {"[[-1, 1, 1.5, 7]]", "bytes is not an integer"},
      {"[[10, 2, 5, 7], [5, 4, -5, 7]]", "goes back"},
      {"[[10, 4, -5, 7]]", "unknown falls below zero"},
      {"[[-2, 1, 5, 7]]", "before -1"},
      {"[[1, 2, 72057594037927937, 0]]", "out of range"},
      {"[[1, 2], [[0, 1, 2, 3, 4, 5, 6, 7, 8]]]", "2 times but 1 rows"},
      {"[[1], [[3, 1, 2, 3, 4, 5, 6, 7, 8]]]", "baseline is 3"},
      {"[[1], [[0, 1, 2]]]", "sizes are not 9 integers"},
      {"[[1], [[0, -1, 2, 3, 4, 5, 6, 7, 8]]]", "out of range"},
      {"[[1, 2, 3, 4], oops", "not valid JSON"},
  };
  for (const auto& [text, cause] : kOdd) {
    auto file = MemoryTimelineExportFromText(text, "odd.json");
    ASSERT_FALSE(file.ok()) << text;
    const std::string message(file.status().message());
    EXPECT_TRUE(message.starts_with("odd.json: ")) << message;
    EXPECT_NE(message.find(cause), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tuneprof

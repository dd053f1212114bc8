#include "report/trace/annotated_trace.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

constexpr std::string_view kOriginal =
    "{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}";
constexpr std::string_view kTail = "\n]}";
// What EventWriter writes for pid 2: a process name, thread names, a slice, an instant and a counter.
constexpr std::string_view kBlock =
    ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"tid\":0,\"args\":{\"name\":\"tuneprof diagnosis\"}}"
    ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":1,\"args\":{\"name\":\"steps (tuneprof breakdown)\"}}"
    ",\n{\"ph\":\"X\",\"cat\":\"tuneprof\",\"name\":\"step 1: {\\\"}\",\"pid\":2,\"tid\":1,\"ts\":1.000,\"dur\":2.000,"
    "\"args\":{}}"
    ",\n{\"ph\":\"C\",\"cat\":\"tuneprof\",\"name\":\"memory allocated 0 (MiB)\",\"pid\":2,\"ts\":1.000,"
    "\"args\":{\"allocated\":1.000}}"
    ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":2,\"args\":{\"name\":\"findings (tuneprof advise)\"}}"
    ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"tuneprof\",\"name\":\"a finding\",\"pid\":2,\"tid\":2,\"ts\":1.000,"
    "\"args\":{}}";

TEST(RemoveAnnotations, TakesOutTheAddedBlockAndNothingElse) {
  std::string text = std::string(kOriginal) + std::string(kBlock) + std::string(kTail);
  EXPECT_EQ(RemoveAnnotations(&text), 6u);
  EXPECT_EQ(text, std::string(kOriginal) + std::string(kTail));
}

TEST(RemoveAnnotations, TakesOutEveryBlockOfAnAnnotatedAnnotatedTrace) {
  std::string text = std::string(kOriginal) + std::string(kBlock) + std::string(kBlock) + "]}";
  EXPECT_EQ(RemoveAnnotations(&text), 12u);
  EXPECT_EQ(text, std::string(kOriginal) + "]}");
}

TEST(RemoveAnnotations, LeavesATraceWithoutDiagnosisAlone) {
  // A user's own process of the same name, written in another form, is not ours to remove.
  const std::string original = std::string(kOriginal) +
                               ",\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 2, \"args\": {\"name\": "
                               "\"tuneprof diagnosis\"}}" +
                               std::string(kTail);
  std::string text = original;
  EXPECT_EQ(RemoveAnnotations(&text), 0u);
  EXPECT_EQ(text, original);
}

}  // namespace
}  // namespace tuneprof

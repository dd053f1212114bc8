// Regression tests for what the fuzzer found: the outcome of an import must not depend on where
// reads end.
#include "importers/chrome_json/chrome_trace_importer.h"

#include <gtest/gtest.h>

#include <string>

#include "io/memory_source.h"

namespace tuneprof {
namespace {

std::string Outcome(const std::string& text, size_t chunk, size_t max_read) {
  MemorySource source("mem.json", text, max_read);
  auto trace = ImportChromeTrace(&source, chunk);
  if (!trace.ok()) return "error: " + trace.status().message();
  return "ok " + std::to_string(trace->metadata().entry_count) + " truncated=" +
         std::to_string(trace->metadata().truncated);
}

void ExpectSameForEveryReadSize(const std::string& text, const std::string& expected) {
  for (size_t chunk : {1, 2, 3, 5, 16, 64, 4096}) {
    for (size_t max_read : {size_t{0}, size_t{1}, size_t{7}}) {
      EXPECT_EQ(Outcome(text, chunk, max_read), expected) << "chunk " << chunk << " read " << max_read;
    }
  }
}

TEST(ChromeTraceImporterTest, ByteOrderMarkSplitAcrossReads) {
  ExpectSameForEveryReadSize("\xEF\xBB\xBF[{\"ph\":\"X\",\"ts\":1,\"dur\":2}]", "ok 1 truncated=0");
}

TEST(ChromeTraceImporterTest, MalformedEventIsAnErrorWhateverFollowsIt) {
  // A missing comma inside the event; the byte after it is '}' in the file.
  const std::string text = "{\"traceEvents\":[{\"ph\":\"X\" \"ts\":1}]}";
  const std::string reference = Outcome(text, 4096, 0);
  EXPECT_EQ(reference.rfind("error: mem.json: byte ", 0), 0u) << reference;
  ExpectSameForEveryReadSize(text, reference);
}

TEST(ChromeTraceImporterTest, EarliestOfTwoErrorsIsReported) {
  const std::string text = "[{\"ph\":\"X\",\"ts\":{}}, {\"ph\":\"X\",\"ts\":1} x]";
  const std::string reference = Outcome(text, 4096, 0);
  EXPECT_NE(reference.find("byte 1:"), std::string::npos) << reference;  // the first event's ts
  ExpectSameForEveryReadSize(text, reference);
}

TEST(ChromeTraceImporterTest, CutOffTraceKeepsCompleteEvents) {
  ExpectSameForEveryReadSize("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"X\",\"ts\":2},{\"ph\":\"X\",\"t",
                             "ok 2 truncated=1");
}

// record_shapes arguments are kept as interned JSON text, once per distinct text, whatever the read size;
// an event without Input Dims gets no entry.
TEST(ChromeTraceImporterTest, KeepsRecordShapesAsInternedText) {
  const std::string op = R"({"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":2,"pid":1,"tid":1,"args":)"
                         R"({"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}})";
  const std::string text = "{\"traceEvents\":[" + op + "," + op + R"(,{"ph":"X","name":"x","ts":5,"dur":1,"args":{}}]})";
  for (size_t chunk : {7, 4096}) {
    MemorySource source("mem.json", text, 0);
    auto trace = ImportChromeTrace(&source, chunk);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    ASSERT_EQ(trace->op_shapes().size(), 2u);
    const OpShapeInfo& a = trace->op_shapes()[0];
    EXPECT_EQ(a.event, 0u);
    EXPECT_EQ(trace->str(a.input_dims), "[[2, 3], [3, 4]]");
    EXPECT_EQ(trace->str(a.input_types), R"(["float", "float"])");
    EXPECT_EQ(trace->str(a.concrete_inputs), R"(["", ""])");
    EXPECT_EQ(trace->op_shapes()[1].input_dims, a.input_dims);  // one copy in the pool
  }
}

}  // namespace
}  // namespace tuneprof

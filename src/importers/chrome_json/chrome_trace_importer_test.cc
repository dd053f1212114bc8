// Regression tests for what the fuzzer found: the outcome of an import must not depend on where
// reads end.
#include "importers/chrome_json/chrome_trace_importer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "io/memory_source.h"

namespace tuneprof {
namespace {

// `text` imported from memory, read `chunk` bytes at a time (and at most `max_read` per read when not 0).
Result<Trace> ImportChromeText(const std::string& text, size_t chunk = 4096, size_t max_read = 0) {
  MemorySource source("mem.json", text, max_read);
  return ImportChromeTrace(&source, chunk);
}

// Calls expect(trace, chunk) on `text` imported 7 bytes at a time and at once (what is kept must not
// depend on where reads end); stops at the first fatal failure, as an ASSERT in the caller's loop would.
template <typename Expect>
void ExpectForBothReadSizes(const std::string& text, const Expect& expect) {
  for (size_t chunk : {7, 4096}) {
    auto trace = ImportChromeText(text, chunk);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    expect(*trace, chunk);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

std::string ImportFingerprint(const std::string& text, size_t chunk, size_t max_read) {
  auto trace = ImportChromeText(text, chunk, max_read);
  if (!trace.ok()) return "error: " + trace.status().message();
  return "ok " + std::to_string(trace->metadata().entry_count) +
         " truncated=" + std::to_string(trace->metadata().truncated);
}

void ExpectSameForEveryReadSize(const std::string& text, const std::string& expected) {
  for (size_t chunk : {1, 2, 3, 5, 16, 64, 4096}) {
    for (size_t max_read : {size_t{0}, size_t{1}, size_t{7}}) {
      EXPECT_EQ(ImportFingerprint(text, chunk, max_read), expected) << "chunk " << chunk << " read " << max_read;
    }
  }
}

TEST(ChromeTraceImporterTest, ByteOrderMarkSplitAcrossReads) {
  ExpectSameForEveryReadSize("\xEF\xBB\xBF[{\"ph\":\"X\",\"ts\":1,\"dur\":2}]", "ok 1 truncated=0");
}

TEST(ChromeTraceImporterTest, MalformedEventIsAnErrorWhateverFollowsIt) {
  // A missing comma inside the event; the byte after it is '}' in the file.
  const std::string text = "{\"traceEvents\":[{\"ph\":\"X\" \"ts\":1}]}";
  const std::string reference = ImportFingerprint(text, 4096, 0);
  EXPECT_EQ(reference.rfind("error: mem.json: byte ", 0), 0u) << reference;
  ExpectSameForEveryReadSize(text, reference);
}

TEST(ChromeTraceImporterTest, EarliestOfTwoErrorsIsReported) {
  const std::string text = "[{\"ph\":\"X\" \"ts\":1}, {\"ph\":\"X\",\"ts\":1} x]";
  const std::string reference = ImportFingerprint(text, 4096, 0);
  EXPECT_NE(reference.find("byte 1:"), std::string::npos) << reference;  // the first event's missing comma
  ExpectSameForEveryReadSize(text, reference);
}

std::string Warnings(const Trace& trace) {
  std::string all;
  for (const std::string& w : trace.metadata().warnings) all += w + "\n";
  return all;
}

// A field of the wrong JSON type costs its event, counted once per field, never the trace; the events
// around it are kept whatever the read size (one event alone, or inside a run of several).
TEST(ChromeTraceImporterTest, IllTypedFieldsSkipTheirEventWithACount) {
  const std::string good = R"({"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":2,"args":{}})";
  const std::string text = "{\"traceEvents\":[" + good + R"(,{"ph":"X","ts":[1],"dur":2},)" +
                           R"({"ph":"X","ts":{"a":[1,2]},"dur":2},{"ph":"X","ts":3,"dur":true},)" +
                           R"({"ph":"X","ts":4,"pid":[7]},{"ph":"X","ts":5,"tid":{}},)" +
                           R"({"ph":"X","ts":6,"args":[1]},{"ph":"X","ts":7,"name":3},)" +
                           R"({"ph":"X","ts":8,"cat":null},{"ph":5,"ts":9},{"ph":"X","ts":"soon"},)" +
                           R"({"ph":"X","ts":1e300},{"ph":"X","ts":10,"pid":1.5},)" + good + "]}";
  ExpectSameForEveryReadSize(text, "ok 14 truncated=0");
  ExpectForBothReadSizes(text, [&](const Trace& trace, size_t /*chunk*/) {
    EXPECT_EQ(trace.events().size(), 2u);
    const std::string all = Warnings(trace);
    const std::string first = std::to_string(text.find(R"({"ph":"X","ts":[1])"));
    EXPECT_NE(all.find("mem.json: 4 events with an ill-typed 'ts' skipped (first at byte " + first +
                       ": ts must be a number or a numeric string)"),
              std::string::npos)
        << all;
    for (const char* field : {"'dur'", "'tid'", "'args'", "'name'", "'cat'", "'ph'"}) {
      EXPECT_NE(all.find(std::string("1 event with an ill-typed ") + field + " skipped"), std::string::npos)
          << field << "\n"
          << all;
    }
    EXPECT_NE(all.find("2 events with an ill-typed 'pid' skipped"), std::string::npos) << all;
  });
}

// Malformed JSON inside an event is still an error: only well-formed values of the wrong type are skipped.
TEST(ChromeTraceImporterTest, MalformedStringInAFieldIsStillAnError) {
  const std::string text = "[{\"ph\":\"X\",\"ts\":1,\"name\":\"a\\qb\"}]";
  const std::string reference = ImportFingerprint(text, 4096, 0);
  EXPECT_EQ(reference.rfind("error: mem.json: byte ", 0), 0u) << reference;
}

TEST(ChromeTraceImporterTest, CutOffTraceKeepsCompleteEvents) {
  ExpectSameForEveryReadSize("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"X\",\"ts\":2},{\"ph\":\"X\",\"t",
                             "ok 2 truncated=1");
}

// record_shapes arguments are kept as interned JSON text, once per distinct text, whatever the read size;
// an event without Input Dims gets no entry.
TEST(ChromeTraceImporterTest, KeepsRecordShapesAsInternedText) {
  const std::string op =
      R"({"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":2,"pid":1,"tid":1,"args":)"
      R"({"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}})";
  const std::string text =
      "{\"traceEvents\":[" + op + "," + op + R"(,{"ph":"X","name":"x","ts":5,"dur":1,"args":{}}]})";
  ExpectForBothReadSizes(text, [&](const Trace& trace, size_t /*chunk*/) {
    ASSERT_EQ(trace.op_shapes().size(), 2u);
    const OpShapeInfo& a = trace.op_shapes()[0];
    EXPECT_EQ(a.event, 0u);
    EXPECT_EQ(trace.str(a.input_dims), "[[2, 3], [3, 4]]");
    EXPECT_EQ(trace.str(a.input_types), R"(["float", "float"])");
    EXPECT_EQ(trace.str(a.concrete_inputs), R"(["", ""])");
    EXPECT_EQ(trace.op_shapes()[1].input_dims, a.input_dims);  // one copy in the pool
  });
}

// with_stack's `Call stack` argument (torch_npu ends each frame with ";\r\n", older Kineto with ';') is kept
// as its frames one a line, once per distinct stack; an event without one, or with an empty one, gets none.
TEST(ChromeTraceImporterTest, KeepsCallStacksAsFramesOneALine) {
  const std::string npu =
      R"({"ph":"X","cat":"cpu_op","name":"aten::add","ts":1,"dur":2,"pid":1,"tid":1,"args":)"
      R"({"Call stack": "/u/torch/_tensor.py(40): add;\r\n/u/main.py(366): train;\r\n<string>(1): <module>"}})";
  const std::string kineto = R"({"ph":"X","cat":"cpu_op","name":"aten::mm","ts":4,"dur":1,"pid":1,"tid":1,"args":)"
                             R"({"Call stack": "torch/functional.py(9): mm; main.py(10): train"}})";
  const std::string text = "{\"traceEvents\":[" + npu + "," + npu + "," + kineto +
                           R"(,{"ph":"X","name":"x","ts":5,"dur":1,"args":{"Call stack": ";\r\n"}}]})";
  ExpectForBothReadSizes(text, [&](const Trace& trace, size_t /*chunk*/) {
    ASSERT_EQ(trace.call_stacks().size(), 3u);
    const CallStackInfo& a = trace.call_stacks()[0];
    EXPECT_EQ(a.event, 0u);
    EXPECT_EQ(trace.str(a.frames), "/u/torch/_tensor.py(40): add\n/u/main.py(366): train\n<string>(1): <module>");
    EXPECT_EQ(trace.call_stacks()[1].frames, a.frames);  // one copy in the pool
    EXPECT_EQ(trace.str(trace.call_stacks()[2].frames), "torch/functional.py(9): mm\nmain.py(10): train");
  });
}

// A message whose element count times its type's size is past int64 has no size (signed overflow before);
// an ordinary one keeps its bytes.
TEST(ChromeTraceImporterTest, CollectiveTooLargeForInt64HasNoSize) {
  const auto kernel = [](const char* nelems) {
    return std::string(R"({"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","ts":1,"dur":2,"pid":0,)") +
           R"("tid":7,"args":{"Collective name":"allreduce","In msg nelems":)" + nelems +
           R"(,"Out msg nelems":1,"dtype":"Float","Group size":2}})";
  };
  const std::string text = "{\"traceEvents\":[" + kernel("3259379365349415968") + "," + kernel("1024") + "]}";
  auto trace = ImportChromeText(text);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->collectives().size(), 2u);
  EXPECT_EQ(trace->collectives()[0].bytes, kNoId);
  EXPECT_EQ(trace->collectives()[1].bytes, 4096);
}

// all_to_all_single's split sizes (rows per peer) are kept as written; a list-valued or absent one is none.
TEST(ChromeTraceImporterTest, AllToAllSplitSizesAreKept) {
  const std::string text =
      R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv","ts":1,"dur":2,"pid":0,)"
      R"("tid":7,"args":{"Collective name":"all_to_all","In msg nelems":30,"Out msg nelems":70,"dtype":"Float",)"
      R"("In split size":"[10, 20]","Out split size":"[30, 40]"}},)"
      R"({"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv","ts":5,"dur":2,"pid":0,)"
      R"("tid":7,"args":{"Collective name":"all_to_all","In msg nelems":3,"In split size":[1, 2]}}]})";
  auto trace = ImportChromeText(text);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->collectives().size(), 2u);
  EXPECT_EQ(trace->str(trace->collectives()[0].in_splits), "[10, 20]");
  EXPECT_EQ(trace->str(trace->collectives()[0].out_splits), "[30, 40]");
  EXPECT_EQ(trace->collectives()[1].in_splits.value, 0u);
  EXPECT_EQ(trace->collectives()[1].out_splits.value, 0u);
}

// A string flow id too large for int64 is kept by its interned id, a small number: a numeric id equal to
// it must still pair with its own points, each end with the start of its own id.
TEST(ChromeTraceImporterTest, StringAndNumericFlowIdsNeverPair) {
  const auto flow = [](const std::string& id, int ts_call, int ts_task) {
    return R"({"ph":"X","name":"call","cat":"cuda_runtime","pid":1,"tid":1,"ts":)" + std::to_string(ts_call) +
           R"(,"dur":5},{"ph":"s","id":)" + id + R"(,"cat":"HostToDevice","pid":1,"tid":1,"ts":)" +
           std::to_string(ts_call) + R"(},{"ph":"X","name":"task","cat":"kernel","pid":0,"tid":7,"ts":)" +
           std::to_string(ts_task) + R"(,"dur":5},{"ph":"f","id":)" + id +
           R"(,"cat":"HostToDevice","pid":0,"tid":7,"bp":"e","ts":)" + std::to_string(ts_task) + "}";
  };
  const std::string string_flow = flow("\"40037845112253841408\"", 10, 100);
  const std::string alone_text = "[" + string_flow + "]";
  auto first = ImportChromeText(alone_text);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->flow_points().size(), 2u);
  const int64_t interned = first->flow_points()[0].id;  // the same in the trace below, read in the same order

  const std::string text = "[" + string_flow + "," + flow(std::to_string(interned), 50, 200) + "]";
  ExpectForBothReadSizes(text, [&](const Trace& trace, size_t chunk) {
    ASSERT_EQ(trace.flow_points()[0].id, interned);
    std::vector<std::pair<int64_t, int64_t>> flows;  // (start ts, end ts) in us
    for (const Link& link : trace.links()) {
      if (link.kind == LinkKind::kFlow)
        flows.emplace_back(trace.events().ts_ns[link.from] / 1000, trace.events().ts_ns[link.to] / 1000);
    }
    std::sort(flows.begin(), flows.end());
    EXPECT_EQ(flows, (std::vector<std::pair<int64_t, int64_t>>{{10, 100}, {50, 200}})) << "chunk " << chunk;
  });
}

// Events no timeline can hold are dropped, one warning per kind with its count; the side tables that
// point at events stay aligned with what is kept.
TEST(ChromeTraceImporterTest, AbsurdEventsAreDroppedAndCountedPerKind) {
  const std::string text =
      "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"a\",\"pid\":0,\"tid\":7,\"ts\":1000,\"dur\":5,"
      "\"args\":{\"grid\":[1,1,1]}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"long\",\"pid\":0,\"tid\":7,\"ts\":1001,\"dur\":9158400000000,"
      "\"args\":{\"grid\":[2,1,1]}},"
      "{\"ph\":\"X\",\"name\":\"neg\",\"pid\":1,\"tid\":1,\"ts\":1002,\"dur\":-3},"
      "{\"ph\":\"X\",\"name\":\"early\",\"pid\":1,\"tid\":1,\"ts\":-5000000000000000,\"dur\":1},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"b\",\"pid\":0,\"tid\":7,\"ts\":1010,\"dur\":5,"
      "\"args\":{\"grid\":[3,1,1]}},"
      "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":1003},{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":1004},"
      "{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":3,\"ts\":1005},"
      "{\"ph\":\"B\",\"name\":\"back\",\"pid\":1,\"tid\":4,\"ts\":1006},{\"ph\":\"E\",\"pid\":1,\"tid\":4,\"ts\":1001}"
      "]";
  auto trace = ImportChromeText(text);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_EQ(trace->events().size(), 2u);
  EXPECT_EQ(trace->start_ns(), 1000000);
  EXPECT_EQ(trace->end_ns(), 1015000);
  ASSERT_EQ(trace->kernels().size(), 2u);
  EXPECT_EQ(trace->kernels()[1].event, 1u);
  EXPECT_EQ(trace->str(trace->events().name[trace->kernels()[1].event]), "b");
  std::string all;
  for (const std::string& w : trace->metadata().warnings) all += w + "\n";
  EXPECT_NE(all.find("mem.json: 1 'B' events without a matching 'E' dropped"), std::string::npos) << all;
  EXPECT_NE(all.find("mem.json: 2 'E' events without a matching 'B' dropped"), std::string::npos) << all;
  EXPECT_NE(all.find("mem.json: 2 events with a negative duration"), std::string::npos) << all;
  EXPECT_NE(all.find("1 events lasting more than a day dropped (the longest 2544 h)"), std::string::npos) << all;
  EXPECT_NE(all.find("1 events starting more than a day away from the rest of the trace dropped"), std::string::npos)
      << all;
}

// A control byte outside a string (here inside an args array the parser skips) is invalid JSON: the
// parser accepted it inside a run of events and refused it alone, so the verdict followed the reads.
TEST(ChromeTraceImporterTest, ControlByteOutsideAStringIsAnErrorWhateverTheReads) {
  const std::string text =
      "[{\"ph\":\"X\",\"ts\":1,\"dur\":1},\n{\"ph\":\"X\",\"args\":{\"Input Dims\":[[\x07]]},\"ts\":2,\"dur\":1},\n"
      "{\"ph\":\"X\",\"ts\":3,\"dur\":1}]";
  ExpectSameForEveryReadSize(
      text, "error: mem.json: byte 61: a control byte (0x07) outside a string; JSON allows none there");
  // Tabs, carriage returns and newlines between tokens are blanks.
  ExpectSameForEveryReadSize("[{\"ph\":\"X\",\r\n\t\"ts\":1,\"dur\":1}\r\n]", "ok 1 truncated=0");
}

// Brackets of the wrong kind ('[' closed by '}'): the stream delimits the event by depth, where simdjson's
// object ends elsewhere. Parsed alone the event fails; within a run of events it must fail the same way.
TEST(ChromeTraceImporterTest, MismatchedBracketsFailTheSameInARunAndAlone) {
  const std::string text =
      "[{\n    },\n  {\n       \"args\": {\n\"Input Dims\": [[1ype\": [\"\", \"Sclar\": \", ,1], [1]],\n"
      " \"M\",\n    \n  }\n]\n,\n      \"ph\": \"M\",\n    \n  }\n]\n";
  ExpectSameForEveryReadSize(text, "error: mem.json: byte 12: a trace event must be a JSON object");
}

// A stray comma is no (empty) event, wherever it falls.
TEST(ChromeTraceImporterTest, StrayCommaIsAnErrorWhateverTheReads) {
  ExpectSameForEveryReadSize("[,{\"ph\":\"X\",\"ts\":1}]", "error: mem.json: byte 1: expected a JSON value, found ','");
  ExpectSameForEveryReadSize("{\"a\": ,\"traceEvents\":[]}",
                             "error: mem.json: byte 6: expected a JSON value, found ','");
}

}  // namespace
}  // namespace tuneprof

namespace tuneprof {
namespace {

// distributedInfo.pg_config: each group's description and members kept by name; a malformed entry is
// skipped, not an error.
TEST(ChromeTraceImporterTest, ProcessGroupConfigIsKeptByGroupName) {
  const std::string text = R"({"distributedInfo": {"rank": 0, "world_size": 4, "pg_config": [
      {"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1, 2, 3]},
      {"pg_name": "1", "pg_desc": "TENSOR_MODEL_PARALLEL_GROUP", "ranks": [0, 1]},
      {"pg_name": "2", "pg_desc": "odd", "ranks": "all"},
      {"pg_desc": "nameless"}, 7]},
    "traceEvents": []})";
  auto trace = ImportChromeText(text);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  std::vector<std::pair<std::string, std::string>> entries;
  for (const MetadataEntry& e : trace->metadata().entries) {
    if (e.key.starts_with("distributedInfo.pg_config.")) entries.emplace_back(e.key, e.value);
  }
  const std::vector<std::pair<std::string, std::string>> want = {
      {"distributedInfo.pg_config.0.pg_desc", "default_pg"},
      {"distributedInfo.pg_config.0.ranks", "[0, 1, 2, 3]"},
      {"distributedInfo.pg_config.1.pg_desc", "TENSOR_MODEL_PARALLEL_GROUP"},
      {"distributedInfo.pg_config.1.ranks", "[0, 1]"},
      {"distributedInfo.pg_config.2.pg_desc", "odd"}};
  EXPECT_EQ(entries, want);
}

}  // namespace
}  // namespace tuneprof

namespace tuneprof {
namespace {

// A flow's name is not interned (torch_npu names each HostToDevice flow by its id); every other event
// keeps its name whether it comes before or after the phase, and the kept strings get ids in the order
// they were read.
TEST(ChromeTraceImporterTest, FlowNamesStayOutOfTheStringPool) {
  const std::string text =
      R"([{"name":"launch","ph":"X","pid":1,"tid":1,"ts":10,"dur":5,"cat":"cpu_op"},)"
      R"({"name":"HostToDevice7","ph":"s","cat":"HostToDevice","id":"7","pid":1,"tid":1,"ts":10},)"
      R"({"ph":"X","name":"task","pid":2,"tid":3,"ts":20,"dur":5},)"
      R"({"name":"HostToDevice7","ph":"f","id":"7","ts":20,"cat":"HostToDevice","pid":2,"tid":3,"bp":"e"},)"
      R"({"name":"late phase","pid":1,"tid":1,"ts":30,"dur":1,"ph":"X"}])";
  ExpectForBothReadSizes(text, [&](const Trace& trace, size_t chunk) {
    StringId id;
    EXPECT_FALSE(trace.strings().Find("HostToDevice7", &id)) << "chunk " << chunk;
    std::vector<std::string_view> names;
    for (StringId name : trace.events().name) names.push_back(trace.str(name));
    EXPECT_EQ(names, (std::vector<std::string_view>{"launch", "task", "late phase"})) << "chunk " << chunk;
    StringId launch, cpu_op, task;
    ASSERT_TRUE(trace.strings().Find("launch", &launch));
    ASSERT_TRUE(trace.strings().Find("cpu_op", &cpu_op));
    ASSERT_TRUE(trace.strings().Find("task", &task));
    EXPECT_LT(launch, cpu_op);
    EXPECT_LT(cpu_op, task);
    EXPECT_EQ(trace.links().size(), 1u);
  });
}

}  // namespace
}  // namespace tuneprof

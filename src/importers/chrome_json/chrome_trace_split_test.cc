// A large trace is read on two threads: the second takes the event array from a split point on into a
// builder of its own, merged afterwards. The model must be the one a single thread builds, byte for
// byte, wherever the split falls (inside an event, a string, the top-level object) and whatever the
// events (metadata at the end, begin/end pairs across the split, counters, errors after the split).
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "importers/chrome_json/chrome_trace_importer.h"
#include "io/gzip_for_test.h"
#include "io/gzip_source.h"
#include "io/memory_source.h"
#include "model/trace_dump.h"

namespace tuneprof {
namespace {

struct Imported {
  std::string dump;  // the whole model, or the error
  SplitOutcome outcome = SplitOutcome::kOneThread;
};

Imported Import(const std::string& text, uint64_t split_from, size_t chunk = kDefaultChunkBytes) {
  MemorySource source("mem.json", text);
  ChromeImportOptions options;
  options.chunk_bytes = chunk;
  options.split_from = split_from;
  Imported imported;
  options.outcome = &imported.outcome;
  Result<Trace> trace = ImportChromeTrace(&source, options);
  imported.dump = trace.ok() ? DumpTrace(*trace) : "error: " + trace.status().message();
  return imported;
}

// Splits searched from every `stride`-th byte; returns how many splits were merged and read again. A search
// lands on the next element start, so a stride below the shortest element reaches every one (and every
// look-alike before it); each import starts a thread, slow under the sanitizers, so the tests keep strides.
std::pair<int, int> ExpectSameAtEverySplit(const std::string& text, size_t chunk = kDefaultChunkBytes,
                                           size_t stride = 1) {
  const std::string one_thread = Import(text, ChromeImportOptions::kSplitNever, chunk).dump;
  std::pair<int, int> counts;
  for (uint64_t at = 0; at <= text.size(); at += stride) {
    const Imported split = Import(text, at, chunk);
    EXPECT_EQ(split.dump, one_thread) << "split searched from byte " << at;
    if (split.dump != one_thread) break;
    counts.first += split.outcome == SplitOutcome::kMerged;
    counts.second += split.outcome == SplitOutcome::kReadAgain;
  }
  return counts;
}

// Kineto's shape: device properties first, process and thread names after the events, the time base at
// the end; a string pid, counters, flows, memory events, kernels, copies and collectives in between.
const char* const kKinetoLike = R"json({
  "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU A", "numSms": 108}],
  "distributedInfo": {"rank": 1, "world_size": 2, "backend": "nccl"},
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 7, "tid": 7, "ts": 10, "dur": 500},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 20, "dur": 50,
   "args": {"External id": 3, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": 30, "dur": 5,
   "args": {"correlation": 11, "External id": 3}},
  {"ph": "s", "id": 11, "pid": 7, "tid": 7, "ts": 30, "cat": "ac2g", "name": "ac2g"},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 7, "tid": 7, "ts": 31,
   "args": {"Addr": 4096, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2048, "Device Type": 1, "Device Id": 0}},
  {"ph": "C", "name": "mem", "pid": "Spans", "ts": 32, "args": {"used": 3.5}},
  {"ph": "X", "cat": "kernel", "name": "gemm \"}, {\" kernel", "pid": 0, "tid": 7, "ts": 40, "dur": 20,
   "args": {"correlation": 11, "grid": [4, 1, 1], "block": [128, 1, 1], "stream": 7, "device": 0}},
  {"ph": "f", "id": 11, "pid": 0, "tid": 7, "ts": 40, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 61, "dur": 4,
   "args": {"bytes": 1024, "memory bandwidth (GB/s)": 0.25}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 20, "ts": 70, "dur": 30,
   "args": {"Collective name": "allreduce", "In msg nelems": 256, "Out msg nelems": 256, "dtype": "Float",
            "Process Group Name": "0", "Group size": 2}},
  {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": "Spans", "tid": "main", "ts": 15, "dur": 90},
  {"ph": "C", "name": "mem", "pid": "Spans", "ts": 90, "args": {"used": 4.5, "free": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#2", "pid": 7, "tid": 7, "ts": 600, "dur": 400},
  {"ph": "X", "cat": "kernel", "name": "gemm \"}, {\" kernel", "pid": 0, "tid": 7, "ts": 610, "dur": 20},
  {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
  {"name": "process_labels", "ph": "M", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
  {"name": "process_sort_index", "ph": "M", "pid": 0, "tid": 0, "args": {"sort_index": 5}},
  {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
  {"name": "process_name", "ph": "M", "pid": "Spans", "tid": 0, "args": {"name": "Spans"}},
  {"name": "process_name", "ph": "M", "pid": 99, "tid": 0, "args": {"name": "idle process"}}
  ],
  "traceName": "t.json", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000
})json";

TEST(ChromeTraceSplitTest, KinetoShapedTraceIsTheSameWhereverItSplits) {
  const auto [merged, read_again] = ExpectSameAtEverySplit(kKinetoLike, kDefaultChunkBytes, 13);
  EXPECT_GT(merged, 100);  // most splits land before an element and are merged
  EXPECT_EQ(read_again, 0);
}

TEST(ChromeTraceSplitTest, SmallReadsGiveTheSameModel) { ExpectSameAtEverySplit(kKinetoLike, 61, 29); }

// A '}, {' inside a name looks like an element start: the first thread finds no element there and
// reads on alone.
TEST(ChromeTraceSplitTest, LookalikeInsideAStringIsNotASplit) {
  const std::string text = kKinetoLike;
  const size_t inside = text.find("}, {\\\" kernel");
  ASSERT_NE(inside, std::string::npos);
  EXPECT_EQ(Import(text, inside).outcome, SplitOutcome::kOneThread);
  EXPECT_EQ(Import(text, inside).dump, Import(text, ChromeImportOptions::kSplitNever).dump);
}

// A begin/end pair open across the split, and an unmodelled phase whose warning is given once per
// trace, depend on what came before: such a part is read again on the first thread.
TEST(ChromeTraceSplitTest, BeginEndAcrossTheSplitIsReadAgain) {
  const std::string text =
      R"([{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"X","name":"x","pid":1,"tid":1,"ts":2,"dur":1},)"
      R"({"ph":"P","name":"p","pid":1,"tid":1,"ts":2},{"ph":"E","pid":1,"tid":1,"ts":5},)"
      R"({"ph":"P","name":"q","pid":1,"tid":1,"ts":6},{"ph":"X","name":"y","pid":1,"tid":1,"ts":7,"dur":1}])";
  const auto [merged, read_again] = ExpectSameAtEverySplit(text);
  EXPECT_GT(read_again, 0);
  EXPECT_GT(merged, 0);  // the last element alone has neither
}

// Errors and cut-off input after the split read as they do on one thread.
TEST(ChromeTraceSplitTest, ErrorsAndCutOffsAfterTheSplitAreTheSame) {
  const std::string events = R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},)"
                             R"({"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1},)";
  const auto same = [](const std::string& text) { ExpectSameAtEverySplit(text, kDefaultChunkBytes, 5); };
  same("{\"traceEvents\":[" + events + R"({"ph":"X","ts":"x"}]})");
  same("{\"traceEvents\":[" + events + R"({"ph":"X","ts":3,"dur":1}] "x"})");
  same("{\"traceEvents\":[" + events + R"({"ph":"X","ts":3,"dur":1},{"ph":"X","t)");
  same("{\"traceEvents\":[" + events + "{\"ph\":\"X\",\"ts\":3,\x01\"dur\":1}]}");
  same("{\"traceEvents\":[" + events + R"({"ph":"X","ts":3}], "baseTimeNanoseconds": "q"})");
  same("{\"traceEvents\":[" + events + R"({"ph":"X","ts":3}]} trailing)");
  same("[" + events + R"({"ph":"X","ts":3}])");
  // Ill-typed fields on both sides of the split: one count per field, the first one named.
  same(R"({"traceEvents":[{"ph":"X","ts":[1]},)" + events +
       R"({"ph":"X","ts":{}},{"ph":"X","pid":[1],"ts":4},{"ph":"X","ts":5,"args":2}]})");
}

// A second traceEvents array, and string flow ids (interned, so numbered per builder).
TEST(ChromeTraceSplitTest, UnusualDocumentsAreTheSame) {
  const std::string events = R"({"ph":"s","id":"abc","pid":1,"tid":1,"ts":1,"cat":"c"},)"
                             R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},)"
                             R"({"ph":"f","id":"abc","pid":1,"tid":1,"ts":1,"cat":"c","bp":"e"})";
  ExpectSameAtEverySplit("{\"traceEvents\":[" + events + R"(], "x": 1, "traceEvents": [)" + events + "]}",
                         kDefaultChunkBytes, 3);
}

// Found by the fuzzer: a control byte shortly after an invalid event. The block scan reported the
// control byte when its 64-byte block, which began before the event, reached past it, and the event's
// own error when its block did not: which error a document gets depended on where a scan began. The
// scan now stops at the control byte, so the earlier error, the event's, is reported either way.
TEST(ChromeTraceSplitTest, EarliestErrorWhereverTheScanBegins) {
  const std::string text = std::string(
      "[\n"
      "  {\n"
      "    \"pid\": 0,\n"
      "    \"tid\": 0,\n"
      "    \"args\": {\n"
      "      \"Input Dims\": [[1,1], [1,1]],\n"
      "      \"name\": 0\n"
      "    },\n"
      "    \"ts\": 0,\n"
      "    \"dur\": 1,\n"
      "    \"ph\": \"M\",\n"
      "    \"name\": \"process_name\"\n"
      "  },\n"
      "  {\n"
      "    \"pid\": 1,\n"
      "    \"tid\": 1,\n"
      "    \"args\": {\n"
      "      \"Input Dims\": [[1,1], [1,1]],\n"
      "      \"name\": 1\n"
      "    },\n"
      "    \"ts\": 1,\n"
      "    \"dur\": 1,\n"
      "    \"ph\"     \"name\": 0\n"
      "    },\n"
      "    \"ts\": 0,\n"
      "    \": \"M\",\n"
      "    \"name\x17"
      "\x00"
      "\x00"
      "\x00"
      "process_name\"\n"
      "  }\n"
      "]\n"
      "",
      401);
  const Imported one_thread = Import(text, ChromeImportOptions::kSplitNever, 8);
  EXPECT_EQ(one_thread.dump.rfind("error: mem.json: byte 183: ", 0), 0u) << one_thread.dump;
  ExpectSameAtEverySplit(text, 8, 3);
}

}  // namespace
}  // namespace tuneprof

namespace tuneprof {
namespace {

Imported ImportGzip(const std::string& gz, uint64_t split_from, GzipInflater inflater, size_t chunk) {
  auto source = MakeGzipSource(std::make_unique<MemorySource>("mem.json.gz", gz), 4096, inflater);
  ChromeImportOptions options;
  options.chunk_bytes = chunk;
  options.split_from = split_from;
  Imported imported;
  options.outcome = &imported.outcome;
  Result<Trace> trace = ImportChromeTrace(source.get(), options);
  imported.dump = trace.ok() ? DumpTrace(*trace) : "error: " + trace.status().message();
  return imported;
}

// A gzip'd trace is split by inflating it twice (the second thread inflates up to its split): the model
// is the one-thread model wherever the split falls, through either inflater, cut-off files included.
int ExpectSameAtEveryGzipSplit(const std::string& gz, size_t content_bytes, size_t stride, size_t chunk) {
  const std::string one_thread = ImportGzip(gz, ChromeImportOptions::kSplitNever, GzipInflater::kZlib, chunk).dump;
  int merged = 0;
  for (uint64_t at = 0; at <= content_bytes; at += stride) {
    for (GzipInflater inflater : {GzipInflater::kZlib, GzipInflater::kIsal}) {
      const Imported split = ImportGzip(gz, at, inflater, chunk);
      EXPECT_EQ(split.dump, one_thread) << "split searched from byte " << at;
      if (split.dump != one_thread) return merged;
      merged += split.outcome == SplitOutcome::kMerged;
    }
  }
  return merged;
}

TEST(ChromeTraceSplitTest, GzipTraceIsTheSameWhereverItSplits) {
  const std::string text = kKinetoLike;
  EXPECT_GT(ExpectSameAtEveryGzipSplit(Gzip(text), text.size(), 37, kDefaultChunkBytes), 50);
  ExpectSameAtEveryGzipSplit(Gzip(text), text.size(), 67, 61);
  // Cut off inside the member: a cut-off warning whichever thread reaches the end.
  const std::string gz = Gzip(text);
  const std::string cut = gz.substr(0, gz.size() * 3 / 4);
  EXPECT_NE(
      ImportGzip(cut, ChromeImportOptions::kSplitNever, GzipInflater::kZlib, kDefaultChunkBytes).dump.find("cut-off"),
      std::string::npos);
  ExpectSameAtEveryGzipSplit(cut, text.size(), 43, kDefaultChunkBytes);
  // Damaged after the split: the error is the one a single thread meets.
  std::string damaged = gz;
  damaged[damaged.size() - 6] ^= 0x40;
  ExpectSameAtEveryGzipSplit(damaged, text.size(), 53, kDefaultChunkBytes);
}

}  // namespace
}  // namespace tuneprof

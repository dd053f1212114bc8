// One trace read on two threads (the second takes the event array from a split point on and its part
// is merged) builds the model one thread builds, byte for byte, on real traces of every Chrome-trace
// producer: Kineto GPU and CPU, the legacy autograd profiler, torch_npu's trace_view.json.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "importers/chrome_json/chrome_trace_importer.h"
#include "io/byte_source.h"
#include "io/gzip_source.h"
#include "io/memory_source.h"
#include "model/trace_dump.h"
#include "test_corpus.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

const fs::path kSplitImportTraces = fs::path(TUNEPROF_SHARED_DIR) / "traces";

// The decompressed content: the split needs a source that can be entered midway.
std::string Content(const fs::path& path) {
  auto source = OpenByteSource(path.string());
  EXPECT_TRUE(source.ok()) << path;
  std::string content;
  if (!source.ok()) return content;
  std::string buffer(1 << 20, '\0');
  for (;;) {
    Result<size_t> n = (*source)->Read(buffer.data(), buffer.size());
    if (!n.ok() || *n == 0) break;
    content.append(buffer.data(), *n);
  }
  return content;
}

std::string Dump(const std::string& path, const std::string& content, uint64_t split_from, SplitOutcome* outcome) {
  MemorySource source(path, content);
  ChromeImportOptions options;
  options.split_from = split_from;
  options.outcome = outcome;
  Result<Trace> trace = ImportChromeTrace(&source, options);
  return trace.ok() ? DumpTrace(*trace) : "error: " + trace.status().message();
}

TEST(SplitImportGoldenTest, RealTracesBuildTheSameModelOnTwoThreads) {
  TUNEPROF_REQUIRE_CORPUS();
  const std::vector<std::string> files = {
      // The corpus' smaller traces of each producer: under the sanitizers an import of tens of MB takes
      // seconds, and the unit tests split a Kineto-shaped document (memory events included) finely.
      "kineto/hta/trace_filter/sampled_rank-0.json.gz",
      "kineto/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
      "kineto/hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
      "torch-cpu/kineto26/ddp_ws4_rank2.json.gz",
      "torch-cpu/legacy113/cnn_train.json.gz",
      "ascend/msinsight/test/data/pytorch/text/level2/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
  };
  for (const std::string& file : files) {
    const fs::path path = kSplitImportTraces / file;
    if (!fs::exists(path)) {
      ADD_FAILURE() << "missing from the corpus: " << path;
      continue;
    }
    const std::string content = Content(path);
    const std::string one_thread = Dump(file, content, ChromeImportOptions::kSplitNever, nullptr);
    ASSERT_EQ(one_thread.rfind("error", 0), std::string::npos) << file << ": " << one_thread.substr(0, 200);
    int merged = 0;
    // Two points a file: under the sanitizers each import of these traces takes seconds.
    for (double at : {0.5, 0.9}) {
      SplitOutcome outcome = SplitOutcome::kOneThread;
      const auto from = static_cast<uint64_t>(static_cast<double>(content.size()) * at);
      EXPECT_TRUE(Dump(file, content, from, &outcome) == one_thread) << file << " split from byte " << from;
      merged += outcome == SplitOutcome::kMerged;
    }
    // Real traces hold no begin/end pairs: a split merges unless it falls outside the event array (the
    // CPU-only sample is mostly a process-group list before its events).
    EXPECT_GE(merged, 1) << file;
  }
}

// The file's own bytes, compressed or not.
std::string RawBytes(const fs::path& path) {
  std::string bytes(fs::file_size(path), '\0');
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return "";
  bytes.resize(std::fread(bytes.data(), 1, bytes.size(), file));
  std::fclose(file);
  return bytes;
}

std::string DumpGzip(const std::string& file, const std::string& gz, GzipInflater inflater, uint64_t split_from,
                     SplitOutcome* outcome) {
  auto source = MakeGzipSource(std::make_unique<MemorySource>(file, gz), 1 << 20, inflater);
  ChromeImportOptions options;
  options.split_from = split_from;
  options.outcome = outcome;
  Result<Trace> trace = ImportChromeTrace(source.get(), options);
  return trace.ok() ? DumpTrace(*trace) : "error: " + trace.status().message();
}

// A gzip'd trace splits too: the second thread inflates up to its split. Through either inflater, the
// model is the one zlib builds on one thread.
TEST(SplitImportGoldenTest, GzipTracesBuildTheSameModelThroughEitherInflaterOnTwoThreads) {
  TUNEPROF_REQUIRE_CORPUS();
  for (const std::string file : {"kineto/hta/trace_filter/sampled_rank-0.json.gz",
                                 "torch-cpu/kineto26/ddp_ws4_rank2.json.gz", "torch-cpu/legacy113/cnn_train.json.gz"}) {
    const fs::path path = kSplitImportTraces / file;
    if (!fs::exists(path)) {
      ADD_FAILURE() << "missing from the corpus: " << path;
      continue;
    }
    const std::string gz = RawBytes(path);
    const std::string one_thread = DumpGzip(file, gz, GzipInflater::kZlib, ChromeImportOptions::kSplitNever, nullptr);
    ASSERT_EQ(one_thread.rfind("error", 0), std::string::npos) << file << ": " << one_thread.substr(0, 200);
    const uint64_t from = Content(path).size() / 2;
    for (GzipInflater inflater : {GzipInflater::kZlib, GzipInflater::kIsal}) {
      SplitOutcome outcome = SplitOutcome::kOneThread;
      EXPECT_TRUE(DumpGzip(file, gz, inflater, from, &outcome) == one_thread) << file << " split from byte " << from;
      EXPECT_EQ(outcome, SplitOutcome::kMerged) << file;
    }
  }
}

}  // namespace
}  // namespace tuneprof

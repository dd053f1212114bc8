// Importer tests on the shared real traces (the corpus, read in place).
#include "importers/import.h"

#include "importers/chrome_json/chrome_trace_importer.h"
#include "io/byte_source.h"
#include "io/trace_files.h"
#include "test_corpus.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tuneprof {
namespace {

const std::string kTraces = std::string(TUNEPROF_SHARED_DIR) + "/traces/";

Trace MustImportCorpus(const std::string& relative) {
  auto trace = ImportFile(kTraces + relative);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  if (!trace.ok()) return Trace();
  return std::move(trace).value();
}

// First event with this name (and category, when given).
uint32_t Find(const Trace& trace, std::string_view name) {
  const EventTable& e = trace.events();
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (trace.str(e.name[i]) == name) return i;
  }
  ADD_FAILURE() << "no event " << name;
  return 0;
}

TEST(ImportTest, TorchNpuStringTimestampsKeepNanoseconds) {
  TUNEPROF_REQUIRE_CORPUS();
  Trace trace = MustImportCorpus(
      "ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
  EXPECT_EQ(trace.metadata().format, TraceFormat::kTorchNpuTraceView);
  // {"name": "Computing", "ts": "1736408883704643.212", "dur": 53.742} on the Overlap Analysis track.
  uint32_t computing = Find(trace, "Computing");
  EXPECT_EQ(trace.events().ts_ns[computing], 1736408883704643212);
  EXPECT_EQ(trace.events().dur_ns[computing], 53742);
  EXPECT_EQ(trace.events().kind[computing], EventKind::kOverlapSummary);
  EXPECT_EQ(trace.metadata().rank, 0);
  EXPECT_EQ(trace.metadata().rank_source, RankSource::kFileName);
  // Ascend Hardware tasks carry no cat; their process makes them device work on one NPU.
  ASSERT_EQ(trace.devices().size(), 1u);
  EXPECT_EQ(trace.devices()[0].type, DeviceType::kNpu);
  ASSERT_EQ(trace.steps().size(), 1u);
  EXPECT_EQ(trace.steps()[0].number, 50);
}

TEST(ImportTest, KinetoBaseTimeNanosecondsIsAddedExactly) {
  TUNEPROF_REQUIRE_CORPUS();
  Trace trace = MustImportCorpus("kineto/hta/nccl_parser_config/nccl_data.json.gz");
  EXPECT_EQ(trace.metadata().format, TraceFormat::kKineto);
  EXPECT_EQ(trace.metadata().base_time_ns, 1711964646000000000);
  // First kernel: "ts": 4458676983543.183, "dur": 41.407.
  const EventTable& e = trace.events();
  uint32_t first_kernel = 0;
  while (e.kind[first_kernel] != EventKind::kKernel) ++first_kernel;
  EXPECT_EQ(e.ts_ns[first_kernel], 1716423322983543183);
  EXPECT_EQ(e.dur_ns[first_kernel], 41407);
}

TEST(ImportTest, KinetoModelTables) {
  TUNEPROF_REQUIRE_CORPUS();
  Trace trace = MustImportCorpus("kineto/hta/nccl_parser_config/nccl_data.json.gz");
  const TraceMetadata& meta = trace.metadata();
  EXPECT_EQ(meta.rank, 0);
  EXPECT_EQ(meta.distributed.world_size, 2);
  EXPECT_EQ(trace.str(meta.distributed.backend), "nccl");
  ASSERT_EQ(trace.devices().size(), 8u);  // deviceProperties lists every GPU of the node
  EXPECT_EQ(trace.str(trace.devices()[0].name), "NVIDIA A100-PG509-200");
  EXPECT_EQ(trace.devices()[0].num_sms, 108);
  ASSERT_EQ(trace.steps().size(), 3u);
  EXPECT_EQ(trace.steps()[0].number, 4);
  // Every memcpy is a copy with its byte count and direction from the name.
  size_t copies_with_bytes = 0;
  for (const CopyInfo& copy : trace.copies()) copies_with_bytes += copy.bytes > 0;
  EXPECT_EQ(trace.copies().size(), 960u + 114u);
  EXPECT_GT(copies_with_bytes, 1000u);
  // NCCL args on kernels and record_param_comms: allreduce of 6637568 floats = 26550272 bytes.
  bool found = false;
  for (const CollectiveInfo& c : trace.collectives()) {
    if (c.in_nelems == 6637568 && trace.str(c.dtype) == "Float") {
      EXPECT_EQ(c.bytes, 26550272);
      EXPECT_EQ(c.group_size, 2);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // Each launched kernel/copy links back to its runtime call through the CUPTI correlation id.
  size_t correlation_links = 0;
  for (const Link& link : trace.links()) {
    if (link.kind != LinkKind::kCorrelation) continue;
    ++correlation_links;
    EXPECT_EQ(trace.events().correlation[link.from], trace.events().correlation[link.to]);
    EXPECT_EQ(trace.events().kind[link.from], EventKind::kRuntime);
  }
  EXPECT_EQ(correlation_links, 2700u + 960u + 114u);
}

TEST(ImportTest, LegacyExportAndMemoryEvents) {
  TUNEPROF_REQUIRE_CORPUS();
  Trace legacy = MustImportCorpus("torch-cpu/legacy113/gpt_train_before.json.gz");
  EXPECT_EQ(legacy.metadata().format, TraceFormat::kPytorchLegacy);
  EXPECT_EQ(legacy.steps().size(), 5u);

  Trace kineto = MustImportCorpus("torch-cpu/kineto26/cnn_train.json.gz");
  EXPECT_EQ(kineto.memory_events().size(), 1691u);
  int64_t peak = 0;
  for (const MemoryEvent& m : kineto.memory_events()) peak = std::max(peak, m.total_allocated);
  EXPECT_GT(peak, 0);
}

TEST(ImportTest, SameModelForEveryChunkSize) {
  TUNEPROF_REQUIRE_CORPUS();
  // The streaming split must not depend on where reads end.
  const std::string path = kTraces + "kineto/hta/critical_path/cuda_event_sync/event_sync_trace.json.gz";
  auto reference = ImportFile(path);
  ASSERT_TRUE(reference.ok());
  for (size_t chunk : {1, 17, 64, 333, 4096}) {
    auto source = OpenByteSource(path);
    ASSERT_TRUE(source.ok());
    auto trace = ImportChromeTrace(source->get(), chunk);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    EXPECT_EQ(trace->events().ts_ns, reference->events().ts_ns) << chunk;
    EXPECT_EQ(trace->events().source_offset, reference->events().source_offset) << chunk;
    EXPECT_EQ(trace->metadata().entry_count, reference->metadata().entry_count);
  }
}

// A run's directory read again after tuneprof wrote into it, and the same file named twice: each rank
// once, tuneprof's own outputs left out, every one of these said.
TEST(ImportTest, EachFileOnceAndNoOutputOfTuneprofAsARank) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tp_import_once_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string events = R"("traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]})";
  const std::string rank = (dir / "rank0.json").string();
  std::ofstream(rank) << "{" << events;
  fs::create_hard_link(rank, dir / "copy.json");
  std::ofstream(dir / "merged.json") << kMergedRunHead << events;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "run.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE tuneprof_meta (key TEXT, value TEXT);", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  std::vector<std::string> warnings;
  auto traces = ImportPaths({dir.string(), rank}, &warnings);
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  EXPECT_EQ(traces->size(), 1u);
  auto says = [&](std::string_view text) {
    return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) { return w.find(text) != w.npos; });
  };
  EXPECT_TRUE(says("merged.json: a whole run merged by tuneprof annotate --merge; skipped"));
  EXPECT_TRUE(says("named 3 times (or through links to it); read once"));
  EXPECT_TRUE(says("run.sqlite: a database tuneprof export --sqlite wrote, not a profile"));

  const std::string zstd = (dir / "t.json.zst").string();
  std::ofstream(zstd) << "\x28\xB5\x2F\xFD and more";
  auto compressed = ImportFile(zstd);
  ASSERT_FALSE(compressed.ok());
  EXPECT_EQ(compressed.status().message(),
            zstd + ": a zstd-compressed file; decompress it first (zstd -d " + zstd + ")");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tuneprof

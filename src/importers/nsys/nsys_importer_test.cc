#include "importers/nsys/nsys_importer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "importers/import.h"
#include "test_corpus.h"
#include "trace_warnings.h"

namespace tuneprof {
namespace {

const std::string kNsysDir = std::string(TUNEPROF_SHARED_DIR) + "/traces/nsys/";

std::string EntryOf(const Trace& trace, std::string_view key) {
  for (const MetadataEntry& entry : trace.metadata().entries) {
    if (entry.key == key) return entry.value;
  }
  return "<none>";
}

size_t CountKind(const Trace& trace, EventKind kind) {
  return static_cast<size_t>(std::count(trace.events().kind.begin(), trace.events().kind.end(), kind));
}

TEST(NsysImporter, ReadsDevicePropertiesAndNormalizedNamesOfARealExport) {
  TUNEPROF_REQUIRE_CORPUS();
  auto trace = ImportFile(kNsysDir + "rtx3080_mock.sqlite");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->metadata().format, TraceFormat::kNsysSqlite);
  ASSERT_EQ(trace->devices().size(), 1u);
  const Device& gpu = trace->devices()[0];
  EXPECT_EQ(trace->str(gpu.name), "NVIDIA GeForce RTX 3080");
  EXPECT_EQ(gpu.num_sms, 68);
  EXPECT_EQ(gpu.total_memory_bytes, 10736893952);
  EXPECT_EQ(gpu.compute_major, 8);
  EXPECT_EQ(gpu.max_threads_per_sm, 48 * 32);
  // The occupancy calculator's limits (launch_occupancy.h) as TARGET_INFO_GPU gives them.
  EXPECT_EQ(gpu.max_blocks_per_sm, 16);
  EXPECT_EQ(gpu.regs_per_sm, 65536);
  EXPECT_EQ(gpu.shared_mem_per_sm, 102400);
  ASSERT_EQ(trace->kernels().size(), 2u);
  for (const KernelInfo& info : trace->kernels()) {
    EXPECT_EQ(info.cluster_blocks, kNoId);  // clusterX = 0: launched without clusters
    EXPECT_EQ(info.max_active_clusters, kNoId);
  }
  EXPECT_EQ(EntryOf(*trace, "nsys.gpu.0.memory_bandwidth_bytes_per_s"), "760080000000");
  EXPECT_EQ(EntryOf(*trace, "nsys.EXPORT_SCHEMA_VERSION"), "3.24.14");
  EXPECT_EQ(CountKind(*trace, EventKind::kKernel), 2u);
  ASSERT_EQ(trace->copies().size(), 1u);
  EXPECT_EQ(trace->str(trace->events().name[trace->copies()[0].event]), "Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(trace->copies()[0].dst, MemoryKind::kPinned);
  for (uint32_t i = 0; i < trace->events().size(); ++i) {
    if (trace->events().kind[i] == EventKind::kRuntime) {
      EXPECT_EQ(trace->str(trace->events().name[i]).find("_v"), std::string_view::npos);
    }
  }
  EXPECT_EQ(EntryOf(*trace, "inventory.NVTX_EVENTS"), "missing (not captured)");
  EXPECT_EQ(EntryOf(*trace, "inventory.CUPTI_ACTIVITY_KIND_KERNEL"), "2 rows");
}

// Thread-block clusters (clusterX/Y/Z, maxActiveClusters) are what tells the chip of an export without
// TARGET_INFO_GPU (chip_inference.h): 2- and 4-block clusters on both ranks of the H100 sample.
TEST(NsysImporter, KeepsThreadBlockClusters) {
  TUNEPROF_REQUIRE_CORPUS();
  auto traces = ImportFileRanks(kNsysDir + "h100_2gpu_mfu_before.sqlite");
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  size_t clustered = 0, pairs_of_66 = 0;
  for (const Trace& trace : *traces) {
    for (const KernelInfo& info : trace.kernels()) {
      if (info.cluster_blocks == kNoId) continue;
      ++clustered;
      EXPECT_TRUE(info.cluster_blocks == 2 || info.cluster_blocks == 4) << info.cluster_blocks;
      if (info.cluster_blocks == 2 && info.max_active_clusters == 66) ++pairs_of_66;
    }
  }
  EXPECT_EQ(clustered, 369u);  // sqlite3: SELECT COUNT(*) ... WHERE clusterX > 0
  EXPECT_EQ(pairs_of_66, 303u);
}

TEST(NsysImporter, ReadsAMinimalSchemaWithoutOptionalColumns) {
  TUNEPROF_REQUIRE_CORPUS();
  auto trace = ImportFile(kNsysDir + "synthetic_healthy_1pct.sqlite");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(CountKind(*trace, EventKind::kKernel), 400u);
  ASSERT_EQ(trace->devices().size(), 1u);
  EXPECT_EQ(trace->str(trace->devices()[0].name), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(trace->devices()[0].num_sms, kNoId);
  // Host calls of pid 0 must not join GPU 0's process.
  for (const Track& track : trace->tracks()) {
    const Process& process = trace->processes()[track.process];
    if (!track.on_device) EXPECT_EQ(process.device, kNoIndex);
  }
  EXPECT_FALSE(trace->links().empty());
  EXPECT_EQ(EntryOf(*trace, "inventory.CUPTI_ACTIVITY_KIND_MEMSET"), "missing (not captured)");
}

// The `count` ranks of `file`; none (and the test failed) when the import fails or finds another count.
std::vector<Trace> MustImportRanks(const std::string& file, size_t count) {
  auto traces = ImportFileRanks(kNsysDir + file);
  EXPECT_TRUE(traces.ok()) << traces.status().message();
  if (!traces.ok()) return {};
  EXPECT_EQ(traces->size(), count) << file;
  return traces->size() == count ? std::move(traces).value() : std::vector<Trace>();
}

TEST(NsysImporter, SynchronizationRecordsAreHostWaitsInsideTheirCall) {
  TUNEPROF_REQUIRE_CORPUS();
  auto trace = ImportFile(kNsysDir + "rtx3080_mock.sqlite");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const EventTable& e = trace->events();
  EXPECT_EQ(CountKind(*trace, EventKind::kSync), 0u);
  size_t syncs = 0;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (trace->str(e.category[i]) != "cuda_sync") continue;
    ++syncs;
    EXPECT_EQ(e.kind[i], EventKind::kRuntime);
    EXPECT_EQ(e.correlation[i], kNoId);  // the call keeps the launch join
    EXPECT_FALSE(trace->tracks()[e.track[i]].on_device);
    // The one record lies within cudaStreamSynchronize, on its thread (REAL: same correlationId).
    bool inside_call = false;
    for (uint32_t j = 0; j < e.size(); ++j) {
      inside_call |= trace->str(e.name[j]) == "cudaStreamSynchronize" && e.track[j] == e.track[i] &&
                     e.ts_ns[j] <= e.ts_ns[i] && e.end_ns(i) <= e.end_ns(j);
    }
    EXPECT_TRUE(inside_call) << trace->str(e.name[i]);
  }
  EXPECT_EQ(syncs, 1u);
}

TEST(NsysImporter, AnExportOfTwoProcessesIsTwoRanks) {
  TUNEPROF_REQUIRE_CORPUS();
  std::vector<Trace> ranks = MustImportRanks("h100_2gpu_1s.sqlite", 2);
  size_t kernel_links = 0, pageable_h2d = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const Trace& trace = ranks[r];
    EXPECT_EQ(trace.metadata().rank, static_cast<int64_t>(r));
    EXPECT_EQ(trace.metadata().rank_source, RankSource::kDefault);
    EXPECT_TRUE(trace.metadata().warnings.empty());  // the pid order is said as a fact, not a warning
    EXPECT_TRUE(EntryOf(trace, "nsys.rank_source").starts_with("process order")) << EntryOf(trace, "nsys.rank_source");
    // pids 111 and 112, one GPU each (traces/README.md).
    EXPECT_EQ(EntryOf(trace, "nsys.pid"), r == 0 ? "111" : "112");
    ASSERT_EQ(trace.devices().size(), 1u);
    EXPECT_EQ(trace.devices()[0].id, static_cast<int64_t>(r));
    EXPECT_EQ(CountKind(trace, EventKind::kKernel), 1721u);
    EXPECT_EQ(CountKind(trace, EventKind::kMemcpy), 452u);
    EXPECT_EQ(CountKind(trace, EventKind::kMemset), 11u);
    EXPECT_EQ(CountKind(trace, EventKind::kSync), 0u);
    for (const Link& link : trace.links()) {
      if (link.kind == LinkKind::kCorrelation && trace.events().kind[link.to] == EventKind::kKernel) ++kernel_links;
    }
    for (const CopyInfo& copy : trace.copies()) {
      if (copy.direction == CopyDirection::kHostToDevice && copy.src == MemoryKind::kPageable) ++pageable_h2d;
    }
  }
  // joined on (correlationId, process) 1,632 kernels find their launch (1,643 without the process).
  EXPECT_EQ(kernel_links, 1632u);
  EXPECT_EQ(pageable_h2d, 4u);
}

TEST(NsysImporter, OneTracePerFileRefusesAnExportOfSeveralRanks) {
  TUNEPROF_REQUIRE_CORPUS();
  auto trace = ImportFile(kNsysDir + "h100_2gpu_1s.sqlite");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("holds 2 ranks"), std::string::npos) << trace.status().message();
}

TEST(NsysImporter, PytorchNvtxRangesAreHostOperators) {
  TUNEPROF_REQUIRE_CORPUS();
  std::vector<Trace> ranks = MustImportRanks("h100_2gpu_mfu_before.sqlite", 2);
  size_t ops = 0, flash = 0;
  for (const Trace& trace : ranks) {
    const EventTable& e = trace.events();
    for (uint32_t i = 0; i < e.size(); ++i) {
      if (e.kind[i] != EventKind::kHostOp) continue;
      ++ops;
      const std::string_view name = trace.str(e.name[i]);
      EXPECT_EQ(name.find(", op_id ="), std::string_view::npos) << name;
      EXPECT_EQ(name.find(", seq ="), std::string_view::npos) << name;
      flash += name == "flash_attn::_flash_attn_forward";
    }
    // NCCL's own ranges (its domain, no op_id) stay annotations; no range repeats at the top level.
    EXPECT_GT(CountKind(trace, EventKind::kUserAnnotation), 0u);
    EXPECT_TRUE(trace.steps().empty());
  }
  // 19,118 NVTX rows, 462 of them NCCL's; 67 flash_attn::_flash_attn_forward ranges (SQL).
  EXPECT_EQ(ops, 19118u - 462u);
  EXPECT_EQ(flash, 67u);
}

TEST(NsysImporter, NamesNcclKernelsByTheEnclosingPytorchRange) {
  TUNEPROF_REQUIRE_CORPUS();
  std::vector<Trace> ranks = MustImportRanks("h100_2gpu_mfu_before.sqlite", 2);
  // 66 ncclDevKernel_SendRecv kernels; 64 have a launch (cuLaunchKernelEx) inside "nccl:all_to_all, op_id = N".
  size_t collectives = 0, driver_calls = 0;
  for (const Trace& trace : ranks) {
    collectives += trace.collectives().size();
    for (const CollectiveInfo& info : trace.collectives()) {
      EXPECT_EQ(trace.str(info.collective), "all_to_all");
      EXPECT_TRUE(trace.str(trace.events().name[info.event]).starts_with("ncclDevKernel_SendRecv"));
    }
    driver_calls += CountKind(trace, EventKind::kDriver);
  }
  EXPECT_EQ(collectives, 64u);
  EXPECT_EQ(driver_calls, 672u + 402u);  // cuKernelGetAttribute + cuLaunchKernelEx (traces/README.md)
}

// A minimal export at a temporary path: two kernels and one whose start is `third_start` (SQL).
std::string MinimalExport(const std::string& name, const std::string& third_start, const std::string& extra = "") {
  const std::string path = testing::TempDir() + name;
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string sql =
      "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT); INSERT INTO StringIds VALUES (1, 'gemm');"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, \"end\" INTEGER, deviceId INTEGER, streamId INTEGER, "
      "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (236000000, 236100000, 0, 7, 1, 0, 1), "
      "(236200000, 236300000, 0, 7, 2, 0, 1), (" +
      third_start + ", 236400000, 0, 7, 3, 0, 1);" + extra;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  return path;
}

using test_support::Warns;

TEST(NsysImporter, ATextStartSkipsItsRowAndIsCountedNeverReadAsZero) {
  const std::string path = MinimalExport("nsys_text_start.sqlite", "'236.3 ms'");
  auto trace = ImportFile(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(CountKind(*trace, EventKind::kKernel), 2u);
  EXPECT_EQ(*std::min_element(trace->events().ts_ns.begin(), trace->events().ts_ns.end()), 236000000);
  EXPECT_TRUE(Warns(*trace, path + ": CUPTI_ACTIVITY_KIND_KERNEL: 1 row with a non-integer start skipped"));
  std::remove(path.c_str());
}

TEST(NsysImporter, AViewBesideTablesIsRefusedByNameAndTheTablesAreRead) {
  const std::string path =
      MinimalExport("nsys_view.sqlite", "236300000",
                    "CREATE VIEW NVTX_EVENTS AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                    "SELECT x AS start, x AS \"end\", 59 AS eventType, 'r' AS text, 0 AS globalTid FROM c;");
  auto trace = ImportFile(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(CountKind(*trace, EventKind::kKernel), 3u);
  EXPECT_TRUE(Warns(*trace, path + ": NVTX_EVENTS is a view, not a table; tuneprof reads tables only"));
  EXPECT_EQ(EntryOf(*trace, "inventory.NVTX_EVENTS"), "not read (a view)");
  std::remove(path.c_str());
}

TEST(NsysImporter, AnExportWhoseOnlyDeviceTableIsAViewIsAnErrorNamingIt) {
  const std::string path = testing::TempDir() + "nsys_only_view.sqlite";
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                         "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                         "SELECT x + 1 FROM c) SELECT x AS start, x AS \"end\" FROM c;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto trace = ImportFileRanks(path);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(),
            path + ": CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table; tuneprof reads tables only");
  std::remove(path.c_str());
}

TEST(NsysImporter, AQueryOverItsBudgetIsAnErrorNamingTheTable) {
  TUNEPROF_REQUIRE_CORPUS();
  const std::string path = kNsysDir + "h100_2gpu_1s.sqlite";
  auto file = SqliteFile::Open(path, 20000);
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto traces = ImportNsysSqlite(**file, std::filesystem::file_size(path));
  ASSERT_FALSE(traces.ok());
  EXPECT_NE(traces.status().message().find(path + ": query over budget: "), std::string::npos)
      << traces.status().message();
}

TEST(NsysImporter, RealExportsStayFarBelowTheQueryBudget) {
  TUNEPROF_REQUIRE_CORPUS();
  // The budget allows 20 VM steps a byte (sqlite_file.cc); the real exports take at most 1 (measured 0.2).
  for (const char* name :
       {"h100_2gpu_1s.sqlite", "h100_2gpu_mfu_before.sqlite", "rtx3080_mock.sqlite", "synthetic_healthy_1pct.sqlite"}) {
    const std::string path = kNsysDir + name;
    auto file = SqliteFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    const uint64_t bytes = std::filesystem::file_size(path);
    auto traces = ImportNsysSqlite(**file, bytes);
    ASSERT_TRUE(traces.ok()) << traces.status().message();
    EXPECT_LE((*file)->max_query_steps(), static_cast<int64_t>(bytes)) << name;
  }
}

}  // namespace
}  // namespace tuneprof

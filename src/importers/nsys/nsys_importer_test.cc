#include "importers/nsys/nsys_importer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "importers/import.h"
#include "test_corpus.h"

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

TEST(NsysImporter, JoinsLaunchesPerProcessOnTwoGpus) {
  TUNEPROF_REQUIRE_CORPUS();
  auto trace = ImportFile(kNsysDir + "h100_2gpu_1s.sqlite");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->devices().size(), 2u);
  EXPECT_EQ(CountKind(*trace, EventKind::kKernel), 3442u);
  EXPECT_EQ(CountKind(*trace, EventKind::kMemcpy), 904u);
  EXPECT_EQ(CountKind(*trace, EventKind::kMemset), 22u);
  // formats.md C.4: joined on (correlationId, process) 1,632 kernels find their launch (1,643 without the process).
  size_t kernel_links = 0;
  for (const Link& link : trace->links()) {
    if (link.kind == LinkKind::kCorrelation && trace->events().kind[link.to] == EventKind::kKernel) ++kernel_links;
  }
  EXPECT_EQ(kernel_links, 1632u);
  size_t pageable_h2d = 0;
  for (const CopyInfo& copy : trace->copies()) {
    if (copy.direction == CopyDirection::kHostToDevice && copy.src == MemoryKind::kPageable) ++pageable_h2d;
  }
  EXPECT_EQ(pageable_h2d, 4u);
}

TEST(NsysImporter, NamesNcclKernelsByTheEnclosingPytorchRange) {
  TUNEPROF_REQUIRE_CORPUS();
  auto trace = ImportFile(kNsysDir + "h100_2gpu_mfu_before.sqlite");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  // 66 ncclDevKernel_SendRecv kernels; 64 have a launch (cuLaunchKernelEx) inside "nccl:all_to_all, op_id = N".
  ASSERT_EQ(trace->collectives().size(), 64u);
  for (const CollectiveInfo& info : trace->collectives()) {
    EXPECT_EQ(trace->str(info.collective), "all_to_all");
    EXPECT_TRUE(trace->str(trace->events().name[info.event]).starts_with("ncclDevKernel_SendRecv"));
  }
  size_t driver_calls = 0;
  for (EventKind kind : trace->events().kind) driver_calls += kind == EventKind::kDriver;
  EXPECT_EQ(driver_calls, 672u + 402u);  // cuKernelGetAttribute + cuLaunchKernelEx (traces/README.md)
}

}  // namespace
}  // namespace tuneprof

#include "analysis/memory/memory_timeline.h"

#include <gtest/gtest.h>

#include <memory>

#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/memory/memory_events_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

class MemoryTimelineTest : public MemoryEventsTest {};

TEST_F(MemoryTimelineTest, PeakIsTheLargestTotalWithItsStepInnermostOpAndHolders) {
  hand_.Step(1, Us(0), Us(100));
  hand_.Host(EventKind::kHostOp, "aten::linear", Us(10), Us(40));
  hand_.Host(EventKind::kHostOp, "aten::addmm", Us(20), Us(10));
  Memory(Us(5), 0x10, 1000, 1000);    // held by the step annotation only
  Memory(Us(15), 0x20, 3000, 4000);   // in aten::linear
  Memory(Us(25), 0x30, 6000, 10000);  // in aten::addmm: the peak
  Memory(Us(35), 0x30, -6000, 4000);
  Memory(Us(60), 0x20, -3000, 1000);
  const DeviceMemory d = AnalyzeOnly();
  EXPECT_EQ(d.device, "cpu");
  EXPECT_EQ(d.peak_allocated_bytes, 10000);
  EXPECT_EQ(d.peak_allocated_ns, Us(25));
  EXPECT_EQ(d.peak_step, 1);
  EXPECT_EQ(d.peak_op, "aten::addmm");
  EXPECT_EQ(AllocsAndFrees(d), AllocsAndFreesCount(3, 10000, 2, 9000));
  ASSERT_EQ(d.holders.size(), 3u);
  EXPECT_EQ(d.holders[0].op, "aten::addmm");
  EXPECT_EQ(d.holders[0].bytes, 6000);
  EXPECT_EQ(d.holders[0].longest_lifetime_ns, Us(10));
  EXPECT_EQ(d.holders[1].op, "aten::linear");
  EXPECT_EQ(d.holders[2].op, "ProfilerStep#1");
  EXPECT_EQ(d.live_at_peak_known_bytes, 10000);
  EXPECT_EQ(d.live_at_peak_unattributed_bytes, 0);
  ASSERT_FALSE(d.largest_live_blocks.empty());
  EXPECT_EQ(d.largest_live_blocks[0].address, 0x30);
  EXPECT_EQ(d.largest_live_blocks[0].free_ns, Us(35));
  // CPU: no reservation, so no fragmentation figure.
  EXPECT_EQ(d.fragmentation_bytes, kNoId);
  EXPECT_FALSE(d.fragmentation_ratio.has_value());
}

TEST_F(MemoryTimelineTest, BytesAllocatedBeforeTheTraceAreUnattributedAndFragmentationIsReservedMinusAllocated) {
  hand_.Host(EventKind::kHostOp, "aten::empty", Us(0), Us(50));
  // 4096 bytes were allocated before profiling started; the trace only shows the later block.
  Memory(Us(10), 0x100, 2048, 6144, 8192, 1, 0);
  Memory(Us(20), 0x999, -512, 5632, 8192, 1, 0);  // a free whose allocation the trace never saw
  const DeviceMemory d = AnalyzeOnly();
  EXPECT_EQ(d.device, "cuda:0");
  EXPECT_EQ(d.peak_allocated_bytes, 6144);
  EXPECT_EQ(d.peak_reserved_bytes, 8192);
  EXPECT_EQ(d.fragmentation_bytes, 2048);
  ASSERT_TRUE(d.fragmentation_ratio.has_value());
  EXPECT_DOUBLE_EQ(*d.fragmentation_ratio, 0.25);
  EXPECT_EQ(d.live_at_peak_known_bytes, 2048);
  EXPECT_EQ(d.live_at_peak_unattributed_bytes, 4096);
  EXPECT_TRUE(d.reuse.observed_is_reserved);
  EXPECT_EQ(d.reuse.observed_peak_bytes, 8192);
  EXPECT_EQ(d.reuse.plan_peak_bytes, 6144);
}

TEST_F(MemoryTimelineTest, ChurnPerStepAndALeakThatGrowsEveryStep) {
  for (int step = 0; step < 3; ++step) {
    const int64_t base = Us(100) * step;
    hand_.Step(step + 1, base, Us(100));
    hand_.Host(EventKind::kHostOp, "aten::relu", base + Us(10), Us(10));
    hand_.Host(EventKind::kHostOp, "aten::cat", base + Us(30), Us(10));
  }
  int64_t total = 0;
  for (int step = 0; step < 3; ++step) {
    const int64_t base = Us(100) * step;
    Memory(base + Us(12), 0x1000, 400, total + 400);  // temporary, freed in the step
    Memory(base + Us(25), 0x1000, -400, total);
    total += 64;
    Memory(base + Us(32), 0x2000 + step, 64, total);  // kept forever: the growing list
  }
  const DeviceMemory d = AnalyzeOnly();
  ASSERT_EQ(d.steps.size(), 3u);
  for (const StepMemory& step : d.steps) {
    EXPECT_EQ(AllocsAndFrees(step), AllocsAndFreesCount(2, 464, 1, 400));
    EXPECT_EQ(step.allocator_call_ns, kNoId);  // no allocator calls in the trace: unknown, not 0
  }
  EXPECT_EQ(d.steps[2].allocated_at_end_bytes, 192);
  EXPECT_EQ(d.steps[0].peak_allocated_bytes, 400);
  ASSERT_EQ(d.leak_suspects.size(), 1u);
  EXPECT_EQ(d.leak_suspects[0].op, "aten::cat");
  EXPECT_EQ(d.leak_suspects[0].alive_bytes_at_step_end, (std::vector<int64_t>{64, 128, 192}));
  EXPECT_EQ(d.leak_suspects[0].growth_bytes, 128);
}

TEST_F(MemoryTimelineTest, DownSampledTimelineKeepsThePeak) {
  for (int i = 0; i < 5000; ++i) {
    const int64_t bytes = i == 3333 ? 1 << 20 : 16;
    Memory(Us(i), 0x10, bytes, bytes);
    Memory(Us(i) + 500, 0x10, -bytes, 0);
  }
  const DeviceMemory d = AnalyzeOnly();
  EXPECT_EQ(d.peak_allocated_bytes, 1 << 20);
  EXPECT_LE(d.timeline.size(), kMaxTimelinePoints);
  int64_t highest = 0;
  for (const MemoryPoint& point : d.timeline) highest = std::max(highest, point.allocated_bytes);
  EXPECT_EQ(highest, 1 << 20);
}

// torch_npu without [memory] events: memory_record.csv gives the PTA peak, operator_memory the blocks.
class NpuOperatorMemoryTest : public ::testing::Test {
 protected:
  void Record(int64_t ts_ns, int64_t allocated, int64_t reserved) {
    NpuMemoryRecord record;
    record.component = side_->Intern("PTA");
    record.ts_ns = ts_ns;
    record.total_allocated_bytes = allocated;
    record.total_reserved_bytes = reserved;
    record.device = side_->Intern("NPU:0");
    side_->AddNpuMemoryRecord(record);
  }
  void Row(std::string_view op, int64_t bytes, int64_t alloc_ns, int64_t release_ns, bool pta = true) {
    NpuOperatorMemory row;
    row.op = side_->Intern(op);
    row.bytes = bytes;
    row.alloc_ns = alloc_ns;
    row.release_ns = release_ns;
    row.from_pta = pta;
    row.device = side_->Intern("NPU:0");
    side_->AddNpuOperatorMemory(row);
  }
  DeviceMemory Analyze() {
    MemoryAnalysis analysis = AnalyzeMemory(trace_, HardwareSelection{});
    EXPECT_EQ(analysis.devices.size(), 1u);
    return analysis.devices.empty() ? DeviceMemory{} : analysis.devices.front();
  }

  void SetUp() override {
    HandBuiltTrace hand;
    for (int64_t step = 1; step <= 3; ++step) hand.Step(step, Us(100 * (step - 1)), Us(100));
    trace_ = hand.Finish();
    side_ = std::make_unique<SideTableBuilder>(&trace_);
  }

  Trace trace_;
  std::unique_ptr<SideTableBuilder> side_;
};

// Read from the Db export's profiler database, the figures name its tables, not the text export's files.
TEST_F(NpuOperatorMemoryTest, TheDbExportsTablesAreNamedAsSuch) {
  side_->AddMetadataEntry("inventory.ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db:MEMORY_RECORD", "2 rows");
  Record(Us(0), 5000, 8000);
  Row("aten::mm", 2000, Us(10), Us(50));
  Record(Us(10), 7000, 8000);
  const DeviceMemory d = Analyze();
  EXPECT_EQ(d.peak_source, "MEMORY_RECORD PTA");
  EXPECT_EQ(d.blocks_source, "OP_MEMORY PTA rows");
}

TEST_F(NpuOperatorMemoryTest, RowsOfTheTorchNpuAllocatorHoldThePeakAndFeedChurnLeaksAndReuse) {
  Record(Us(0), 5000, 8000);  // 5000 B allocated before the window
  Row("aten::mm", 2000, Us(10), Us(50));
  Record(Us(10), 7000, 8000);
  Row("aten::relu", 1000, Us(20), Us(40));
  Record(Us(20), 8000, 8000);                                // the peak: aten::relu allocates
  Row("cann::Conv2D", 4000, Us(25), Us(30), /*pta=*/false);  // the graph engine's: not PTA's
  Row("aten::empty", 500, Us(90), kNoId);                    // held to the end, one per step: a leak
  Row("aten::empty", 500, Us(190), kNoId);
  Row("aten::empty", 500, Us(290), kNoId);
  Row("aten::add", 1000, Us(60), Us(60));  // freed as allocated: never live
  const DeviceMemory d = Analyze();
  EXPECT_EQ(d.device, "npu:0");
  EXPECT_EQ(d.blocks_source, "operator_memory PTA rows");
  EXPECT_EQ(d.peak_allocated_bytes, 8000);
  EXPECT_EQ(d.peak_allocated_ns, Us(20));
  EXPECT_EQ(d.peak_op, "aten::relu");
  EXPECT_EQ(AllocsAndFrees(d), AllocsAndFreesCount(6, 5500, 3, 4000));
  EXPECT_EQ(d.live_at_peak_known_bytes, 3000);
  EXPECT_EQ(d.live_at_peak_unattributed_bytes, 5000);
  ASSERT_EQ(d.holders.size(), 2u);
  EXPECT_EQ(d.holders[0].op, "aten::mm");
  EXPECT_EQ(d.holders[0].bytes, 2000);
  EXPECT_EQ(d.holders[1].op, "aten::relu");
  ASSERT_EQ(d.steps.size(), 3u);
  EXPECT_EQ(d.steps[0].alloc_count, 4);
  EXPECT_EQ(d.steps[0].free_count, 3);
  EXPECT_EQ(d.steps[0].peak_allocated_bytes, 8000);
  ASSERT_EQ(d.leak_suspects.size(), 1u);
  EXPECT_EQ(d.leak_suspects[0].op, "aten::empty");
  EXPECT_EQ(d.leak_suspects[0].growth_bytes, 1000);
  // The plan: 5000 B before the window plus the most bytes of these blocks alive at once (3000 B),
  // against the observed peak reserved.
  EXPECT_EQ(d.reuse.max_live_bytes, 8000);
  EXPECT_EQ(d.reuse.plan_peak_bytes, 8000);
  EXPECT_EQ(d.reuse.observed_peak_bytes, 8000);
  EXPECT_TRUE(d.reuse.observed_is_reserved);
  EXPECT_TRUE(d.in_place.empty());
}

// Each step's figures come from its own records and blocks, found by searching the sorted records: the
// total at its end is the last sample before it ends, its peak the highest sample inside it.
TEST_F(NpuOperatorMemoryTest, EachStepTakesItsOwnRecordsAndBlocks) {
  Record(Us(250), 900, 1000);  // out of time order in the file
  Record(Us(10), 100, 1000);
  Record(Us(150), 600, 1000);
  Record(Us(160), 400, 1000);
  Row("aten::mm", 100, Us(10), Us(150));
  Row("aten::mm", 300, Us(120), Us(205));
  Row("aten::mm", 500, Us(250), Us(400));  // freed after the last step
  const DeviceMemory d = Analyze();
  ASSERT_EQ(d.steps.size(), 3u);
  // Per step: the bytes allocated at its end and its peak.
  const int64_t kEndAndPeak[3][2] = {{100, 100}, {400, 600}, {900, 900}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d.steps[i].allocated_at_end_bytes, kEndAndPeak[i][0]) << "step " << i;
    EXPECT_EQ(d.steps[i].peak_allocated_bytes, kEndAndPeak[i][1]) << "step " << i;
  }
  EXPECT_EQ(d.steps[0].alloc_count, 1);
  EXPECT_EQ(d.steps[1].alloc_count, 1);
  EXPECT_EQ(d.steps[1].free_count, 1);
  EXPECT_EQ(d.steps[2].alloc_count, 1);
  EXPECT_EQ(d.steps[2].free_count, 1);
  EXPECT_EQ(d.steps[2].free_bytes, 300);
}

TEST(MemoryDeviceNameTest, FollowsC10DeviceTypes) {
  EXPECT_EQ(MemoryDeviceName(0, -1), "cpu");
  EXPECT_EQ(MemoryDeviceName(1, 3), "cuda:3");
  EXPECT_EQ(MemoryDeviceName(20, 0), "npu:0");
  EXPECT_EQ(MemoryDeviceName(9, 1), "device9:1");
}

}  // namespace
}  // namespace tuneprof

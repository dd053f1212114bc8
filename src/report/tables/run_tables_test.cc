#include "report/tables/run_tables.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string_view>

#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/memory/memory_timeline.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

std::vector<std::string> Strings(const DataColumn& column) {
  std::vector<std::string> values;
  for (int32_t code : column.codes) values.push_back(column.categories[static_cast<size_t>(code)]);
  return values;
}

// The table `name` of the one rank `t` holds.
DataTable OneRankTable(std::string_view name, HandBuiltTrace* t) {
  std::vector<Trace> traces;
  traces.push_back(t->Finish());
  RunTablesInput input;
  input.traces = &traces;
  return BuildTable(name, input);
}

TEST(RunTablesTest, EventsNestHostRangesAndInternNamesOnce) {
  HandBuiltTrace t;
  const uint32_t step = t.Step(1, Us(0), Us(100));
  const uint32_t op = t.Host(EventKind::kHostOp, "aten::mm", Us(10), Us(50));
  const uint32_t launch = t.Host(EventKind::kRuntime, "cudaLaunchKernel", Us(20), Us(5), 7);
  t.Host(EventKind::kHostOp, "aten::mm", Us(70), Us(10));
  const uint32_t kernel = t.Kernel("gemm", Us(30), Us(40), 7);
  const DataTable events = OneRankTable("events", &t);
  ASSERT_EQ(events.rows(), 5u);
  const DataColumn& index = *events.Find("index");
  const DataColumn& parent = *events.Find("parent");
  const DataColumn& depth = *events.Find("depth");
  auto row_of = [&](uint32_t event) {
    for (size_t r = 0; r < events.rows(); ++r) {
      if (index.ints[r] == event) return r;
    }
    return events.rows();
  };
  EXPECT_EQ(parent.ints[row_of(step)], -1);
  EXPECT_EQ(depth.ints[row_of(step)], 0);
  EXPECT_EQ(parent.ints[row_of(op)], step);
  EXPECT_EQ(parent.ints[row_of(launch)], op);
  EXPECT_EQ(depth.ints[row_of(launch)], 2);
  EXPECT_EQ(parent.ints[row_of(kernel)], launch);  // device work hangs under its launch, as in HTA
  EXPECT_EQ(depth.ints[row_of(kernel)], 3);
  EXPECT_EQ(events.Find("index_correlation")->ints[row_of(kernel)], launch);
  EXPECT_EQ(events.Find("index_correlation")->ints[row_of(launch)], kernel);
  EXPECT_EQ(events.Find("iteration")->ints[row_of(op)], 1);
  EXPECT_EQ(events.Find("iteration")->ints[row_of(kernel)], 1);  // its launch's step
  EXPECT_EQ(events.Find("correlation")->ints[row_of(kernel)], 7);
  EXPECT_EQ(events.Find("ts")->ints[row_of(kernel)], 30);  // µs from the run's first event, as HTA
  EXPECT_EQ(events.Find("ts_ns")->ints[row_of(kernel)], Us(30));
  const DataColumn& names = *events.Find("name");
  EXPECT_EQ(names.categories.size(), 4u);  // aten::mm twice, one category
  EXPECT_EQ(Strings(names)[row_of(op)], "aten::mm");
}

TEST(RunTablesTest, KernelsCarryTheirStreamAndAbsentLaunchConfiguration) {
  HandBuiltTrace t;
  t.Kernel("k", Us(0), Us(5));
  const DataTable kernels = OneRankTable("kernels", &t);
  ASSERT_EQ(kernels.rows(), 1u);
  EXPECT_EQ(kernels.Find("grid_x")->ints[0], -1);
  EXPECT_TRUE(kernels.Find("grid_x")->has_null_value);
  EXPECT_TRUE(std::isnan(kernels.Find("achieved_occupancy")->floats[0]));
}

// A torch_npu rank read from its tables alone (no event, its steps step_trace_time's) was not read from a
// trace_view: the ranks table names its format as info does; the same rank with a timeline keeps its own.
TEST(RunTablesTest, RanksOfTablesAloneAreTorchNpuTables) {
  for (const bool timeline : {false, true}) {
    HandBuiltTrace t;
    t.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
    if (timeline) t.Kernel("aclnnAdd_AddAiCore_Add", Us(0), Us(10));
    std::vector<Trace> traces;
    traces.push_back(t.Finish());
    ReportedStepTime step;
    step.step = 1;
    step.stage_ns = Us(400);
    SideTableBuilder(&traces.front()).AddReportedStepTime(step);
    RunTablesInput input;
    input.traces = &traces;
    const DataTable ranks = BuildTable("ranks", input);
    EXPECT_EQ(Strings(*ranks.Find("format")),
              (std::vector<std::string>{timeline ? "torch_npu_trace_view" : "torch_npu_tables"}));
  }
}

// A torch_npu rank as its side files give it, with or without a timeline.
class TorchNpuTablesTest : public ::testing::Test {
 protected:
  void SetUp() override { Reset(HandBuiltTrace()); }
  void Reset(HandBuiltTrace hand) {
    traces_.clear();
    traces_.push_back(hand.Finish());
    side_ = std::make_unique<SideTableBuilder>(&traces_.front());
  }
  void KernelDetail(std::string_view name, std::string_view core, int64_t start_ns, int64_t dur_ns) {
    side_->StartKernelDetails();
    NpuOpRow row;
    row.name = side_->Intern(name);
    row.accelerator_core = side_->Intern(core);
    row.start_ns = start_ns;
    row.dur_ns = dur_ns;
    row.stream_id = 2;
    row.device_id = 1;
    side_->AddKernelDetail(row);
  }
  void Record(std::string_view device) {
    NpuMemoryRecord record;
    record.component = side_->Intern("PTA");
    record.ts_ns = Us(0);
    record.total_allocated_bytes = 0;
    record.device = side_->Intern(device);
    side_->AddNpuMemoryRecord(record);
  }
  void Block(std::string_view device, int64_t bytes, int64_t alloc_ns, int64_t release_ns, bool pta = true) {
    NpuOperatorMemory row;
    row.op = side_->Intern("aten::empty");
    row.bytes = bytes;
    row.alloc_ns = alloc_ns;
    row.release_ns = release_ns;
    row.from_pta = pta;
    row.device = side_->Intern(device);
    side_->AddNpuOperatorMemory(row);
  }
  DataTable Table(std::string_view name, const CommAnalysis* comm = nullptr) {
    RunTablesInput input;
    input.traces = &traces_;
    input.comm = comm;
    return BuildTable(name, input);
  }

  std::vector<Trace> traces_;
  std::unique_ptr<SideTableBuilder> side_;
};

TEST_F(TorchNpuTablesTest, KernelsOfARankWithoutATimelineAreItsKernelDetailsComputeRows) {
  KernelDetail("trans_TransData_0", "AI_CORE", Us(10), Us(4));
  KernelDetail("hcom_allReduce__586_0_1", "HCCL", Us(20), Us(30));  // a collective, not a kernel
  KernelDetail("aclnnAdd_AddAiCore_Add", "AI_VECTOR_CORE", Us(60), Us(2));
  const DataTable kernels = Table("kernels");
  ASSERT_EQ(kernels.rows(), 2u);
  EXPECT_EQ(Strings(*kernels.Find("name")), (std::vector<std::string>{"trans_TransData_0", "aclnnAdd_AddAiCore_Add"}));
  EXPECT_EQ(kernels.Find("index")->ints[0], -1);  // no event to join: NULL
  EXPECT_TRUE(kernels.Find("index")->has_null_value);
  EXPECT_EQ(kernels.Find("ts_ns")->ints[1], Us(60));
  EXPECT_EQ(kernels.Find("dur_ns")->ints[1], Us(2));
  EXPECT_EQ(kernels.Find("stream")->ints[0], 2);
  EXPECT_EQ(kernels.Find("device")->ints[0], 1);
  EXPECT_EQ(kernels.Find("grid_x")->ints[0], -1);
}

TEST_F(TorchNpuTablesTest, KernelsOfARankWithATimelineAreItsKernelEventsAlone) {
  HandBuiltTrace hand;
  const uint32_t kernel = hand.Kernel("trans_TransData_0", Us(10), Us(4));
  Reset(std::move(hand));
  KernelDetail("trans_TransData_0", "AI_CORE", Us(10), Us(4));  // the same task, summarised
  const DataTable kernels = Table("kernels");
  ASSERT_EQ(kernels.rows(), 1u);
  EXPECT_EQ(kernels.Find("index")->ints[0], kernel);
}

TEST_F(TorchNpuTablesTest, MemoryEventsAreTheOperatorMemoryBlocksMemoryReads) {
  Record("NPU:3");
  Block("NPU:3", 4096, Us(10), Us(30));
  Block("NPU:3", 512, Us(30), Us(30));                  // released at once: after the allocation
  Block("NPU:3", 2048, Us(20), kNoId);                  // held past the window: no release
  Block("NPU:3", 1024, Us(15), Us(40), /*pta=*/false);  // the graph engine's, not a block memory reads
  Block("NPU:3", -64, Us(5), Us(6));                    // a release whose allocation precedes the window
  Block("NPU:7", 128, Us(1), Us(2));                    // a device memory_record.csv never samples
  const DataTable memory = Table("memory_events");
  ASSERT_EQ(memory.rows(), 5u);
  EXPECT_EQ(memory.Find("ts_ns")->ints, (std::vector<int64_t>{Us(10), Us(20), Us(30), Us(30), Us(30)}));
  EXPECT_EQ(memory.Find("bytes")->ints, (std::vector<int64_t>{4096, 2048, -4096, 512, -512}));
  EXPECT_EQ(memory.Find("device_type")->ints[0], 20);  // c10's PrivateUse1, as torch_npu's [memory] events
  EXPECT_EQ(memory.Find("device_id")->ints[0], 3);
  EXPECT_EQ(memory.Find("address")->ints[0], -1);
  EXPECT_EQ(memory.Find("total_allocated")->ints[0], -1);
  const MemoryAnalysis analysis = AnalyzeMemory(traces_.front(), HardwareSelection{});
  int64_t allocations = 0, releases = 0;
  for (const DeviceMemory& device : analysis.devices) {
    allocations += device.alloc_count;
    releases += device.free_count;
  }
  EXPECT_EQ(allocations, 3);
  EXPECT_EQ(releases, 2);
}

TEST_F(TorchNpuTablesTest, CollectivesOfARankWithoutATimelineAreCommunicationJsonOperators) {
  CommunicationTables* file = side_->mutable_communication();
  file->ops_present = true;
  CommAnalysis comm;
  comm.ranks.emplace_back();
  auto add = [&](std::string_view name, std::string_view group, double start_us, double elapse_ms, bool total) {
    HcclOpTime op;
    op.step = side_->Intern("step2");
    op.op_name = side_->Intern(name);
    op.group = side_->Intern(group);
    op.total = total;
    op.start_us = start_us;
    op.elapse_ms = elapse_ms;
    file->ops.push_back(op);
    AscendCommOp read;
    read.step = "step2";
    read.total = total;
    read.op_name = name;
    read.group = group;
    read.type = total ? CollectiveType::kOther : ParseCollectiveType(name);
    read.elapse_ms = elapse_ms;
    comm.ranks.back().ascend_ops.push_back(read);
  };
  add("hcom_allReduce__483_2", "g1", 1000.5, 0.25, false);
  add("hcom_allGather__483_3", "g1", 2000, 1.5, false);
  add("hcom_broadcast__822_0", "g2", 3000, 0.5, false);
  add("Total Op Info", "", 0, 2.25, true);
  const DataTable collectives = Table("collectives", &comm);
  ASSERT_EQ(collectives.rows(), 3u);
  EXPECT_EQ(Strings(*collectives.Find("collective")),
            (std::vector<std::string>{"allreduce", "allgather", "broadcast"}));
  EXPECT_EQ(Strings(*collectives.Find("source"))[0], "hccl_communication_json");
  EXPECT_EQ(collectives.Find("index")->ints[0], -1);
  EXPECT_TRUE(collectives.Find("index")->has_null_value);
  EXPECT_EQ(collectives.Find("ts_ns")->ints[0], 1000500);
  EXPECT_EQ(collectives.Find("dur_ns")->ints[1], 1500000);
  EXPECT_EQ(collectives.Find("step")->ints[0], 2);
  EXPECT_EQ(collectives.Find("sequence")->ints, (std::vector<int64_t>{0, 1, 0}));  // per group
  EXPECT_EQ(collectives.Find("bytes")->ints[0], -1);
  EXPECT_TRUE(std::isnan(collectives.Find("busbw_gbps")->floats[0]));
}

TEST(RunTablesTest, TablesWithoutTheirAnalysesAreEmptyNotMissing) {
  std::vector<Trace> traces;
  RunTablesInput input;
  input.traces = &traces;
  for (const std::string& name : RunTableNames()) {
    const DataTable table = BuildTable(name, input);
    EXPECT_EQ(table.name, name);
    EXPECT_FALSE(table.columns.empty()) << name;
    EXPECT_EQ(table.rows(), 0u) << name;
  }
}

}  // namespace
}  // namespace tuneprof

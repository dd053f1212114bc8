// msprof PROF_* directories, written to a temporary directory: no real one is shared.
#include "importers/ascend/ascend_msprof.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "importers/ascend/ascend_directory.h"
#include "importers/ascend/ascend_layout.h"
#include "importers/import.h"
#include "io/scratch_dir_for_test.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

class MsprofTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "mindstudio_profiler_output");
    fs::create_directories(root_ / "device_3");
  }

  void Write(const fs::path& relative, const std::string& text) { std::ofstream(root_ / relative) << text; }

  // op_summary with CANN's column names (B.12), a tab after the absolute start (B.3) and a comm row.
  void WriteOpSummary() {
    Write("mindstudio_profiler_output/op_summary_20260101120000.csv",
          "Device_id,Model Name,Model ID,Task ID,Stream ID,Infer ID,Op Name,OP Type,OP State,Task Type,"
          "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Num,HF32 Eligible,Mix Block Num,"
          "Input Shapes,Context ID,aiv_time(us),aicore_time(us),aic_total_cycles,aiv_total_cycles,aic_mac_ratio\n"
          "3,N/A,4294967295,7,2,N/A,aclnnMatmul_MatMulV3,MatMulV3,dynamic,AI_CORE,1767268800000000.123\t,"
          "12.345,0,20,NO,0,\"\"\"32,1024\"\"\",N/A,0,12.1,1000,0,0.75\n"
          "3,N/A,4294967295,N/A,N/A,N/A,hcom_allReduce__586_0_1,hcom_allReduce_,N/A,COMMUNICATION,"
          "1767268800000100.001\t,45.321,87.533,N/A,N/A,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n");
  }

  ScratchDir scratch_{"tp_msprof_test_"};
  const fs::path& base_ = scratch_.path();
  const fs::path root_ = base_ / "PROF_000001_20260101120000000_ABCDEFGH";
};

const std::string* FindEntry(const Trace& trace, std::string_view key) {
  for (const MetadataEntry& e : trace.metadata().entries) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

TEST_F(MsprofTest, RecognisesTheLayouts) {
  EXPECT_TRUE(IsMsprofDirectory(root_.string()));
  EXPECT_TRUE(IsMsprofDirectory((root_ / "mindstudio_profiler_output").string()));
  EXPECT_FALSE(IsMsprofDirectory(base_.string()));  // a parent of PROF_*
  EXPECT_TRUE(IsAscendProfilerDirectory(root_.string()));
  EXPECT_TRUE(IsAscendProfilerDirectory((root_ / "mindstudio_profiler_output").string()));
  EXPECT_FALSE(IsAscendProfilerDirectory(base_.string()));
  auto files = ListInputFiles(base_.string());
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ(fs::path((*files)[0]), root_);
}

TEST_F(MsprofTest, OpSummaryInfoJsonAndInventory) {
  WriteOpSummary();
  Write("device_3/info.json",
        R"({"DeviceInfo": [{"id": 3, "ai_core_num": 24, "aiv_num": 48, "aic_frequency": "1800"}],)"
        R"( "platform_version": "Ascend910B2", "rank_id": 5})");
  for (const fs::path& dir : {root_, root_ / "mindstudio_profiler_output"}) {
    auto trace = ImportAscendDirectory(dir.string());  // the torch_npu entry point hands PROF_* over
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    const Trace& t = *trace;
    EXPECT_EQ(t.metadata().rank, 5);
    EXPECT_EQ(t.metadata().rank_source, RankSource::kTrace);
    ASSERT_EQ(t.devices().size(), 1u);
    EXPECT_EQ(t.str(t.devices()[0].name), "Ascend910B2");
    ASSERT_EQ(t.kernel_details().rows.size(), 2u);
    const NpuOpRow& mm = t.kernel_details().rows[0];
    EXPECT_EQ(t.str(mm.type), "MatMulV3");
    EXPECT_EQ(t.str(mm.accelerator_core), "AI_CORE");
    EXPECT_EQ(mm.start_ns, 1767268800000000123);  // exact, the tab dropped
    EXPECT_EQ(mm.dur_ns, 12345);
    EXPECT_EQ(mm.block_dim, 20);
    EXPECT_EQ(t.kernel_details().rows[1].wait_ns, 87533);
    ASSERT_NE(t.kernel_metric("aic_mac_ratio"), nullptr);
    ASSERT_NE(FindEntry(t, "msprof_info.device_3.ai_core_num"), nullptr);
    EXPECT_EQ(*FindEntry(t, "msprof_info.device_3.ai_core_num"), "24");
    EXPECT_EQ(*FindEntry(t, "msprof_info.device_3.aic_frequency"), "1800");
    ASSERT_NE(FindEntry(t, "inventory.mindstudio_profiler_output/op_summary_20260101120000.csv"), nullptr);
    EXPECT_EQ(*FindEntry(t, "inventory.mindstudio_profiler_output/op_summary_20260101120000.csv"), "2 rows");
    EXPECT_EQ(*FindEntry(t, "inventory.device_3/info.json"), "present");
    EXPECT_EQ(*FindEntry(t, "inventory.mindstudio_profiler_output/msprof_*.json"), "missing");
    EXPECT_EQ(*FindEntry(t, "inventory.analyze/communication.json"), "missing");
    bool timeline_warning = false;
    for (const std::string& w : t.metadata().warnings) timeline_warning |= w.find("msprof_*.json: missing") != w.npos;
    EXPECT_TRUE(timeline_warning);
  }
}

// step_trace_*.csv with the header msprof's SummaryStepTraceAssembler writes (one Reduce pair); a
// one-off init graph (Model ID 1) beside the training graph (Model ID 5); one row without an end.
TEST_F(MsprofTest, StepTraceIterationsAreTheSteps) {
  WriteOpSummary();
  Write("mindstudio_profiler_output/step_trace_20260101120000.csv",
        "Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),FP to BP Time(us),"
        "Iteration Refresh(us),Data Aug Bound(us),Model ID,Reduce Start(us),Reduce Duration(us)\n"
        "3,1,1767268799000000.000,1767268799000500.000,1767268799000600.000,600.000,500.000,100.000,N/A,1,N/A,N/A\n"
        "3,1,1767268800000010.500,1767268800000900.000,1767268800001000.250,1000.250,889.500,100.250,N/A,5,"
        "1767268800000950.000,40.000\n"
        "3,2,1767268800001020.000,1767268800001900.000,1767268800002000.000,999.750,880.000,100.000,19.750,5,"
        "1767268800001950.000,40.000\n"
        "3,3,N/A,N/A,N/A,N/A,N/A,N/A,N/A,5,N/A,N/A\n"
        "3,4,1767268800003020.000,1767268800003900.000,1767268800004000.001,1000.001,880.000,100.001,20.000,5,"
        "1767268800003950.000,40.000\n");
  auto trace = ImportMsprofDirectory(root_.string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const std::vector<Step>& steps = trace->steps();
  ASSERT_EQ(steps.size(), 3u);  // Model ID 5's iterations; iteration 3 has no times
  EXPECT_EQ(steps[0].number, 1);
  EXPECT_EQ(steps[0].start_ns, 1767268800000000000);  // Iteration End - Iteration Time, exact
  EXPECT_EQ(steps[0].end_ns, 1767268800001000250);
  EXPECT_EQ(steps[1].number, 2);
  EXPECT_EQ(steps[1].start_ns, 1767268800001000250);
  EXPECT_EQ(steps[2].number, 4);
  EXPECT_EQ(steps[2].end_ns, 1767268800004000001);
  EXPECT_EQ(*FindEntry(*trace, "inventory.mindstudio_profiler_output/step_trace_20260101120000.csv"), "5 rows");
  bool skipped = false, chosen = false;
  for (const std::string& w : trace->metadata().warnings) {
    skipped |= w.find("step_trace_20260101120000.csv") != w.npos && w.find("row skipped") != w.npos;
    chosen |= w.find("Device_id 3, Model ID 5") != w.npos;
  }
  EXPECT_TRUE(skipped);
  EXPECT_TRUE(chosen);
}

TEST_F(MsprofTest, BadInputs) {
  auto empty = ImportMsprofDirectory(root_.string());  // not exported: one error naming the directory
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find(root_.string()), std::string::npos);
  WriteOpSummary();
  Write("device_3/info.json", "{\"DeviceInfo\": [");  // cut off: a warning, the rest loads
  auto trace = ImportMsprofDirectory(root_.string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->kernel_details().rows.size(), 2u);
  bool named = false;
  for (const std::string& w : trace->metadata().warnings) named |= w.find("info.json") != w.npos;
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace tuneprof

// kernel_details.csv / step_trace_time.csv on small inline files: every header variant torch_npu and
// msprof write and the quirks (tab-suffixed times, triple-quoted shapes, N/A).
#include "importers/ascend/ascend_tables.h"

#include <gtest/gtest.h>

#include <cmath>

#include "importers/ascend/ascend_csv_for_test.h"

namespace tuneprof {
namespace {

using ascend_csv::ReadGoodTable;

Trace Kernels(std::string text) { return ReadGoodTable("kernel_details.csv", std::move(text), ReadKernelDetails); }

Trace Steps(std::string text) { return ReadGoodTable("step_trace_time.csv", std::move(text), ReadStepTraceTime); }

TEST(KernelDetailsTest, Level0EightColumns) {
  Trace t = Kernels(
      "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim\r\n"
      "50,trans_TransData_0,N/A,N/A,1736405443881410.320\t,50.621,0,0\r\n"
      "50,hcom_allReduce__586_0_1,hcom_allReduce_,HCCL,1736405443990000.001\t,1000.5,3.25,0\r\n");
  const KernelDetailTable& k = t.kernel_details();
  ASSERT_TRUE(k.present);
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_TRUE(k.metrics.empty());
  const NpuOpRow& r = k.rows[0];
  EXPECT_EQ(r.step, 50);
  EXPECT_EQ(t.str(r.name), "trans_TransData_0");
  EXPECT_EQ(t.str(r.type), "");  // N/A is absent
  EXPECT_EQ(t.str(r.accelerator_core), "");
  EXPECT_EQ(r.start_ns, 1736405443881410320);
  EXPECT_EQ(r.dur_ns, 50621);
  EXPECT_EQ(r.wait_ns, 0);
  EXPECT_EQ(r.block_dim, 0);
  EXPECT_EQ(r.device_id, kNoId);
  EXPECT_EQ(r.task_id, kNoId);
  EXPECT_EQ(t.str(k.rows[1].accelerator_core), "HCCL");
  EXPECT_EQ(k.rows[1].start_ns, 1736405443990000001);
  EXPECT_EQ(k.rows[1].wait_ns, 3250);
  EXPECT_TRUE(t.metadata().warnings.empty());
}

TEST(KernelDetailsTest, Level1WithPmuColumnsAndTripleQuotedShapes) {
  Trace t = Kernels(
      "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),"
      "Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,"
      "Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_ratio,"
      "cube_utilization(%)\r\n"
      "50,4294967295,11053,2,Conv2D1,Conv2D,dynamic,AI_CORE,1736408883704903.918\t,313.886,96.222,16,0,YES,"
      "\"\"\"32,1,224,224,8;121,4,16,8;64\"\"\",FLOAT;FLOAT;FLOAT,NC1HWC0;FRACTAL_Z;NCHW,\"\"\"32,8,55,55,8\"\"\","
      "FLOAT,NC1HWC0,N/A,300.5,1000,0.824,79.295\r\n"
      "50,4294967295,N/A,N/A,hcom_allReduce__586_0_1,hcom_allReduce_,N/A,HCCL,1736408883800000.000\t,5.0,0,0,0,N/A,"
      "N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A\r\n");
  const KernelDetailTable& k = t.kernel_details();
  ASSERT_EQ(k.rows.size(), 2u);
  const NpuOpRow& r = k.rows[0];
  EXPECT_EQ(r.model_id, 4294967295);
  EXPECT_EQ(r.task_id, 11053);
  EXPECT_EQ(r.stream_id, 2);
  EXPECT_EQ(t.str(r.op_state), "dynamic");
  EXPECT_EQ(t.str(r.accelerator_core), "AI_CORE");
  EXPECT_EQ(r.start_ns, 1736408883704903918);
  EXPECT_EQ(r.dur_ns, 313886);
  EXPECT_EQ(r.wait_ns, 96222);
  EXPECT_EQ(r.block_dim, 16);
  EXPECT_EQ(r.mix_block_dim, 0);
  EXPECT_EQ(t.str(r.hf32_eligible), "YES");
  EXPECT_EQ(t.str(r.input_shapes), "32,1,224,224,8;121,4,16,8;64");
  EXPECT_EQ(t.str(r.input_data_types), "FLOAT;FLOAT;FLOAT");
  EXPECT_EQ(t.str(r.input_formats), "NC1HWC0;FRACTAL_Z;NCHW");
  EXPECT_EQ(t.str(r.output_shapes), "32,8,55,55,8");
  EXPECT_EQ(t.str(r.output_formats), "NC1HWC0");
  EXPECT_EQ(t.str(r.context_id), "");
  // Communication rows: Task ID / Stream ID are N/A.
  EXPECT_EQ(k.rows[1].task_id, kNoId);
  EXPECT_EQ(k.rows[1].stream_id, kNoId);

  ASSERT_EQ(k.metrics.size(), 4u);
  const NpuOpMetricColumn* mac = t.kernel_metric("aic_mac_ratio");
  ASSERT_NE(mac, nullptr);
  ASSERT_EQ(mac->values.size(), 2u);
  EXPECT_DOUBLE_EQ(mac->values[0], 0.824);
  EXPECT_TRUE(std::isnan(mac->values[1]));
  EXPECT_DOUBLE_EQ(t.kernel_metric("cube_utilization(%)")->values[0], 79.295);
  EXPECT_DOUBLE_EQ(t.kernel_metric("aic_total_cycles")->values[0], 1000);
  EXPECT_EQ(t.kernel_metric("aiv_vec_ratio"), nullptr);
  EXPECT_TRUE(t.metadata().warnings.empty());
}

TEST(KernelDetailsTest, NewerHeaderWithDeviceIdAndBlockNum) {
  Trace t = Kernels(
      "Device_id,Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
      "Duration(us),Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,Input Shapes\n"
      "3,7,1,12,4,MatMulV2_1,MatMulV2,static,MIX_AIC,1736408883704643.212\t,185.504,1.5,24,48,NO,\"\"\"8192,"
      "512\"\"\"\n");
  ASSERT_EQ(t.kernel_details().rows.size(), 1u);
  const NpuOpRow& r = t.kernel_details().rows[0];
  EXPECT_EQ(r.device_id, 3);
  EXPECT_EQ(r.step, 7);
  EXPECT_EQ(r.block_dim, 24);
  EXPECT_EQ(r.mix_block_dim, 48);
  EXPECT_EQ(t.str(r.accelerator_core), "MIX_AIC");
  EXPECT_EQ(t.str(r.input_shapes), "8192,512");
  EXPECT_TRUE(t.kernel_details().metrics.empty());
}

TEST(KernelDetailsTest, NoStepIdAndMsprofOpSummaryNames) {
  Trace t = Kernels(
      "Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),"
      "Task Wait Time(us),Block Dim,aic_l0a_read_bw(GB/s)\n"
      "1,2,3,Add_1,Add,AI_VECTOR_CORE,100.5\t,2.25,0.001,8,12.5\n");
  ASSERT_EQ(t.kernel_details().rows.size(), 1u);
  const NpuOpRow& r = t.kernel_details().rows[0];
  EXPECT_EQ(r.step, kNoId);
  EXPECT_EQ(t.str(r.name), "Add_1");
  EXPECT_EQ(t.str(r.type), "Add");
  EXPECT_EQ(t.str(r.accelerator_core), "AI_VECTOR_CORE");
  EXPECT_EQ(r.start_ns, 100500);
  EXPECT_EQ(r.dur_ns, 2250);
  EXPECT_EQ(r.wait_ns, 1);
  EXPECT_DOUBLE_EQ(t.kernel_metric("aic_l0a_read_bw(GB/s)")->values[0], 12.5);
}

TEST(KernelDetailsTest, BadCellsWarnWithRowAndKeepTheRow) {
  Trace t = Kernels("Name,Start Time(us),Block Dim\nA,12:30,x\nB,1.0,2\n");
  ASSERT_EQ(t.kernel_details().rows.size(), 2u);
  EXPECT_EQ(t.kernel_details().rows[0].start_ns, kNoId);
  EXPECT_EQ(t.kernel_details().rows[1].block_dim, 2);
  ASSERT_EQ(t.metadata().warnings.size(), 2u);
  EXPECT_EQ(t.metadata().warnings[0],
            "kernel_details.csv: row 1: Start Time(us) is not a number of microseconds: 12:30");
}

TEST(KernelDetailsTest, NegativeTimesAndRatiosOutsideZeroToOneAreUnknownWithAWarning) {
  Trace t = Kernels(
      "Name,Start Time(us),Duration(us),Wait Time(us),aic_mac_ratio,aic_mac_time(us)\n"
      "A,1.0,-5,2,7.5,-1\n"
      "B,2.0,3,-0.5,0.25,4\n");
  const KernelDetailTable& k = t.kernel_details();
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(k.rows[0].dur_ns, kNoId);
  EXPECT_EQ(k.rows[0].wait_ns, 2000);
  EXPECT_EQ(k.rows[1].dur_ns, 3000);
  EXPECT_EQ(k.rows[1].wait_ns, kNoId);
  ASSERT_EQ(k.metrics.size(), 2u);
  EXPECT_TRUE(std::isnan(k.metrics[0].values[0]));  // 7.5 is no ratio
  EXPECT_EQ(k.metrics[0].values[1], 0.25);
  const std::vector<std::string>& w = t.metadata().warnings;
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0], "kernel_details.csv: row 1: Duration(us) is negative: -5");
  EXPECT_EQ(w[1], "kernel_details.csv: row 1: aic_mac_ratio is not a ratio in [0, 1]: 7.5");
  EXPECT_EQ(w[2], "kernel_details.csv: row 2: Wait Time(us) is negative: -0.5");
}

TEST(StepTraceTimeTest, NegativeTimeIsUnknownWithAWarning) {
  Trace t = Steps("Step,Computing,Free\n50,10.5,-3\n");
  ASSERT_EQ(t.reported_step_times().size(), 1u);
  EXPECT_EQ(t.reported_step_times()[0].computing_ns, 10500);
  EXPECT_EQ(t.reported_step_times()[0].free_ns, kNoId);
  ASSERT_EQ(t.metadata().warnings.size(), 1u);
  EXPECT_EQ(t.metadata().warnings[0], "step_trace_time.csv: row 1: Free is negative: -3");
}

TEST(KernelDetailsTest, RowsWithAnotherCellCountAreDroppedWithOneWarning) {
  // A cell too many or too few would put every later value under the wrong column name.
  Trace t = Kernels("Name,Start Time(us),Duration(us),Block Dim\nA,1.0,2\nB,1.0,2,4\nC,1.0,2,4,9\nD,1,2,3,4,5\n");
  ASSERT_EQ(t.kernel_details().rows.size(), 1u);
  EXPECT_EQ(t.kernel_details().rows[0].block_dim, 4);
  ASSERT_EQ(t.metadata().warnings.size(), 1u);
  EXPECT_EQ(t.metadata().warnings[0],
            "kernel_details.csv: 3 rows with a cell count other than the header's 4 dropped (first: row 1)");
}

TEST(KernelDetailsTest, NotAKernelTableIsAnError) {
  Status status;
  ascend_csv::ReadTable("x.csv", "a,b\n1,2\n", ReadKernelDetails, &status);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("x.csv"), std::string::npos);
}

TEST(StepTraceTimeTest, CurrentHeaderExactNanoseconds) {
  Trace t = Steps(
      "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
      "Communication(Not Overlapped and Exclude Receive),Preparing\r\n"
      "50,8873.756000000001,101963.203,4028.6750000000175,105991.87800000001,25744.050000000003,136581.0,0,"
      "101963.203,17902.5\r\n");
  ASSERT_EQ(t.reported_step_times().size(), 1u);
  ascend_csv::ExpectStepTime(t.reported_step_times()[0], ascend_csv::Level1Rank0StepTime());
}

TEST(StepTraceTimeTest, DeviceIdHeaderAndOld2023HeaderAndEmptyStep) {
  Trace newer = Steps(
      "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
      "Communication(Not Overlapped and Exclude Receive),Preparing\n"
      "1,,1.5,2,3,4,5,6,7,8,9\n");
  ASSERT_EQ(newer.reported_step_times().size(), 1u);
  EXPECT_EQ(newer.reported_step_times()[0].device_id, 1);
  EXPECT_EQ(newer.reported_step_times()[0].step, kNoId);
  EXPECT_EQ(newer.reported_step_times()[0].computing_ns, 1500);
  EXPECT_EQ(newer.reported_step_times()[0].preparing_ns, 9000);

  Trace old = Steps(
      "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
      "Communication(Not Overlapped and Exclude Receive)\n"
      "2,75174.57464453117,146614.02034375005,6987.303296874976,153601.32364062502,69909.50350390615,291698.0,0,"
      "146614.02034375005\n");
  ASSERT_EQ(old.reported_step_times().size(), 1u);
  EXPECT_EQ(old.reported_step_times()[0].computing_ns, 75174575);  // .57464 us rounds up
  EXPECT_EQ(old.reported_step_times()[0].preparing_ns, kNoId);
}

}  // namespace
}  // namespace tuneprof

namespace tuneprof {
namespace {

// The estimate is made once, at the kRowsBeforeEstimate-th row, from the bytes the rows so far took.
TEST(RowsStillToComeTest, EstimatesTheRestOnceFromTheFirstRows) {
  std::string text = "Name,Start Time(us)\n";
  for (int i = 0; i < 4096; ++i)
    text += "aclnnGelu_GeluAiCore_Gelu," + std::to_string(1735689600000000 + i) + ".000\t\n";
  auto csv = CsvReader::FromText("kernel_details.csv", text);
  ASSERT_TRUE(csv.ok());
  size_t estimates = 0;
  size_t expected = 0;
  for (;;) {
    auto more = csv->Next();
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    if (const size_t rows = RowsStillToCome(*csv)) {
      ++estimates;
      expected = rows;
      EXPECT_EQ(csv->row(), kRowsBeforeEstimate);
    }
  }
  EXPECT_EQ(estimates, 1u);
  EXPECT_GE(expected, 4096u - kRowsBeforeEstimate);            // the margin covers the rows still to come
  EXPECT_LE(expected, (4096u - kRowsBeforeEstimate) * 3 / 2);  // and no more than a little past them
}

TEST(RowsStillToComeTest, NothingForATableShorterThanTheEstimatePoint) {
  auto csv = CsvReader::FromText("kernel_details.csv", "Name,Start Time(us)\na,1\nb,2\n");
  ASSERT_TRUE(csv.ok());
  for (;;) {
    auto more = csv->Next();
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    EXPECT_EQ(RowsStillToCome(*csv), 0u);
  }
}

}  // namespace
}  // namespace tuneprof

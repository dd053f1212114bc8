#include "analysis/breakdown/trace_summary.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// info's two counts: the communication kernels, the population comm counts, and the events that carry
// collective arguments; a SendRecv launched outside any collective's annotation is the first and not the second.
TEST(TraceSummaryTest, CountsCommunicationKernelsBesideCollectiveArguments) {
  HandBuiltTrace hand;
  const uint32_t all_to_all = hand.Kernel("ncclDevKernel_SendRecv", Us(0), Us(10));
  hand.Kernel("ncclDevKernel_SendRecv", Us(20), Us(10));
  hand.Kernel("ampere_sgemm_128x64_nn", Us(40), Us(10));
  TraceBuilder* b = hand.mutable_builder();
  CollectiveInfo info;
  info.event = all_to_all;
  info.collective = b->Intern("all_to_all");
  b->AddCollectiveInfo(info);
  const TraceSummary s = SummarizeTrace(hand.Finish());
  EXPECT_EQ(s.communication_kernels, 2u);
  EXPECT_EQ(s.collectives, 1u);
}

// A torch_npu rank without a timeline: its steps are step_trace_time's, named by the table the inventory
// lists, with their mean Stage + Bubble (the step the other commands read); a timeline-less rank's format
// is not that of a trace_view it lacks.
TEST(TraceSummaryTest, RankWithoutTimelineTakesItsStepsFromTheTable) {
  TraceBuilder builder("rank0_ascend_pt");
  builder.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  builder.mutable_metadata()->entries.push_back(
      MetadataEntry{"inventory.ASCEND_PROFILER_OUTPUT/step_trace_time.csv", "2 rows"});
  Trace trace = builder.Finish();
  SideTableBuilder side(&trace);
  ReportedStepTime row;
  row.step = 1;
  row.stage_ns = 100;
  row.bubble_ns = 20;
  side.AddReportedStepTime(row);
  row.step = 2;
  row.stage_ns = 140;
  row.bubble_ns = kNoId;  // no Bubble column: counts 0
  side.AddReportedStepTime(row);
  const TraceSummary s = SummarizeTrace(trace);
  EXPECT_TRUE(s.step_numbers.empty());
  EXPECT_EQ(s.table_step_numbers, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(s.steps_table, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv");
  EXPECT_EQ(s.table_step_mean_ns, 130);
}

// A rank with a timeline keeps its ProfilerStep#N steps only, whatever table it holds beside it.
TEST(TraceSummaryTest, RankWithTimelineKeepsItsOwnSteps) {
  HandBuiltTrace hand;
  hand.Kernel("MatMulV3", Us(0), Us(10));
  Trace trace = hand.Finish();
  SideTableBuilder side(&trace);
  ReportedStepTime row;
  row.step = 1;
  row.stage_ns = 100;
  side.AddReportedStepTime(row);
  const TraceSummary s = SummarizeTrace(trace);
  EXPECT_TRUE(s.table_step_numbers.empty());
  EXPECT_EQ(s.table_step_mean_ns, kNoId);
}

}  // namespace
}  // namespace tuneprof

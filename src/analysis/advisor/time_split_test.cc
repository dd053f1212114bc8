// time_split.h on a hand-built GPU trace, every part computed by hand. (The same invariants on every
// shared trace are checked in tests/golden/time_split_golden_test.cc, which can link the importers.)
#include "analysis/advisor/time_split.h"

#include <gtest/gtest.h>

#include <string_view>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// The parts of the mean step, added up: every test expects them to make the step.
double PartsSum(const TimeSplit& split) {
  double sum = 0;
  for (double part : split.part_ns) sum += part;
  return sum;
}

// The split of `trace` with its own breakdown and host operator tree, no tiny-operator limits.
TimeSplit SplitOf(const Trace& trace) {
  return SplitStepTime(trace, ComputeTimeBreakdown(trace), BuildHostOpTree(trace), TinyOpLimits{});
}

// The split of one step of 1000 us holding one kernel, `kernel`, over [start_us, start_us + dur_us).
TimeSplit SplitOneKernelStep(std::string_view kernel, double start_us, double dur_us) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel(kernel, Us(start_us), Us(dur_us));
  return SplitOf(t.Finish());
}

TEST(TimeSplit, EveryPartOfAHandBuiltStep) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, Us(100));
  t.Kernel("gemm", Us(100), Us(400));                           // 100..500 compute-bound
  t.Kernel("vectorized_elementwise_kernel", Us(500), Us(200));  // 500..700 memory-bound
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(650), Us(200), kNoId, 9);  // 650..850
  const Trace trace = t.Finish();
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  const TimeSplit split = SplitStepTime(trace, breakdown, BuildHostOpTree(trace), TinyOpLimits{});
  EXPECT_EQ(split.steps, 1u);
  EXPECT_FALSE(split.cpu_only);
  EXPECT_DOUBLE_EQ(split.step_ns, Us(1000));
  EXPECT_DOUBLE_EQ(split.compute_bound_share, 400.0 / 600);  // by self time: 400 of 600 us
  EXPECT_DOUBLE_EQ(split.part(TimePart::kComputeBound), Us(400));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kMemoryBound), Us(200));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kCommunication), Us(150));  // 700..850, the rest under compute
  EXPECT_DOUBLE_EQ(split.part(TimePart::kMemcpy), 0);
  EXPECT_DOUBLE_EQ(split.dataloader_ns, Us(100));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kData), Us(100));  // 0..100, nothing else running
  EXPECT_DOUBLE_EQ(split.part(TimePart::kHostWait), 0);    // no launches: nothing waited on the host
  EXPECT_DOUBLE_EQ(split.part(TimePart::kIdle), Us(150));  // 850..1000
  EXPECT_DOUBLE_EQ(PartsSum(split), split.step_ns);
  EXPECT_DOUBLE_EQ(split.Share(TimePart::kMemoryBound), 0.2);
}

// A kernel neither its name nor a launching operator classes is its own part, never memory-bound: the
// shares are of all the compute self time, and the parts still add up to the step.
TEST(TimeSplit, UnclassifiedKernelsAreTheirOwnPart) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("gemm", Us(100), Us(400));                           // 100..500 compute-bound
  t.Kernel("vectorized_elementwise_kernel", Us(500), Us(100));  // 500..600 memory-bound
  t.Kernel("vendor_kernel_0", Us(600), Us(400));                // 600..1000 unclassified
  const TimeSplit split = SplitOf(t.Finish());
  EXPECT_TRUE(split.compute_classes_known);
  EXPECT_DOUBLE_EQ(split.compute_bound_share, 400.0 / 900);
  EXPECT_DOUBLE_EQ(split.unclassified_share, 400.0 / 900);
  EXPECT_NEAR(split.part(TimePart::kComputeBound), Us(400), 1e-6);
  EXPECT_NEAR(split.part(TimePart::kMemoryBound), Us(100), 1e-6);
  EXPECT_NEAR(split.part(TimePart::kUnclassified), Us(400), 1e-6);
  EXPECT_NEAR(PartsSum(split), split.step_ns, 1e-6);
}

// A fused compute + communication kernel (Ascend MC2) is its own part: computing the rank runs, counted
// once, neither unclassified nor exposed communication; a plain GEMM beside it stays compute-bound.
TEST(TimeSplit, FusedCommKernelsAreTheirOwnPart) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("aclnnMatmul_MatMulV2_MatMulV2", Us(100), Us(300));                         // 100..400 compute-bound
  t.Kernel("aclnnMatmulAllReduce_MatmulAllReduce_MatmulAllReduce", Us(400), Us(200));  // 400..600 fused
  t.Kernel("aclnnMoeDistributeDispatchV2_MoeDistributeDispatchV2", Us(600), Us(100));  // 600..700 fused
  t.Kernel("vendor_kernel_0", Us(700), Us(100));                                       // 700..800 unclassified
  const TimeSplit split = SplitOf(t.Finish());
  EXPECT_TRUE(split.compute_classes_known);
  EXPECT_DOUBLE_EQ(split.fused_comm_share, 300.0 / 700);
  EXPECT_NEAR(split.part(TimePart::kFusedComm), Us(300), 1e-6);
  EXPECT_NEAR(split.part(TimePart::kComputeBound), Us(300), 1e-6);
  EXPECT_NEAR(split.part(TimePart::kUnclassified), Us(100), 1e-6);
  EXPECT_NEAR(split.part(TimePart::kMemoryBound), 0, 1e-6);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kCommunication), 0);  // the fused kernels compute: never exposed
  EXPECT_NEAR(PartsSum(split), split.step_ns, 1e-6);
}

// Without fused kernels the part is 0: a plain GEMM is never counted there.
TEST(TimeSplit, APlainGemmIsNoFusedComm) {
  const TimeSplit split = SplitOneKernelStep("gemm", 100, 400);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kFusedComm), 0);
  EXPECT_DOUBLE_EQ(split.fused_comm_share, 0);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kComputeBound), Us(400));
}

// Where no kernel has a class, the computing is all unclassified, not unclassed: the kernels are listed,
// their kind is what is unknown.
TEST(TimeSplit, OnlyUnclassifiedKernels) {
  const TimeSplit split = SplitOneKernelStep("vendor_kernel_0", 0, 600);
  EXPECT_TRUE(split.compute_classes_known);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kUnclassified), Us(600));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kComputeBound), 0);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kMemoryBound), 0);
}

// A torch_npu rank with only step_trace_time.csv: no operators class its Computing, so all of it is
// unclassified (neither compute- nor memory-bound), and its step is torch_npu's Stage + Bubble.
TEST(TimeSplit, ComputingNoOperatorClassesIsUnclassified) {
  ReportedStepTime row;
  row.step = 1;
  row.computing_ns = Us(300);
  row.communication_not_overlapped_ns = Us(500);
  row.free_ns = Us(200);
  row.stage_ns = Us(600);
  row.bubble_ns = Us(400);
  row.preparing_ns = Us(900);
  const Trace trace = hand_built::ReportedStepOnlyRank(row);
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  const TimeSplit split = SplitStepTime(trace, breakdown, BuildHostOpTree(trace), TinyOpLimits{});
  EXPECT_FALSE(split.compute_classes_known);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kUnclassified), Us(300));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kMemoryBound), 0);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kComputeBound), 0);
  EXPECT_DOUBLE_EQ(split.step_ns, Us(1000));  // Stage + Bubble; Preparing is before the step
  EXPECT_NEAR(PartsSum(split), split.step_ns, 1e-6);
}

TEST(TimeSplit, CpuOnlyStepWithDispatchAndDataLoader) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kHostOp, "aten::mm", 0, Us(400));          // compute-bound
  t.Host(EventKind::kHostOp, "aten::add", Us(400), Us(5));     // 5 us < 10 us, no shapes: dispatch overhead
  t.Host(EventKind::kHostOp, "aten::relu", Us(500), Us(200));  // memory-bound
  t.Host(EventKind::kUserAnnotation, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", Us(800), Us(100));
  t.Host(EventKind::kHostOp, "aten::copy_", Us(810), Us(40));  // run for the DataLoader: input-pipeline time
  const Trace trace = t.Finish();
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  ASSERT_EQ(breakdown.work_on, WorkSource::kCpu);
  const TimeSplit split = SplitStepTime(trace, breakdown, BuildHostOpTree(trace), TinyOpLimits{});
  EXPECT_TRUE(split.cpu_only);
  EXPECT_DOUBLE_EQ(split.step_ns, Us(1000));
  EXPECT_DOUBLE_EQ(split.dispatch_ns, Us(5));
  EXPECT_DOUBLE_EQ(split.dataloader_ns, Us(100));
  EXPECT_DOUBLE_EQ(split.compute_bound_share, 400.0 / 600);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kComputeBound), Us(400));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kMemoryBound), Us(200));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kData), Us(100));
  // The rest of the step is the framework's: gaps between operators (395 us) and the tiny op (5 us),
  // less the DataLoader's 100 us.
  EXPECT_DOUBLE_EQ(split.part(TimePart::kHostWait), Us(300));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kIdle), 0);
}

TEST(TimeSplit, CpuOnlyStepWaitingForAGlooCollectiveIsCommunication) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kHostOp, "aten::mm", 0, Us(300));  // compute-bound, hides the collective's start
  // The collective on gloo's worker thread, 200..800; the step's thread meanwhile computes to 300, waits
  // inside a collective call its AccumulateGrad holds (300..600) and dispatches a tiny op (650..655).
  t.HostThread(7, EventKind::kUserAnnotation, "gloo:all_reduce", Us(200), Us(600));
  t.Host(EventKind::kHostOp, "autograd::engine::evaluate_function: AccumulateGrad", Us(300), Us(300));
  t.Host(EventKind::kHostOp, "c10d::allreduce_", Us(300), Us(300));
  t.Host(EventKind::kHostOp, "aten::add", Us(650), Us(5));     // 5 us < 10 us, no shapes: dispatch
  t.Host(EventKind::kHostOp, "aten::relu", Us(800), Us(100));  // memory-bound
  const Trace trace = t.Finish();
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  ASSERT_EQ(breakdown.work_on, WorkSource::kCpu);
  const TimeSplit split = SplitStepTime(trace, breakdown, BuildHostOpTree(trace), TinyOpLimits{});
  EXPECT_DOUBLE_EQ(split.part(TimePart::kComputeBound), Us(300));
  EXPECT_DOUBLE_EQ(split.part(TimePart::kMemoryBound), Us(100));    // the wait inside AccumulateGrad is none of it
  EXPECT_DOUBLE_EQ(split.part(TimePart::kCommunication), Us(500));  // 300..800, the tiny op's 5 us included
  EXPECT_DOUBLE_EQ(split.dispatch_ns, 0);
  EXPECT_DOUBLE_EQ(split.part(TimePart::kHostWait), Us(100));  // 900..1000
  EXPECT_DOUBLE_EQ(PartsSum(split), split.step_ns);
}

TEST(TimeSplit, AnEmptyTraceSplitsNothing) {
  HandBuiltTrace t;
  const Trace trace = t.Finish();
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  const TimeSplit split = SplitStepTime(trace, breakdown, BuildHostOpTree(trace), TinyOpLimits{});
  EXPECT_EQ(split.step_ns, 0);
  for (double part : split.part_ns) EXPECT_EQ(part, 0);
  EXPECT_EQ(split.Share(TimePart::kIdle), 0);  // no division by a zero step
}

TEST(TimeSplit, DataLoaderRangeNames) {
  EXPECT_TRUE(IsDataLoaderRange("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
  EXPECT_TRUE(IsDataLoaderRange("my_dataloader_fetch"));
  EXPECT_FALSE(IsDataLoaderRange("ProfilerStep#3"));
  EXPECT_FALSE(IsDataLoaderRange("aten::copy_"));
}

}  // namespace
}  // namespace tuneprof

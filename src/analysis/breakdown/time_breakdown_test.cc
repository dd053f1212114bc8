#include "analysis/breakdown/time_breakdown.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

void ExpectPartsAddUpToWall(const StepBreakdown& s) {
  EXPECT_EQ(s.wall_ns, s.computing_ns + s.communication_not_overlapped_ns + s.memcpy_ns + s.other_ns + s.free_ns);
}

// A torch_npu rank without device events falls back to step_trace_time.csv; the warning names the cause.
// `host_work`: the cut left host events (a cut before the first device event); without any, the timeline
// was set aside whole by the importer.
std::string ReportedOnlyWarning(bool cut_off, bool host_work = true) {
  HandBuiltTrace hand;
  hand.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  hand.mutable_metadata()->truncated = cut_off;
  if (cut_off && host_work) hand.Host(EventKind::kHostOp, "aten::mm", Us(1), Us(5));
  ReportedStepTime step;
  step.step = 1;
  step.computing_ns = Us(80);
  step.free_ns = Us(20);
  Trace trace = hand.Finish();
  SideTableBuilder(&trace).AddReportedStepTime(step);
  const RankBreakdown b = ComputeTimeBreakdown(trace);
  EXPECT_EQ(b.steps.size(), 1u);
  return b.warnings.empty() ? "" : b.warnings.back();
}

TEST(TimeBreakdownTest, ReportedStepsSayWhyThereIsNoTimeline) {
  EXPECT_NE(ReportedOnlyWarning(false).find("no trace_view.json or profiler database"), std::string::npos);
  const std::string cut = ReportedOnlyWarning(true);
  EXPECT_NE(cut.find("cut off before its first device event"), std::string::npos) << cut;
  EXPECT_EQ(cut.find("no trace_view.json"), std::string::npos) << cut;
  const std::string set_aside = ReportedOnlyWarning(true, false);
  EXPECT_NE(set_aside.find("cut off before the end of its steps and set aside"), std::string::npos) << set_aside;
  EXPECT_EQ(set_aside.find("no trace_view.json"), std::string::npos) << set_aside;
}

// Makes `hand` a torch_npu timeline cut short, with step 1 over [0, 100 us) and a 50 us kernel it launched.
void StartCutNpuTimeline(HandBuiltTrace* hand) {
  hand->mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  hand->mutable_metadata()->truncated = true;
  hand->Step(1, Us(0), Us(100));
  hand->LaunchedKernel("k", Us(1), Us(10), Us(50), 1);
}

// A torch_npu timeline cut after some device work but before the end of the steps step_trace_time.csv
// holds is read from that file, as a rank without a timeline is, with a warning that says so.
TEST(TimeBreakdownTest, CutTimelineWithFewerStepsThanReportedFallsBackToReported) {
  HandBuiltTrace hand;
  StartCutNpuTimeline(&hand);
  Trace trace = hand.Finish();
  SideTableBuilder side(&trace);
  for (int64_t number : {1, 2, 3}) {
    ReportedStepTime step;
    step.step = number;
    step.computing_ns = Us(80);
    step.free_ns = Us(20);
    step.stage_ns = Us(100);
    side.AddReportedStepTime(step);
  }
  const RankBreakdown b = ComputeTimeBreakdown(trace);
  ASSERT_EQ(b.steps.size(), 3u);
  EXPECT_EQ(b.definitions, StepDefinitions::kTorchNpu);
  EXPECT_EQ(b.total.computing_ns, Us(240));
  EXPECT_TRUE(b.incomplete_steps.empty());
  ASSERT_FALSE(b.warnings.empty());
  EXPECT_NE(b.warnings.back().find("cut off with 0 complete steps of the 3 that step_trace_time.csv holds"),
            std::string::npos)
      << b.warnings.back();
}

// A cut that keeps every step torch_npu reported keeps the timeline's richer figures.
TEST(TimeBreakdownTest, CutTimelineWithEveryReportedStepKeepsTheTimeline) {
  HandBuiltTrace hand;
  StartCutNpuTimeline(&hand);
  // Files end where they are cut: the events read last bound the cut, here past the step's end.
  for (int64_t i = 0; i < 300; ++i) {
    hand.LaunchedKernel("after", Us(1000 + 100 * i), Us(1010 + 100 * i), Us(50), 2 + i);
  }
  Trace trace = hand.Finish();
  ReportedStepTime step;
  step.step = 1;
  step.computing_ns = Us(80);
  SideTableBuilder(&trace).AddReportedStepTime(step);
  const RankBreakdown b = ComputeTimeBreakdown(trace);
  ASSERT_EQ(b.steps.size(), 1u);
  EXPECT_EQ(b.steps[0].computing_ns, Us(50));
}

TEST(TimeBreakdownTest, TraceWithoutStepsIsOneWindow) {
  HandBuiltTrace hand;
  hand.Kernel("sgemm", Us(0), Us(10));
  hand.Kernel("ncclDevKernel_AllReduce", Us(5), Us(15));          // 5 us under compute
  hand.Device(EventKind::kMemcpy, "Memcpy DtoH", Us(18), Us(7));  // 2 us under communication
  hand.Device(EventKind::kSync, "Event Sync", Us(30), Us(2));
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());

  ASSERT_EQ(rank.steps.size(), 1u);
  const StepBreakdown& s = rank.steps[0];
  EXPECT_FALSE(s.step.has_value());
  EXPECT_EQ(s.device_events, 4u);
  EXPECT_EQ(s.wall_ns, Us(32));
  EXPECT_EQ(s.computing_ns, Us(10));
  EXPECT_EQ(s.communication_ns, Us(15));
  EXPECT_EQ(s.overlapped_ns, Us(5));
  EXPECT_EQ(s.communication_not_overlapped_ns, Us(10));
  EXPECT_EQ(s.memory_ns, Us(7));
  EXPECT_EQ(s.memcpy_ns, Us(5));
  EXPECT_EQ(s.other_ns, Us(2));
  EXPECT_EQ(s.free_ns, Us(5));  // [25, 30)
  ExpectPartsAddUpToWall(s);
}

// A trace without step markers is told how to mark them in its producer's terms: prof.step() where PyTorch's
// profiler ran, not on an Ascend capture without a PyTorch operator (msprof alone).
TEST(TimeBreakdownTest, NoStepsAdviceFitsTheProducer) {
  const auto advice = [](TraceFormat format, bool host_op) {
    HandBuiltTrace hand;
    hand.mutable_metadata()->format = format;
    if (host_op) hand.Host(EventKind::kHostOp, "aten::mm", Us(0), Us(5));
    hand.Kernel("MatMul", Us(1), Us(10));
    const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
    for (const std::string& w : rank.warnings) {
      if (w.find("no steps marked") != std::string::npos) return w;
    }
    return std::string();
  };
  EXPECT_NE(advice(TraceFormat::kKineto, false).find("call prof.step()"), std::string::npos);
  EXPECT_NE(advice(TraceFormat::kTorchNpuTraceView, true).find("call prof.step()"), std::string::npos);
  const std::string msprof = advice(TraceFormat::kTorchNpuTraceView, false);
  EXPECT_EQ(msprof.find("prof.step()"), std::string::npos) << msprof;
  EXPECT_NE(msprof.find("msprof alone"), std::string::npos) << msprof;
}

TEST(TimeBreakdownTest, OverlappingKernelsOnTwoStreamsAreCountedOnce) {
  HandBuiltTrace hand;
  hand.Device(EventKind::kKernel, "a", Us(0), Us(10), kNoId, /*stream=*/7);
  hand.Device(EventKind::kKernel, "b", Us(4), Us(10), kNoId, /*stream=*/8);
  const StepBreakdown s = ComputeTimeBreakdown(hand.Finish()).steps.at(0);
  EXPECT_EQ(s.computing_ns, Us(14));
  EXPECT_EQ(s.free_ns, 0);
}

// A kernel belongs to the step whose host range launched it, even when it runs after that range.
TEST(TimeBreakdownTest, KernelsFollowTheStepThatLaunchedThem) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(100));
  hand.Step(2, Us(100), Us(100));
  hand.LaunchedKernel("late_kernel_of_step_1", Us(50), Us(120), Us(30), 1);
  hand.LaunchedKernel("kernel_of_step_2", Us(110), Us(150), Us(10), 2);
  hand.Kernel("unlinked_kernel", Us(170), Us(10));  // no launch: its own start places it
  hand.LaunchedKernel("launched_after_every_step", Us(250), Us(260), Us(10), 3);
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());

  ASSERT_EQ(rank.steps.size(), 2u);
  EXPECT_EQ(rank.device_events, 4u);
  EXPECT_EQ(rank.device_events_outside_steps, 1u);
  const StepBreakdown& first = rank.steps[0];
  EXPECT_EQ(first.step, 1);
  EXPECT_EQ(first.host_start_ns, Us(0));
  EXPECT_EQ(first.host_end_ns, Us(100));
  EXPECT_EQ(first.device_events, 1u);
  EXPECT_EQ(first.device_start_ns, Us(120));
  EXPECT_EQ(first.wall_ns, Us(30));
  EXPECT_EQ(first.computing_ns, Us(30));
  const StepBreakdown& second = rank.steps[1];
  EXPECT_EQ(second.step, 2);
  EXPECT_EQ(second.device_events, 2u);
  EXPECT_EQ(second.wall_ns, Us(30));  // [150, 180)
  EXPECT_EQ(second.computing_ns, Us(20));
  EXPECT_EQ(second.free_ns, Us(10));
  ExpectPartsAddUpToWall(first);
  ExpectPartsAddUpToWall(second);
}

// A busy device still runs the warm-up steps' kernels when the profiler starts recording: their launches
// are not in the trace, and their correlation ids are below every recorded call's.
TEST(TimeBreakdownTest, WorkLaunchedBeforeTheTraceIsNoSteps) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(100));
  hand.Kernel("warm_up_kernel", Us(5), Us(40), 7);  // correlation 7 < 10: launched before the trace
  hand.LaunchedKernel("kernel_of_step_1", Us(10), Us(50), Us(20), 10);
  hand.Kernel("unlinked_later_kernel", Us(80), Us(10), 12);  // above: its own start places it
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
  ASSERT_EQ(rank.steps.size(), 1u);
  EXPECT_EQ(rank.device_events_outside_steps, 1u);
  EXPECT_EQ(rank.steps[0].device_events, 2u);
  EXPECT_EQ(rank.steps[0].device_start_ns, Us(50));
  EXPECT_EQ(rank.steps[0].wall_ns, Us(40));
}

// The host ran ahead of the device: the step takes its device span, not its short host range.
TEST(TimeBreakdownTest, StepTimeIsTheLongerOfHostRangeAndDeviceSpan) {
  StepBreakdown step;
  step.wall_ns = Us(300);
  EXPECT_EQ(StepTimeNs(step, StepDefinitions::kTuneprof), Us(300));  // no host range
  step.host_start_ns = Us(0);
  step.host_end_ns = Us(100);
  EXPECT_EQ(StepTimeNs(step, StepDefinitions::kTuneprof), Us(300));
  step.host_end_ns = Us(500);
  EXPECT_EQ(StepTimeNs(step, StepDefinitions::kTuneprof), Us(500));
}

// torch_npu's step is its Stage + Bubble (the wall), with or without a timeline: the host range also holds
// Preparing, which torch_npu keeps out of the step, so a longer host range does not lengthen it.
TEST(TimeBreakdownTest, TorchNpuStepIsStagePlusBubbleWhateverTheHostRange) {
  StepBreakdown step;
  step.wall_ns = Us(300);
  step.bubble_ns = Us(100);
  step.preparing_ns = Us(200);
  EXPECT_EQ(StepTimeNs(step, StepDefinitions::kTorchNpu), Us(300));
  step.host_start_ns = Us(0);
  step.host_end_ns = Us(500);
  EXPECT_EQ(StepTimeNs(step, StepDefinitions::kTorchNpu), Us(300));
}

// DistributedDataParallel on gloo over CUDA tensors: the all-reduce runs on a host worker thread while
// the device waits; that wait is communication, and the range is no device event.
TEST(TimeBreakdownTest, HostCollectivesBesideDeviceWorkAreCommunication) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(1000));
  hand.LaunchedKernel("gemm", Us(0), Us(10), Us(100), 1);
  hand.HostThread(2, EventKind::kUserAnnotation, "gloo:all_reduce", Us(60), Us(500));
  hand.LaunchedKernel("gemm", Us(560), Us(570), Us(100), 2);
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
  EXPECT_EQ(rank.work_on, WorkSource::kDevice);
  EXPECT_EQ(rank.device_events, 2u);
  const StepBreakdown& s = rank.steps.at(0);
  EXPECT_EQ(s.device_events, 2u);
  EXPECT_EQ(s.communication_ns, Us(500));
  EXPECT_EQ(s.overlapped_ns, Us(50));  // [60, 110) under the first gemm
  EXPECT_EQ(s.communication_not_overlapped_ns, Us(450));
  EXPECT_EQ(s.computing_ns, Us(200));
  EXPECT_EQ(s.free_ns, s.wall_ns - Us(200) - Us(450));
  ExpectPartsAddUpToWall(s);
}

TEST(TimeBreakdownTest, StepWithoutDeviceWorkIsReportedEmpty) {
  HandBuiltTrace hand;
  hand.Step(7, Us(0), Us(100));
  hand.Host(EventKind::kHostOp, "aten::add", Us(10), Us(5));
  hand.Kernel("after_the_step", Us(200), Us(5));  // the trace has device work, just not in the step
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
  EXPECT_EQ(rank.work_on, WorkSource::kDevice);
  EXPECT_EQ(rank.device_events_outside_steps, 1u);
  ASSERT_EQ(rank.steps.size(), 1u);
  EXPECT_EQ(rank.steps[0].step, 7);
  EXPECT_EQ(rank.steps[0].device_events, 0u);
  EXPECT_EQ(rank.steps[0].wall_ns, 0);
  EXPECT_EQ(rank.steps[0].device_start_ns, kNoId);
}

// The profiler stopped in the last step: it ran no device work, so it measures the profiler, and its
// short host range would pull the mean step down. A step without work between working ones stays.
TEST(TimeBreakdownTest, TrailingStepWithoutDeviceWorkIsIncomplete) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(100));
  hand.LaunchedKernel("kernel_of_step_1", Us(10), Us(20), Us(50), 1);
  hand.Step(2, Us(100), Us(100));  // idle, but followed by work: a real step
  hand.Step(3, Us(200), Us(100));
  hand.LaunchedKernel("kernel_of_step_3", Us(210), Us(220), Us(50), 2);
  hand.Step(4, Us(300), Us(49));
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
  ASSERT_EQ(rank.steps.size(), 3u);
  EXPECT_EQ(rank.steps[1].step, 2);
  ASSERT_EQ(rank.incomplete_steps.size(), 1u);
  EXPECT_EQ(rank.incomplete_steps[0].step, 4);
  ASSERT_EQ(rank.warnings.size(), 1u);
  EXPECT_NE(rank.warnings[0].find("steps 4 at the end of the trace ran no device work"), std::string::npos)
      << rank.warnings[0];
  EXPECT_NE(rank.warnings[0].find("profiler stopped"), std::string::npos);
}

TEST(TimeBreakdownTest, GpuAnnotationsDoNotCountAsWork) {
  HandBuiltTrace hand;
  hand.Device(EventKind::kGpuAnnotation, "forward", Us(0), Us(100));
  hand.Kernel("k", Us(40), Us(10));
  const StepBreakdown s = ComputeTimeBreakdown(hand.Finish()).steps.at(0);
  EXPECT_EQ(s.device_events, 1u);
  EXPECT_EQ(s.wall_ns, Us(10));
}

TEST(TimeBreakdownTest, CommunicationFullyHiddenUnderCompute) {
  HandBuiltTrace hand;
  hand.Kernel("sgemm", Us(0), Us(100));
  hand.Kernel("ncclKernel_AllReduce", Us(10), Us(20));
  hand.Kernel("ncclKernel_AllReduce", Us(50), Us(20));
  const StepBreakdown s = ComputeTimeBreakdown(hand.Finish()).steps.at(0);
  EXPECT_EQ(s.communication_ns, Us(40));
  EXPECT_EQ(s.overlapped_ns, Us(40));
  EXPECT_EQ(s.communication_not_overlapped_ns, 0);
  ExpectPartsAddUpToWall(s);
}

// Events on any process and thread, for what HandBuiltTrace's fixed host and GPU cannot express.
class FreeFormTrace {
 public:
  FreeFormTrace() : builder_("free-form.json") { builder_.mutable_metadata()->format = TraceFormat::kKineto; }

  void Add(int64_t pid, int64_t tid, EventKind kind, std::string_view name, int64_t ts_ns, int64_t dur_ns) {
    EventRecord record;
    record.ts_ns = ts_ns;
    record.dur_ns = dur_ns;
    record.track = builder_.TrackFor(ProcessKey{pid, false}, ProcessKey{tid, false});
    record.name = builder_.Intern(name);
    record.kind = kind;
    builder_.AddEvent(record);
  }
  Trace Finish() { return builder_.Finish(); }

 private:
  TraceBuilder builder_;
};

TEST(TimeBreakdownTest, TotalSumsTheSteps) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(100));
  hand.Step(2, Us(100), Us(100));
  hand.LaunchedKernel("a", Us(10), Us(20), Us(30), 1);
  hand.LaunchedKernel("ncclKernel_AllReduce", Us(20), Us(40), Us(20), 2);
  hand.LaunchedKernel("b", Us(110), Us(120), Us(10), 3);
  hand.LaunchedKernel("c", Us(115), Us(140), Us(10), 4);
  const RankBreakdown rank = ComputeTimeBreakdown(hand.Finish());
  ASSERT_EQ(rank.steps.size(), 2u);
  const StepBreakdown& t = rank.total;
  EXPECT_FALSE(t.step.has_value());
  EXPECT_EQ(t.wall_ns, Us(40) + Us(30));
  EXPECT_EQ(t.computing_ns, Us(50));
  EXPECT_EQ(t.communication_ns, Us(20));
  EXPECT_EQ(t.overlapped_ns, Us(10));
  EXPECT_EQ(t.free_ns, Us(10));
  EXPECT_EQ(t.device_events, 4u);
  EXPECT_EQ(t.device_start_ns, Us(20));
  EXPECT_EQ(t.device_end_ns, Us(150));
  ExpectPartsAddUpToWall(t);
  EXPECT_TRUE(rank.devices.empty());  // one device: the rank's steps are that device's
}

// Two GPUs of one rank: the rank's steps put them on one timeline; each device also gets its own.
TEST(TimeBreakdownTest, SeveralDevicesAreAlsoMeasuredApart) {
  FreeFormTrace trace;
  trace.Add(/*pid=*/0, /*tid=*/7, EventKind::kKernel, "a", Us(0), Us(10));
  trace.Add(/*pid=*/1, /*tid=*/7, EventKind::kKernel, "b", Us(5), Us(10));
  trace.Add(/*pid=*/1, /*tid=*/7, EventKind::kKernel, "ncclKernel_AllReduce", Us(30), Us(10));
  const RankBreakdown rank = ComputeTimeBreakdown(trace.Finish());
  EXPECT_EQ(rank.device_count, 2u);
  EXPECT_EQ(rank.steps.at(0).computing_ns, Us(15));
  EXPECT_EQ(rank.steps.at(0).wall_ns, Us(40));
  ASSERT_EQ(rank.devices.size(), 2u);
  EXPECT_EQ(rank.devices[0].id, 0);
  EXPECT_EQ(rank.devices[0].type, DeviceType::kGpu);
  EXPECT_EQ(rank.devices[0].steps.at(0).wall_ns, Us(10));
  EXPECT_EQ(rank.devices[0].total.computing_ns, Us(10));
  EXPECT_EQ(rank.devices[1].id, 1);
  EXPECT_EQ(rank.devices[1].steps.at(0).wall_ns, Us(35));
  EXPECT_EQ(rank.devices[1].steps.at(0).communication_ns, Us(10));
  EXPECT_EQ(rank.devices[1].steps.at(0).free_ns, Us(15));
}

// CPU-only gloo DDP: the gloo worker's range is communication, the main thread's operators compute.
TEST(TimeBreakdownTest, CpuOnlyTraceMeasuresHostOperatorsAndGlooRanges) {
  FreeFormTrace trace;
  constexpr int64_t kPid = 100, kMain = 1, kGlooWorker = 2;
  trace.Add(kPid, kMain, EventKind::kHostOp, "aten::mm", Us(0), Us(50));
  trace.Add(kPid, kMain, EventKind::kHostOp, "aten::add", Us(10), Us(5));         // nested: counted once
  trace.Add(kPid, kMain, EventKind::kHostOp, "c10d::allreduce_", Us(50), Us(2));  // queues the work
  trace.Add(kPid, kGlooWorker, EventKind::kUserAnnotation, "gloo:all_reduce", Us(40), Us(40));
  trace.Add(kPid, kGlooWorker, EventKind::kHostOp, "aten::copy_", Us(45), Us(5));  // part of the collective
  trace.Add(kPid, kMain, EventKind::kUserAnnotation, "forward", Us(0), Us(100));   // a range, not work
  // The step's thread waits inside a collective call that an autograd operator holds: no compute.
  trace.Add(kPid, kMain, EventKind::kHostOp, "autograd::engine::evaluate_function: AccumulateGrad", Us(60), Us(10));
  trace.Add(kPid, kMain, EventKind::kHostOp, "c10d::allreduce_", Us(62), Us(6));
  trace.Add(kPid, kMain, EventKind::kHostOp, "aten::relu", Us(90), Us(10));
  const RankBreakdown rank = ComputeTimeBreakdown(trace.Finish());
  EXPECT_EQ(rank.work_on, WorkSource::kCpu);
  EXPECT_EQ(rank.device_events, 7u);  // mm, add, AccumulateGrad, relu; gloo:all_reduce and the two calls
  const StepBreakdown& s = rank.steps.at(0);
  EXPECT_EQ(s.computing_ns, Us(64));      // [0, 50], [60, 62], [68, 70], [90, 100]
  EXPECT_EQ(s.communication_ns, Us(40));  // [40, 80]: the calls lie inside the gloo range, counted once
  EXPECT_EQ(s.overlapped_ns, Us(14));     // [40, 50], [60, 62], [68, 70]
  EXPECT_EQ(s.communication_not_overlapped_ns, Us(26));
  EXPECT_EQ(s.wall_ns, Us(100));
  EXPECT_EQ(s.free_ns, Us(10));
}

}  // namespace
}  // namespace tuneprof

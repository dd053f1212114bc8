// fusion.mined_sequence on generated kernel_details and Kineto kernels: a known repeated sequence found with
// its occurrences, time and bound; silence below the repeat count, when neither host- nor MTE-bound, and
// NPU wording only on NPU runs; the user's source line named where the trace has Python frames.
#include <gtest/gtest.h>

#include <string>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

constexpr std::string_view kMinedSequenceId = "fusion.mined_sequence";

// kernel_details rows on one stream, each `gap_us` after the one before.
class Details {
 public:
  explicit Details(Trace* trace) : side_(trace) {
    side_.StartKernelDetails();
    mte2_ = side_.KernelMetricColumn("aiv_mte2_ratio");
  }

  void Add(std::string_view type, double dur_us, double gap_us, double mte2 = 0.1) {
    next_us_ += gap_us;
    NpuOpRow row = npu_step::DetailRow(&side_, std::string(type) + "_op", type, "AI_VECTOR_CORE", next_us_, dur_us);
    row.stream_id = 2;
    next_us_ += dur_us;
    side_.SetKernelMetric(mte2_, side_.AddKernelDetail(row), mte2);
  }

 private:
  SideTableBuilder side_;
  uint32_t mte2_ = 0;
  double next_us_ = 0;
};

// `repeats` x (MatMulV3 -> Add -> RmsNorm), a different operator after each, plus one long unrelated task.
Trace Repeated(int repeats, double gap_us, double mte2) {
  Trace trace = npu_step::NpuStep();
  Details d(&trace);
  for (int i = 0; i < repeats; ++i) {
    d.Add("MatMulV3", 30, gap_us, mte2);
    d.Add("Add", 10, gap_us, mte2);
    d.Add("RmsNorm", 20, gap_us, mte2);
    d.Add("Other" + std::to_string(i), 5, 1);
  }
  d.Add("Conv2D", 500, 1);
  return trace;
}

TEST(MinedSequences, AHostBoundSequenceOnAscend) {
  const Trace trace = Repeated(6, 50, 0.1);
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kMinedSequenceId);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Number(*f, "sequences"), 1);
  // 6 x (30 + 10 + 20) us of kernels; spans 6 x 160 us, gaps 6 x 100 us (62 %).
  EXPECT_DOUBLE_EQ(Number(*f, "sequence_us_per_step"), 360);
  EXPECT_NE(f->title.find("MatMulV3 -> Add -> RmsNorm x6"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("host-bound, 62 % gaps"), std::string::npos) << f->title;
  EXPECT_NEAR(f->uncapped_gain_ns, Us(600), 1);
  EXPECT_EQ(f->saves_from, TimePart::kHostWait);
  EXPECT_NE(Text(*f, "top_sequences").find("graph mode"), std::string::npos) << Text(*f, "top_sequences");
}

TEST(MinedSequences, AnMteBoundSequenceOnAscend) {
  const Trace trace = Repeated(5, 0, 0.9);
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kMinedSequenceId);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("MTE-bound, 90 % MTE"), std::string::npos) << f->title;
  EXPECT_EQ(f->saves_from, TimePart::kMemoryBound);
  EXPECT_NEAR(f->uncapped_gain_ns, Us(5 * (60 - 30)), 1);  // each occurrence less its MatMulV3
}

TEST(MinedSequences, QuietBelowTheCountOrWhenNeitherBound) {
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(Repeated(4, 50, 0.1)), kMinedSequenceId), nullptr);
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(Repeated(8, 0, 0.1)), kMinedSequenceId), nullptr);
}

TEST(MinedSequences, ThresholdsComeFromTheConfig) {
  auto config = AdvisorConfig::Parse(
      R"({"schema": "tuneprof.advisor_config/1", "thresholds": {"mined_sequence_min_occurrences": 7}})", "test");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(Repeated(6, 50, 0.1), *config), kMinedSequenceId), nullptr);
}

// Kineto: kernels named by the operator that launched them, inside the user's Python frame.
Trace GpuRun(int repeats) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(100000));
  int64_t at = Us(10), correlation = 1;
  for (int i = 0; i < repeats; ++i) {
    const int64_t frame_start = at;
    for (std::string_view op : {"aten::mul", "aten::add", "aten::tanh"}) {
      t.Host(EventKind::kHostOp, op, at, Us(20));
      t.Launch(at + Us(5), correlation);
      t.Kernel(std::string(op.substr(6)) + "_kernel", at + Us(10), Us(5), correlation);
      ++correlation;
      at += Us(40);
    }
    t.Host(EventKind::kPythonFunction, "main.py(375): train", frame_start - Us(1), at - frame_start);
    t.Kernel("gemm_" + std::to_string(i), at, Us(200));
    at += Us(300);
  }
  return t.Finish();
}

TEST(MinedSequences, GpuKernelsNamedByTheirOperatorsWithTheirSourceLine) {
  const Trace trace = GpuRun(5);
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kMinedSequenceId);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("aten::mul -> aten::add -> aten::tanh x5"), std::string::npos) << f->title;
  const std::string listed = Text(*f, "top_sequences");
  EXPECT_NE(listed.find("at main.py(375): train x5"), std::string::npos) << listed;
  EXPECT_NE(listed.find("torch.compile"), std::string::npos) << listed;
  for (std::string_view npu : {"Ascend", "NPU", "torch_npu", "MTE"}) {
    EXPECT_EQ(f->title.find(npu), std::string::npos) << f->title;
    EXPECT_EQ(listed.find(npu), std::string::npos) << listed;
    EXPECT_EQ(f->strategy.find(npu), std::string::npos) << f->strategy;
  }
}

TEST(MinedSequences, ALongPeriodicStreamStaysBounded) {
  Trace trace = npu_step::NpuStep();
  Details d(&trace);
  const char* cycle[] = {"A", "B", "C", "D", "E", "F", "G"};
  for (int i = 0; i < 140'000; ++i) d.Add(cycle[i % 7], 5, 10);
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kMinedSequenceId);
  ASSERT_NE(f, nullptr);
  EXPECT_LE(Number(*f, "sequences"), 20);
}

// An NPU run without kernel_details: tasks named by their operators; a sequence the API-replacement table
// knows is routed to its fused API.
TEST(MinedSequences, AKnownSequenceOnNpuIsRoutedToItsFusedApi) {
  HandBuiltTrace t;
  npu_step::StartNpuStep(&t);
  int64_t at = Us(10), correlation = 1;
  for (int i = 0; i < 6; ++i) {
    for (std::string_view op : {"aten::add", "aten::layer_norm"}) {
      t.Host(EventKind::kHostOp, op, at, Us(20));
      t.Launch(at + Us(5), correlation);
      t.Kernel(std::string(op.substr(6)) + "_task", at + Us(10), Us(5), correlation);
      ++correlation;
      at += Us(40);
    }
    t.Kernel("Conv2D_" + std::to_string(i), at, Us(100));
    at += Us(200);
  }
  const Trace trace = t.Finish();
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kMinedSequenceId);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(Text(*f, "top_sequences").find("aten::add -> aten::layer_norm x6"), std::string::npos);
  EXPECT_NE(Text(*f, "top_sequences").find("route: fused API torch_npu.npu_add_layer_norm"), std::string::npos)
      << Text(*f, "top_sequences");
}

// A torch_npu rank read from its summaries alone: no timeline, so no launch gaps to measure.
TEST(MinedSequences, NoHostBoundWithoutAHostTimeline) {
  HandBuiltTrace t;
  t.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  Trace trace = t.Finish();
  Details d(&trace);
  for (int i = 0; i < 6; ++i) {
    d.Add("MatMulV3", 30, 50);
    d.Add("Add", 10, 50);
    d.Add("RmsNorm", 20, 50);
    d.Add("Other" + std::to_string(i), 5, 1);
  }
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(trace), kMinedSequenceId), nullptr);
}

constexpr int64_t kOtherStream = 9;

// GpuRun's sequence, its gaps covered by `filler` kernels on another stream.
Trace GpuRunCovered(std::string_view filler) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(100000));
  int64_t at = Us(10), correlation = 1;
  for (int i = 0; i < 5; ++i) {
    for (std::string_view op : {"aten::mul", "aten::add", "aten::tanh"}) {
      t.Host(EventKind::kHostOp, op, at, Us(20));
      t.Launch(at + Us(5), correlation);
      t.Kernel(std::string(op.substr(6)) + "_kernel", at + Us(10), Us(5), correlation);
      t.Device(EventKind::kKernel, filler, at + Us(15), Us(35), kNoId, kOtherStream);
      ++correlation;
      at += Us(40);
    }
    t.Kernel("gemm_" + std::to_string(i), at, Us(200));
    at += Us(300);
  }
  return t.Finish();
}

TEST(MinedSequences, GapsOtherStreamsOrCollectivesFillAreNoLaunchGaps) {
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(GpuRunCovered("other_stream_kernel")), kMinedSequenceId), nullptr);
  EXPECT_EQ(
      Find(finding_lookup::AdviseOneRank(GpuRunCovered("ncclDevKernel_AllReduce_Sum_f32_RING_LL")), kMinedSequenceId),
      nullptr);
}

// One operator launched `repeats` times, idle gaps between; `collectives` puts an all-reduce on another stream
// in each gap.
Trace OneOperatorRepeated(int repeats, bool collectives) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(100000));
  int64_t at = Us(10), correlation = 1;
  for (int i = 0; i < repeats; ++i) {
    t.Host(EventKind::kHostOp, "aten::mm", at, Us(20));
    t.Launch(at + Us(5), correlation);
    t.Kernel("gemm_kernel", at + Us(10), Us(10), correlation++);
    // Short: the gaps stay mostly idle, so only the collectives between the occurrences keep it quiet.
    if (collectives) t.Device(EventKind::kKernel, "ncclDevKernel_SendRecv", at + Us(30), Us(5), kNoId, kOtherStream);
    at += Us(100);
  }
  return t.Finish();
}

TEST(MinedSequences, OneOperatorRepeatedAroundCollectivesIsNoSequence) {
  const AdvisorResult without_collectives = finding_lookup::AdviseOneRank(OneOperatorRepeated(30, false));
  const Finding* alone = Find(without_collectives, kMinedSequenceId);
  ASSERT_NE(alone, nullptr);
  EXPECT_NE(alone->title.find("aten::mm -> aten::mm"), std::string::npos) << alone->title;
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(OneOperatorRepeated(30, true)), kMinedSequenceId), nullptr);
}

// A communication library's kernels and its helpers break a stream's run: no sequence holds them.
TEST(MinedSequences, CommunicationLibraryKernelsAreNeverMined) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(100000));
  int64_t at = Us(10);
  for (int i = 0; i < 8; ++i) {
    for (std::string_view kernel :
         {"elementwise_kernel_a", "void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)",
          "void deep_ep::intranode::notify_dispatch<8>(int const*, int*)",
          "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)", "elementwise_kernel_b"}) {
      t.Kernel(kernel, at, Us(5));
      at += Us(40);
    }
    t.Kernel("gemm_" + std::to_string(i), at, Us(200));
    at += Us(300);
  }
  const Trace trace = t.Finish();
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(trace), kMinedSequenceId), nullptr);
}

// A sequence of 8 operators with long names: the first 6 listed, each cut to a readable length.
TEST(MinedSequences, ALongSequenceIsListedShort) {
  Trace trace = npu_step::NpuStep();
  Details d(&trace);
  const std::string long_name(80, 'x');
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < 8; ++k) d.Add(long_name + std::to_string(k), 10, 50);
    d.Add("Other" + std::to_string(i), 5, 1);
  }
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kMinedSequenceId);
  ASSERT_NE(f, nullptr);
  const std::string listed = Text(*f, "top_sequences");
  EXPECT_NE(listed.find("... (8 operators) x6"), std::string::npos) << listed;
  EXPECT_EQ(listed.find(long_name), std::string::npos) << listed;
  EXPECT_NE(listed.find(std::string(45, 'x') + "... -> "), std::string::npos) << listed;
  EXPECT_LT(f->title.size(), 500u) << f->title;
}

}  // namespace
}  // namespace tuneprof::rule_test

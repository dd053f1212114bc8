// Expert-parallel all-to-all per step and fused compute + communication kernels, on hand-built traces.
#include "analysis/comm/expert_parallel.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

constexpr int64_t kCommStream = 24;
constexpr std::string_view kDispatch = "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)";
constexpr std::string_view kCombine = "void deep_ep::intranode::combine<__nv_bfloat16, 8, 768>(int4*, float*)";

RankCommunication Analyze(const Trace& trace) {
  return AnalyzeRankCommunication(trace, ComputeTimeBreakdown(trace), HardwareSelection{});
}

// A kernel of a trace of kernels alone (no steps, no launches): its name, start and duration.
struct BareKernel {
  std::string_view name;
  int64_t start_us = 0;
  int64_t duration_us = 0;
};

Trace BareKernels(std::initializer_list<BareKernel> kernels) {
  HandBuiltTrace hand;
  for (const BareKernel& k : kernels)
    hand.Kernel(k.name, Us(static_cast<double>(k.start_us)), Us(static_cast<double>(k.duration_us)));
  return hand.Finish();
}

TEST(ExpertParallelTest, PerStepTimeExposureBytesAndShare) {
  HandBuiltTrace hand;
  for (int64_t step = 0; step < 2; ++step) {
    const int64_t t = step * Us(10000);
    hand.Step(step + 1, t, Us(5000));
    hand.Launch(t + Us(10), 100 * step + 1);
    hand.Kernel("sgemm", t + Us(100), Us(1000), 100 * step + 1);  // [100, 1100)
    hand.Launch(t + Us(20), 100 * step + 2);
    // [900, 1500): 200 us under the sgemm, 400 exposed.
    hand.Device(EventKind::kKernel, kDispatch, t + Us(900), Us(600), 100 * step + 2, kCommStream);
    hand.Launch(t + Us(30), 100 * step + 3);
    hand.Kernel("sgemm", t + Us(1500), Us(500), 100 * step + 3);  // [1500, 2000)
    hand.Launch(t + Us(40), 100 * step + 4);
    // [2000, 2300): all exposed.
    hand.Device(EventKind::kKernel, kCombine, t + Us(2000), Us(300), 100 * step + 4, kCommStream);
  }
  const Trace trace = hand.Finish();
  const RankCommunication r = Analyze(trace);
  ASSERT_EQ(r.collectives.size(), 4u);
  EXPECT_EQ(r.collectives[0].type, CollectiveType::kAllToAll);
  ASSERT_EQ(r.expert_parallel.size(), 2u);
  for (const ExpertParallelStep& s : r.expert_parallel) {
    EXPECT_EQ(s.kernels, 2u);
    EXPECT_EQ(s.all_to_all_ns, Us(900));
    EXPECT_EQ(s.exposed_ns, Us(700));
    EXPECT_EQ(s.hidden_ns, Us(200));
    // The step every command reports: the host's ProfilerStep range (5000 us) is longer than the device
    // span [100, 2300), so the share is of it, as analyze's shares are.
    EXPECT_EQ(s.step_ns, Us(5000));
    EXPECT_DOUBLE_EQ(*s.share_of_step, 900.0 / 5000.0);
    EXPECT_EQ(s.bytes, kNoId);
  }
  EXPECT_EQ(r.expert_parallel[0].step, 1);
  EXPECT_EQ(r.expert_parallel[1].step, 2);
}

TEST(ExpertParallelTest, NoneWithoutDispatchOrCombine) {
  const RankCommunication r =
      Analyze(BareKernels({{"sgemm", 0, 100},
                           {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 100, 100},
                           {"void vllm::cross_device_reduce_1stage<float, 8>(vllm::RankData*)", 200, 50}}));
  EXPECT_TRUE(r.expert_parallel.empty());
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[1].type, CollectiveType::kAllReduce);  // the custom all-reduce, by the table
  EXPECT_EQ(r.communication_ns, Us(150));
}

TEST(ExpertParallelTest, FusedCommCountsOnceAsComputingAndIsListedAsACollective) {
  const Trace trace = BareKernels(
      {{"MatMulV2", 0, 100}, {"aclnnMatmulAllReduce_MatmulAllReduce", 100, 400}, {"MoeDistributeDispatch", 500, 200}});
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  EXPECT_EQ(breakdown.total.computing_ns, Us(700));
  EXPECT_EQ(breakdown.total.communication_ns, 0);
  EXPECT_EQ(breakdown.total.free_ns, 0);
  const RankCommunication r = Analyze(trace);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].type, CollectiveType::kAllReduce);
  EXPECT_EQ(r.collectives[0].exposed_ns, 0);  // the kernel computes while it communicates
  EXPECT_EQ(r.collectives[1].type, CollectiveType::kAllToAll);
  ASSERT_EQ(r.expert_parallel.size(), 1u);  // no steps: the whole trace
  EXPECT_FALSE(r.expert_parallel[0].step.has_value());
  EXPECT_EQ(r.expert_parallel[0].all_to_all_ns, Us(200));
  EXPECT_EQ(r.expert_parallel[0].exposed_ns, 0);
}

TEST(ExpertParallelTest, FusedRowsOfKernelDetailsWithoutATimeline) {
  Trace trace = HandBuiltTrace().Finish();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  const auto row = [&](const char* name, int64_t start_us, int64_t dur_us, const char* in, const char* out) {
    NpuOpRow r;
    r.step = 1;
    r.name = side.Intern(name);
    r.type = side.Intern(name);
    r.start_ns = Us(static_cast<double>(start_us));
    r.dur_ns = Us(static_cast<double>(dur_us));
    r.input_shapes = side.Intern(in);
    r.input_data_types = side.Intern("DT_BF16;DT_BF16");
    r.output_shapes = side.Intern(out);
    r.output_data_types = side.Intern("DT_BF16");
    side.AddKernelDetail(r);
  };
  row("MatMulV2", 0, 100, "64,128;128,256", "64,256");
  row("aclnnMatmulAllReduce_MatmulAllReduce", 100, 400, "64,128;128,256", "64,256");
  const RankCommunication r = Analyze(trace);
  ASSERT_EQ(r.collectives.size(), 1u);
  const Collective& c = r.collectives[0];
  EXPECT_EQ(c.event, kNoIndex);  // no event draws it
  EXPECT_EQ(c.type, CollectiveType::kAllReduce);
  EXPECT_EQ(c.start_ns, Us(100));
  EXPECT_EQ(c.duration_ns, Us(400));
  EXPECT_EQ(c.step, std::optional<int64_t>(1));
  EXPECT_EQ(c.bytes, 64 * 256 * 2);  // the matmul result it all-reduces
  EXPECT_EQ(c.exposed_ns, 0);
}

TEST(ExpertParallelTest, ReportedStepsOnlyWhereTheRowsCoverEveryStep) {
  RankCommunication r;
  r.steps = 2;
  EXPECT_EQ(ReportedStepsNs(r), 0);
  ExpertParallelStep one;
  one.step = 1;
  one.step_ns = Us(100);
  r.expert_parallel = {one};
  EXPECT_EQ(ReportedStepsNs(r), 0);  // step 2 ran none: the device span stands
  ExpertParallelStep two = one;
  two.step = 2;
  two.step_ns = Us(120);
  r.expert_parallel.push_back(two);
  EXPECT_EQ(ReportedStepsNs(r), Us(220));
  r.expert_parallel[1].step.reset();
  EXPECT_EQ(ReportedStepsNs(r), 0);
}

}  // namespace
}  // namespace tuneprof

// One test per rule family that a hand-built trace can drive (compute, communication, host, data,
// memory, fusion), through the advisor, with the numbers computed by hand. The idle family's gap and
// low-utilization rules are driven in nsys_rules_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/core/builtin_profiles_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

using finding_lookup::Find;
using finding_lookup::Number;
using finding_lookup::Text;

// `units`: replaces the measured compute units (hand-built traces carry no PMU counters).
// `comm`: the rank's communication analysis, hand-filled where the trace cannot carry it.
AdvisorResult Advise(const Trace& trace, const RankComputeUnits* units = nullptr,
                     const RankCommunication* comm = nullptr) {
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  const HardwareProfiles profiles;
  const HardwareSelection hardware = SelectHardware(trace, profiles, nullptr);
  const RankComputeUnits compute = units ? *units : ComputeRankComputeUnits(trace, breakdown, hardware);
  return RunAdvisor({RankInputs{&trace, &breakdown, &compute, &hardware, nullptr, comm}}, AdvisorConfig());
}

// One step of 1000 us holding one 800 us kernel, `kernel`.
Trace OneKernelStep(std::string_view kernel) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel(kernel, 0, Us(800));
  return t.Finish();
}

TEST(RuleFamilies, ComputeUnitsBelowThreshold) {
  const Trace trace = OneKernelStep("gemm");
  RankComputeUnits units;
  units.cube_ratio = 0.5;
  const AdvisorResult result = Advise(trace, &units);
  const Finding* f = Find(result, "compute.unit_utilization");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kCompute);
  EXPECT_DOUBLE_EQ(*f->value, 50);
  EXPECT_DOUBLE_EQ(*f->threshold, 70);
  EXPECT_DOUBLE_EQ(Number(*f, "compute_bound_us_per_step"), 800);
  // 800 us of compute-bound work at 70 % instead of 50 %: 800 x (1 - 50/70) = 228.571 us.
  EXPECT_NEAR(f->uncapped_gain_ns, 800e3 * 20 / 70, 1e-6);
  EXPECT_NEAR(f->estimated_gain_ns, 800e3 * 20 / 70, 1e-6);

  units.cube_ratio = 0.7;  // at the threshold: quiet
  EXPECT_EQ(Find(Advise(trace, &units), "compute.unit_utilization"), nullptr);
}

// Only memory-bound kernels: the units' utilization saves no compute-bound time, so no finding claims it
// (it printed "gain unknown" with a gain of 0 by its own model).
TEST(RuleFamilies, ComputeUnitsSayNothingWithoutComputeBoundWork) {
  RankComputeUnits units;
  units.cube_ratio = 0.3;
  const AdvisorResult result = Advise(OneKernelStep("vectorized_elementwise_kernel"), &units);
  EXPECT_DOUBLE_EQ(result.ranks[0].split.part(TimePart::kComputeBound), 0);
  EXPECT_EQ(Find(result, "compute.unit_utilization"), nullptr);
}

TEST(RuleFamilies, ExposedCommunication) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("gemm", 0, Us(500));
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(400), Us(400), kNoId, 9);  // 400..800
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "communication.exposed");
  ASSERT_NE(f, nullptr);
  // Communication 400 us, 100 us of it under the GEMM: 300 us exposed = 30 % of the step.
  EXPECT_DOUBLE_EQ(*f->value, 30);
  EXPECT_DOUBLE_EQ(Number(*f, "exposed_communication_us"), 300);
  EXPECT_DOUBLE_EQ(Number(*f, "communication_us"), 400);
  EXPECT_DOUBLE_EQ(Number(*f, "overlapped_us"), 100);
  EXPECT_DOUBLE_EQ(Number(*f, "overlap_pct"), 25);
  EXPECT_DOUBLE_EQ(Number(*f, "compute_not_overlapping_us"), 400);  // 500 - 100
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(300));                  // min(300, 400)
  EXPECT_EQ(result.ranks[0].dominant, Bottleneck::kCompute);        // 500 us compute vs 300 us exposed
}

// The exposed part of each collective counts for the module that launched it: 300 us of the all-reduce
// launched in `Net_0.Tp_0`, 100 us of one launched outside every module; the one under the GEMM is hidden.
TEST(RuleFamilies, ExposedCommunicationNamesTheModulesThatLaunchedIt) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kPythonFunction, "nn.Module: Net_0", 0, Us(900));
  t.Host(EventKind::kPythonFunction, "nn.Module: Hidden_0", Us(1), Us(10));
  t.Launch(Us(2), 1);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(100), Us(200), 1, 9);  // under the GEMM
  t.Launch(Us(20), 2);
  t.Kernel("gemm", 0, Us(500), 2);
  t.Host(EventKind::kPythonFunction, "nn.Module: Tp_0", Us(30), Us(10));
  t.Launch(Us(32), 3);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(400), Us(400), 3, 9);  // 300 us exposed
  t.Launch(Us(950), 4);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(850), Us(100), 4, 9);  // outside modules
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "communication.exposed");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->modules.size(), 1u);
  EXPECT_EQ(f->modules[0].path, "Net_0.Tp_0");
  EXPECT_DOUBLE_EQ(f->modules[0].share, 0.75);
}

TEST(RuleFamilies, LowCommunicationBandwidth) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("gemm", 0, Us(500));
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(400), Us(400), kNoId, 9);  // 300 us exposed
  const Trace trace = t.Finish();
  RankCommunication comm;
  comm.link.transport = "nvlink";
  comm.link.peak_gb_per_s = 200;
  comm.total.utilization = 0.25;
  comm.total.busbw_gbps = 50;
  CollectiveTypeSummary all_reduce;
  all_reduce.type = CollectiveType::kAllReduce;
  all_reduce.duration_ns = Us(400);
  all_reduce.utilization = 0.25;
  comm.by_type.push_back(all_reduce);
  const AdvisorResult result = Advise(trace, nullptr, &comm);
  const Finding* f = Find(result, "communication.low_bandwidth");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 25);
  EXPECT_DOUBLE_EQ(*f->threshold, 50);
  EXPECT_DOUBLE_EQ(Number(*f, "exposed_communication_us"), 300);
  EXPECT_DOUBLE_EQ(Number(*f, "busbw_gbps"), 50);
  EXPECT_DOUBLE_EQ(Number(*f, "link_peak_gbps"), 200);
  EXPECT_EQ(Text(*f, "link"), "nvlink");
  EXPECT_EQ(Text(*f, "busiest_collective"), std::string(CollectiveTypeName(CollectiveType::kAllReduce)));
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(150));  // 300 us x (1 - 25 / 50)
  const UtilizationCheck& check = result.ranks[0].utilizations[2];
  EXPECT_EQ(check.name, "communication_bandwidth");
  EXPECT_DOUBLE_EQ(*check.value_pct, 25);

  comm.total.utilization = 0.5;  // at the threshold: quiet
  EXPECT_EQ(Find(Advise(trace, nullptr, &comm), "communication.low_bandwidth"), nullptr);
}

TEST(RuleFamilies, SynchronizeCallsOnTheHost) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Launch(Us(10), 1);
  t.Kernel("gemm", Us(20), Us(300), 1);
  t.Host(EventKind::kRuntime, "cudaDeviceSynchronize", Us(20), Us(300));
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(400), Us(20));
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "host.sync_apis");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kHost);
  EXPECT_DOUBLE_EQ(Number(*f, "sync_calls"), 2);
  EXPECT_DOUBLE_EQ(Number(*f, "sync_us_per_step"), 320);
  EXPECT_DOUBLE_EQ(*f->value, 32);
  EXPECT_EQ(Text(*f, "calls"), "cudaDeviceSynchronize x1 (300.0 us), cudaStreamSynchronize x1 (20.0 us)");
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, std::min(320e3, result.ranks[0].split.part(TimePart::kHostWait)));
}

// The synchronize a script calls after its profiled loop is no step's.
// The waits count for the module open around each call: 300 us in `Net_0.Head_0`, 100 us in `Net_0`
// itself, 20 us outside every module (5 %: not named).
TEST(RuleFamilies, SynchronizeCallsNameTheModulesThatMadeThem) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kPythonFunction, "nn.Module: Net_0", Us(5), Us(800));
  t.Host(EventKind::kPythonFunction, "nn.Module: Head_0", Us(15), Us(400));
  t.Launch(Us(16), 1);
  t.Kernel("gemm", Us(20), Us(300), 1);
  t.Host(EventKind::kRuntime, "cudaDeviceSynchronize", Us(20), Us(300));
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(500), Us(100));
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(900), Us(20));
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "host.sync_apis");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->modules.size(), 2u);
  EXPECT_EQ(f->modules[0].path, "Net_0.Head_0");
  EXPECT_DOUBLE_EQ(f->modules[0].share, 300.0 / 420);
  EXPECT_EQ(f->modules[1].path, "Net_0");
  EXPECT_DOUBLE_EQ(f->modules[1].share, 100.0 / 420);
}

TEST(RuleFamilies, SynchronizeAfterTheLastStepIsNotCounted) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Launch(Us(10), 1);
  t.Kernel("gemm", Us(20), Us(300), 1);
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(900), Us(200));  // half of it inside the step
  t.Host(EventKind::kRuntime, "cudaDeviceSynchronize", Us(1200), Us(2000));
  const AdvisorResult result = Advise(t.Finish());
  const Finding* f = Find(result, "host.sync_apis");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "sync_calls"), 1);
  EXPECT_DOUBLE_EQ(Number(*f, "sync_us_per_step"), 100);
  EXPECT_EQ(Text(*f, "calls"), "cudaStreamSynchronize x1 (100.0 us)");
}

// Two threads waiting at once wait once: the union per process, never more than the step.
TEST(RuleFamilies, SynchronizeCallsOnTwoThreadsAtOnce) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Launch(Us(10), 1);
  t.Kernel("gemm", Us(20), Us(900), 1);
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(20), Us(900));
  t.HostThread(2, EventKind::kRuntime, "cudaStreamSynchronize", Us(50), Us(900));
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "host.sync_apis");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "sync_calls"), 2);
  EXPECT_DOUBLE_EQ(Number(*f, "sync_us_per_step"), 930);  // [20, 950) us, not 1,800 us
  EXPECT_DOUBLE_EQ(*f->value, 93);
}

// A gap of 500 ms or more is the host busy elsewhere: idle time, not launch-bound.
TEST(RuleFamilies, LongHostPauseIsNotLaunchBound) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(2'000'000));
  t.Launch(Us(0), 1);
  t.Kernel("gemm", Us(10), Us(100), 1);
  t.Launch(Us(150), 2);  // launched after the device drained: a short launch gap of 50 us
  t.Kernel("gemm", Us(160), Us(100), 2);
  t.Launch(Us(1'000'000), 3);  // the host away ~1 s
  t.Kernel("gemm", Us(1'000'010), Us(100), 3);
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  EXPECT_EQ(breakdown.total.host.host_pause_gaps, 1u);
  EXPECT_EQ(breakdown.total.host.host_pause_ns, Us(1'000'010) - Us(260));
  EXPECT_DOUBLE_EQ(result.ranks[0].split.part(TimePart::kHostWait), static_cast<double>(Us(50)));
  EXPECT_EQ(Find(result, "host.launch_bound"), nullptr);
  const Finding* pauses = Find(result, "host.pauses");
  ASSERT_NE(pauses, nullptr);
  EXPECT_DOUBLE_EQ(Number(*pauses, "pauses_per_step"), 1);
  EXPECT_DOUBLE_EQ(Number(*pauses, "pause_us_per_step"), (Us(1'000'010) - Us(260)) / 1e3);
}

// A 20 ms gap before a launch is the host elsewhere (a sleep before backward on a late rank), not launch
// overhead; it takes the idle time before the catch-all idle.low_utilization does.
TEST(RuleFamilies, ShortHostPauseIsAPauseNotLaunchBound) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(30'000));
  t.Launch(Us(0), 1);
  t.Kernel("gemm", Us(10), Us(1'000), 1);
  t.Launch(Us(21'010), 2);
  t.Kernel("gemm", Us(21'020), Us(1'000), 2);
  const AdvisorResult result = Advise(t.Finish());
  EXPECT_EQ(Find(result, "host.launch_bound"), nullptr);
  const Finding* pauses = Find(result, "host.pauses");
  ASSERT_NE(pauses, nullptr);
  EXPECT_DOUBLE_EQ(Number(*pauses, "pause_us_per_step"), 20'010);
  EXPECT_DOUBLE_EQ(pauses->estimated_gain_ns, static_cast<double>(Us(20'010)));
  const Finding* low = Find(result, "idle.low_utilization");
  if (low != nullptr) EXPECT_LE(low->estimated_gain_ns, result.ranks[0].split.part(TimePart::kIdle) - Us(20'010));
}

// One 2 ms gap before a launch is the host busy (a sync, CPU work, a late rank's own host work), not the
// cost of launching: host.launch_bound says so and points there, not at graphs.
TEST(RuleFamilies, AFewLongHostGapsAreAStallNotLaunchOverhead) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(3'000));
  t.Launch(Us(0), 1);
  t.Kernel("gemm", Us(10), Us(400), 1);
  t.Launch(Us(2'410), 2);  // 2 ms after the device drained
  t.Kernel("gemm", Us(2'420), Us(400), 2);
  const AdvisorResult result = Advise(t.Finish());
  const Finding* launch = Find(result, "host.launch_bound");
  ASSERT_NE(launch, nullptr);
  EXPECT_DOUBLE_EQ(Number(*launch, "host_stalls_per_step"), 1);
  EXPECT_DOUBLE_EQ(Number(*launch, "host_stall_us"), 2'010);
  EXPECT_NE(launch->title.find("mostly in gaps >= 1 ms"), std::string::npos) << launch->title;
  EXPECT_EQ(launch->strategy.find("graph in"), std::string::npos) << launch->strategy;
  EXPECT_NE(launch->strategy.find("Find what the host runs in those gaps"), std::string::npos);
}

TEST(RuleFamilies, DataLoaderHoldsUpTheStep) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 0, Us(150));
  t.Kernel("gemm", Us(100), Us(900));  // hides the loader's last 50 us
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "data.slow_dataloader");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 15);
  EXPECT_DOUBLE_EQ(Number(*f, "dataloader_us_per_step"), 150);
  EXPECT_DOUBLE_EQ(Number(*f, "exposed_dataloader_us_per_step"), 100);
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(100));
  EXPECT_DOUBLE_EQ(result.ranks[0].split.part(TimePart::kData), Us(100));
}

TEST(RuleFamilies, PageableAndExposedCopies) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  const uint32_t pageable = t.Device(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 0, Us(200), kNoId, 8);
  const uint32_t pinned = t.Device(EventKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", Us(300), Us(50), kNoId, 8);
  t.Kernel("gemm", Us(400), Us(500));
  CopyInfo info;
  info.event = pageable;
  info.bytes = 4'000'000;
  info.direction = CopyDirection::kHostToDevice;
  info.src = MemoryKind::kPageable;
  info.dst = MemoryKind::kDevice;
  t.mutable_builder()->AddCopyInfo(info);
  info.event = pinned;
  info.bytes = 2'000'000;
  info.src = MemoryKind::kPinned;
  t.mutable_builder()->AddCopyInfo(info);
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);

  const Finding* pageable_f = Find(result, "memory.pageable_memcpy");
  ASSERT_NE(pageable_f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*pageable_f, "pageable_copies"), 1);
  EXPECT_DOUBLE_EQ(Number(*pageable_f, "pageable_bytes"), 4e6);
  EXPECT_DOUBLE_EQ(Number(*pageable_f, "pageable_us"), 200);
  EXPECT_DOUBLE_EQ(Number(*pageable_f, "pageable_h2d_gb_per_s"), 20);  // 4 MB / 200 us
  EXPECT_DOUBLE_EQ(Number(*pageable_f, "pinned_h2d_gb_per_s"), 40);    // 2 MB / 50 us
  // At the pinned copy's 40 GB/s the 4 MB take 100 us: 100 us saved.
  EXPECT_DOUBLE_EQ(pageable_f->uncapped_gain_ns, Us(100));

  const Finding* exposed = Find(result, "memory.exposed_memcpy");
  ASSERT_NE(exposed, nullptr);
  EXPECT_DOUBLE_EQ(*exposed->value, 25);  // 250 us of copies, none under the GEMM
  EXPECT_DOUBLE_EQ(Number(*exposed, "exposed_memcpy_us"), 250);
  EXPECT_DOUBLE_EQ(exposed->estimated_gain_ns, Us(250));  // min(250, 500 us of compute)
  // Both save from the same 250 us of exposed copies: the larger takes it all, the other is capped to 0.
  EXPECT_DOUBLE_EQ(pageable_f->estimated_gain_ns, 0);
}

// `repeats` times conv -> batch norm -> relu kernels back to back (100, 40, 20 us) on one stream.
Trace ConvBnRelu(int repeats) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  for (int i = 0; i < repeats; ++i) {
    const double at = 160.0 * i;
    t.Kernel("cudnn::conv2d_fprop_kernel", Us(at), Us(100));
    t.Kernel("cudnn::bn_fw_inf_1C11_kernel_NCHW", Us(at + 100), Us(40));
    t.Kernel("at::native::relu_kernel", Us(at + 140), Us(20));
  }
  return t.Finish();
}

TEST(RuleFamilies, UnfusedConvBnReluKernels) {
  const Trace trace = ConvBnRelu(5);
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "fusion.conv_bn_relu");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "occurrences"), 5);
  EXPECT_DOUBLE_EQ(Number(*f, "pattern_us"), 800);
  EXPECT_DOUBLE_EQ(Number(*f, "pattern_pct_of_work"), 80);  // 800 us of a 1000 us step
  EXPECT_EQ(Text(*f, "level"), "kernels");
  EXPECT_EQ(Text(*f, "example"),
            "cudnn::conv2d_fprop_kernel -> cudnn::bn_fw_inf_1C11_kernel_NCHW -> at::native::relu_kernel");
  // Inference (no backward): BatchNorm and ReLU fold into the convolution, 5 x (40 + 20) us.
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(300));
  // The memory-bound part is 800 us x (1 - 500/800) = 300 us: the gain fits exactly.
  EXPECT_DOUBLE_EQ(result.ranks[0].split.part(TimePart::kMemoryBound), Us(300));
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(300));
  EXPECT_TRUE(f->modules.empty());  // no module ranges: nothing to name
}

// ConvBnRelu's five occurrences, each launched from inside a module: the first four from the repeated
// blocks `Net_0.Block_0` .. `Block_3`, the last from `Net_0.Head_0`.
Trace ConvBnReluInModules() {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kPythonFunction, "nn.Module: Net_0", 0, Us(900));
  const char* kernels[] = {"cudnn::conv2d_fprop_kernel", "cudnn::bn_fw_inf_1C11_kernel_NCHW",
                           "at::native::relu_kernel"};
  const double durations[] = {100, 40, 20};
  int64_t correlation = 0;
  for (int i = 0; i < 5; ++i) {
    const double at = 160.0 * i;
    const std::string module = i < 4 ? "nn.Module: Block_" + std::to_string(i) : "nn.Module: Head_0";
    t.Host(EventKind::kPythonFunction, module, Us(at + 1), Us(150));
    double kernel_at = at;
    for (int k = 0; k < 3; ++k) {
      t.Launch(Us(at + 2 + 3 * k), ++correlation);
      t.Kernel(kernels[k], Us(kernel_at), Us(durations[k]), correlation);
      kernel_at += durations[k];
    }
  }
  return t.Finish();
}

TEST(RuleFamilies, FusionNamesTheModulesHoldingItsKernels) {
  const Trace trace = ConvBnReluInModules();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "fusion.conv_bn_relu");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "occurrences"), 5);
  // 4 x 160 us of the 800 us in the blocks, rolled up into one path; 160 us in the head: 20 %, named.
  ASSERT_EQ(f->modules.size(), 2u);
  EXPECT_EQ(f->modules[0].path, "Net_0.Block_*");
  EXPECT_DOUBLE_EQ(f->modules[0].share, 0.8);
  EXPECT_EQ(f->modules[1].path, "Net_0.Head_0");
  EXPECT_DOUBLE_EQ(f->modules[1].share, 0.2);
}

TEST(RuleFamilies, FusionNeedsFiveOccurrences) {
  const Trace trace = ConvBnRelu(4);
  EXPECT_EQ(Find(Advise(trace), "fusion.conv_bn_relu"), nullptr);
}

TEST(RuleFamilies, PerParameterOptimizerLoop) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, "Optimizer.step#AdamW.step", Us(100), Us(800));
  // Three parameters, each updated by aten::mul_ then aten::add_, each op launching one kernel.
  const double kernel_us[6] = {10, 20, 12, 25, 14, 30};
  for (int j = 0; j < 6; ++j) {
    const double at = 110 + 120.0 * j;
    t.Host(EventKind::kHostOp, j % 2 == 0 ? "aten::mul_" : "aten::add_", Us(at), Us(100));
    t.Launch(Us(at + 10), j + 1);
    t.Kernel("vectorized_elementwise_kernel", Us(at + 20), Us(kernel_us[j]), j + 1);
  }
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "fusion.optimizer_foreach");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "optimizer"), "Optimizer.step#AdamW.step");
  EXPECT_DOUBLE_EQ(Number(*f, "ops_per_step"), 6);
  EXPECT_DOUBLE_EQ(Number(*f, "distinct_ops"), 2);
  EXPECT_DOUBLE_EQ(Number(*f, "optimizer_us_per_step"), 111);  // 10+20+12+25+14+30
  // mul_: (3 - 1) x 10 us; add_: (3 - 1) x 20 us.
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(60));
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(60));
}

TEST(RuleFamilies, ForeachOptimizerIsQuiet) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, "Optimizer.step#AdamW.step", Us(100), Us(800));
  for (int j = 0; j < 6; ++j) {
    const double at = 110 + 120.0 * j;
    t.Host(EventKind::kHostOp, j == 0 ? "aten::_foreach_mul_" : "aten::add_", Us(at), Us(100));
    t.Launch(Us(at + 10), j + 1);
    t.Kernel("vectorized_elementwise_kernel", Us(at + 20), Us(10), j + 1);
  }
  const Trace trace = t.Finish();
  EXPECT_EQ(Find(Advise(trace), "fusion.optimizer_foreach"), nullptr);
}

// A CPU-only trace without step markers: 8 ms of DDP set-up (one 100 us operator inside), then three
// iterations each running one 300 us operator. The step runs from the first operator's start to the last
// one's end (10,250 us, 1,000 us of it in operators); its 9,250 us outside operators are mostly set-up
// (7,900 us of it from the first operator on, less that operator): the finding says so and keeps only the
// rest, the time between the iterations' operators, as its gain.
TEST(RuleFamilies, FrameworkOverheadInAOneOffSetUpIsSaidSo) {
  HandBuiltTrace t;
  t.Host(EventKind::kUserAnnotation, "ddp_init", 0, Us(8000));
  t.Host(EventKind::kHostOp, "aten::empty", Us(100), Us(100));
  for (int k = 0; k < 3; ++k) {
    t.Host(EventKind::kUserAnnotation, "forward", Us(8000 + 1000 * k), Us(400));
    t.Host(EventKind::kHostOp, "aten::mm", Us(8050 + 1000 * k), Us(300));
  }
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "host.framework_overhead");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("inside 'ddp_init', which runs once"), std::string::npos) << f->title;
  EXPECT_EQ(Text(*f, "one_off_region"), "ddp_init");
  EXPECT_DOUBLE_EQ(Number(*f, "one_off_region_us"), 8000);
  EXPECT_DOUBLE_EQ(Number(*f, "overhead_us"), 9250);
  EXPECT_DOUBLE_EQ(Number(*f, "one_off_outside_ops_us"), 7800);
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(9250 - 7800));
  EXPECT_NE(result.dominant_reason.find("the trace marks no steps and most of it is 'ddp_init', which runs once"),
            std::string::npos)
      << result.dominant_reason;
}

// The timeline's arrivals name rank 1, the HCCL wait ratios rank 2: whichever rule a rank's finding
// quotes, it says the other one disagrees (as `comm` does), naming both ranks.
TEST(RuleFamilies, StragglerFindingsSayWhenTheTwoRulesDisagree) {
  CrossRankCommunication cross;
  cross.straggler_rank = 1;
  cross.straggler_stands_out = true;
  cross.straggler_reason = "last at 4 of 4 matched collectives";
  cross.ascend_slow_rank = 2;
  cross.ascend_verdict = "slow rank";
  cross.ranks.push_back(RankWait{.rank = 0,
                                 .matched = 4,
                                 .communication_ns = Us(400),
                                 .wait_ns = Us(300),
                                 .transfer_ns = Us(100),
                                 .wait_ratio = 0.75});
  RankCommunication comm;
  AscendCommOp op;
  op.wait_ms = 0.3;
  op.transit_ms = 0.1;
  comm.ascend_ops.push_back(op);
  comm.ascend_wait_ratio = 0.75;
  RankEvidence rank;
  rank.rank_id = 0;
  rank.cross = &cross;
  rank.comm = &comm;
  rank.split.steps = 1;
  rank.split.step_ns = Us(1000);
  std::vector<Finding> findings;
  RuleCommStraggler(rank, AdvisorConfig(), &findings);
  ASSERT_EQ(findings.size(), 2u);  // the wait ratios' and the arrivals'
  for (const Finding& f : findings) {
    EXPECT_NE(f.title.find("the rules disagree: the timeline's arrivals name rank 1, the wait ratios rank 2"),
              std::string::npos)
        << f.title;
    EXPECT_NE(Text(f, "disagreement").find("rank 1"), std::string::npos);
  }
  cross.ascend_slow_rank = 1;  // the same rank: nothing to say
  findings.clear();
  RuleCommStraggler(rank, AdvisorConfig(), &findings);
  ASSERT_EQ(findings.size(), 2u);
  for (const Finding& f : findings) EXPECT_EQ(f.title.find("disagree"), std::string::npos) << f.title;
}

TEST(RuleFamilies, LowDeviceUtilizationChunks) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(3000));
  t.Kernel("gemm", 0, Us(100));
  t.Kernel("gemm", Us(2900), Us(100));
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "idle.low_utilization");
  ASSERT_NE(f, nullptr);
  // 3000 us in 30 chunks of 100 us: the first and last are busy, the 28 between are idle.
  EXPECT_DOUBLE_EQ(Number(*f, "low_chunks"), 28);
  EXPECT_DOUBLE_EQ(Number(*f, "idle_in_low_chunks_us"), 2800);
  EXPECT_NEAR(Number(*f, "busy_pct"), 100.0 * 200 / 3000, 1e-9);
  EXPECT_EQ(Text(*f, "low_ranges"), "0.100-2.900 ms");
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(2800));
  EXPECT_EQ(Find(result, "idle.gpu_gaps"), nullptr);  // 2.8 ms is far below the 500 ms gap threshold
}

// The same idle chunks while a kernel launched at the start waits to run: the device waits on something
// the trace does not show, which a larger batch does not fix.
TEST(RuleFamilies, LowUtilizationWithWorkQueuedIsItsOwnCause) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(3000));
  t.Kernel("gemm", 0, Us(100));
  t.Launch(Us(50), 7);
  t.Kernel("gemm", Us(2900), Us(100), 7);
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "idle.low_utilization");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "idle_with_work_queued_us"), 2800);
  EXPECT_NE(f->strategy.find("waits on events, other streams or work not in the trace"), std::string::npos);
  EXPECT_EQ(f->apis.front().view().find("batch_size"), std::string::npos);
}

namespace devices_and_shares {

// One 800 us `kernel` in a 1000 us step on a GPU named `device_name` with AMD's 64-thread wavefronts
// and compute capability 9.4 (what an MI300X reports), advised with the built-in chip profiles.
AdvisorResult AdviseOnAmd(std::string_view device_name, std::string_view kernel) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  TraceBuilder* b = t.mutable_builder();
  Device gpu;
  gpu.type = DeviceType::kGpu;
  gpu.id = 0;
  gpu.name = b->Intern(device_name);
  gpu.compute_major = 9;
  gpu.compute_minor = 4;
  gpu.warp_size = 64;
  b->AddDevice(gpu);
  t.Kernel(kernel, 0, Us(800));
  const Trace trace = t.Finish();
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  const HardwareSelection hardware = SelectHardware(trace, testing_support::BuiltinProfiles(), nullptr);
  const RankComputeUnits compute = ComputeRankComputeUnits(trace, breakdown, hardware);
  return RunAdvisor({RankInputs{&trace, &breakdown, &compute, &hardware, nullptr, nullptr}}, AdvisorConfig());
}

constexpr std::string_view kMfmaGemm = "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1";
constexpr std::string_view kVectorGemm = "Cijk_Ailk_Bljk_S_MT64x64x8_SN_GRVW4";

// A Tensile MFMA GEMM is matrix-core work: no "without tensor cores" finding on an MI300X.
TEST(RuleFamilies, AmdMatrixCoreGemmIsTensorCoreWork) {
  EXPECT_EQ(Find(AdviseOnAmd("AMD Instinct MI300X", kMfmaGemm), "compute.tensor_cores_unused"), nullptr);
}

// A vector FP32 GEMM on an MI300X is said, in AMD's words, with the chip and not a compute capability.
TEST(RuleFamilies, AmdVectorGemmRunsWithoutMatrixCores) {
  const AdvisorResult result = AdviseOnAmd("AMD Instinct MI300X", kVectorGemm);
  const Finding* f = Find(result, "compute.tensor_cores_unused");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("without matrix cores"), std::string::npos) << f->title;
  EXPECT_EQ(Text(*f, "chip"), "MI300X");
  for (const auto& api : f->apis) EXPECT_EQ(std::string_view(api).find("allow_tf32"), std::string_view::npos);
}

// An AMD GPU of unknown chip: its compute capability (9.x) says nothing of matrix cores, so no finding.
TEST(RuleFamilies, UnknownAmdChipIsNotJudgedByComputeCapability) {
  EXPECT_EQ(Find(AdviseOnAmd("AMD Radeon Unknown", kVectorGemm), "compute.tensor_cores_unused"), nullptr);
}

// A low collective bandwidth makes communication the bottleneck only where exposed communication is the
// step's largest part, as for the compute units and copies; a figure over few collectives says so.
UtilizationCheck CommunicationCheck(int64_t gemm_us, int64_t nccl_us, uint64_t collectives) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("gemm", 0, Us(gemm_us));
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(gemm_us), Us(nccl_us), kNoId, 9);
  const Trace trace = t.Finish();
  RankCommunication comm;
  comm.link.transport = "nvlink";
  comm.link.peak_gb_per_s = 200;
  comm.total.utilization = 0.02;
  comm.total.count_with_bytes = collectives;
  return Advise(trace, nullptr, &comm).ranks[0].utilizations[2];
}

TEST(RuleFamilies, CommunicationBandwidthIsABottleneckOnlyWhereCommunicationIsMaterial) {
  const UtilizationCheck material = CommunicationCheck(100, 800, 40);
  EXPECT_TRUE(material.Bottleneck());
  EXPECT_EQ(material.measured_as.find("small sample"), std::string::npos) << material.measured_as;

  const UtilizationCheck small = CommunicationCheck(800, 50, 1);  // 50 us of a 1000 us step
  EXPECT_TRUE(small.Below());
  EXPECT_FALSE(small.Bottleneck());
  EXPECT_EQ(small.immaterial_part, "collectives");
  ASSERT_TRUE(small.immaterial_share.has_value());
  EXPECT_NEAR(*small.immaterial_share, 50.0 / 850, 1e-9);  // the device step runs from 0 to 850 us
  EXPECT_NE(small.measured_as.find("only 1 collective with sizes: a small sample"), std::string::npos)
      << small.measured_as;
}

// A figure above 100 % of its peak cannot be right: unknown and inconsistent with both numbers, never
// "ok" and never a lower bound; the same for a collective bandwidth above the link's peak.
TEST(RuleFamilies, UtilizationAbovePeakIsInconsistentNotOk) {
  const Trace trace = OneKernelStep("gemm");
  RankComputeUnits units;
  units.memory_traffic.source = "record_shapes";
  units.memory_traffic.ops = 20;
  units.memory_traffic.achieved_gb_per_s = 1735.8;
  units.memory_traffic.peak_gb_per_s = 1420;
  units.memory_traffic.utilization = 1735.8 / 1420;
  RankCommunication comm;
  comm.link.transport = "nvlink";
  comm.total.utilization = 1.3;
  comm.total.count_with_bytes = 40;
  const AdvisorResult result = Advise(trace, &units, &comm);
  const UtilizationCheck& memory = result.ranks[0].utilizations[1];
  EXPECT_FALSE(memory.value_pct.has_value());
  EXPECT_FALSE(memory.Below());
  EXPECT_TRUE(memory.source.empty());
  EXPECT_EQ(memory.measured_as.rfind("unknown: inconsistent: the figure comes to 122.2 % of the peak", 0), 0u)
      << memory.measured_as;
  EXPECT_NE(memory.measured_as.find("1735.8 GB/s"), std::string::npos) << memory.measured_as;
  EXPECT_NE(memory.measured_as.find("1420 GB/s"), std::string::npos) << memory.measured_as;
  EXPECT_EQ(memory.measured_as.find("lower bound"), std::string::npos) << memory.measured_as;
  EXPECT_NE(memory.how_to_measure.view().find("--hardware"), std::string::npos) << memory.how_to_measure.view();
  const UtilizationCheck& communication = result.ranks[0].utilizations[2];
  EXPECT_FALSE(communication.value_pct.has_value());
  EXPECT_NE(communication.measured_as.find("130.0 % of the peak"), std::string::npos) << communication.measured_as;

  units.memory_traffic.utilization = 0.9;  // within the peak: a figure as before
  EXPECT_DOUBLE_EQ(*Advise(trace, &units, &comm).ranks[0].utilizations[1].value_pct, 90);
}

}  // namespace devices_and_shares
}  // namespace
}  // namespace tuneprof

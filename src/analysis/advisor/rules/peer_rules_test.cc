// The msprof-analyze and TensorBoard-plugin rules (ascend_kernel_checks.cc, ascend_frequency.cc,
// ascend_schedule.cc, ascend_bandwidth_contention.cc, data_parallel.cc): each fires on a hand-built
// trace with the numbers computed by hand, and stays quiet just below its threshold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using finding_lookup::Find;
using finding_lookup::Number;
using finding_lookup::Text;

// `profile`: the chip to measure against (nullptr: unknown chip).
AdvisorResult Advise(const Trace& trace, const HardwareProfile* profile = nullptr) {
  const RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  HardwareSelection hardware;
  hardware.profile = profile;
  hardware.how = profile ? "--hardware" : "unknown in test";
  const RankComputeUnits compute = ComputeRankComputeUnits(trace, breakdown, hardware);
  return RunAdvisor({RankInputs{&trace, &breakdown, &compute, &hardware}}, AdvisorConfig());
}

HardwareProfile Ascend910B2() {
  HardwareProfile p;
  p.name = "Ascend 910B2";
  p.kind = "npu";
  p.cube_cores.value = 24;
  p.vector_cores.value = 48;
  p.clock_mhz.value = 1800;
  return p;
}

NpuOpRow Row(SideTableBuilder& side, std::string_view type, std::string_view core, double start_us, double dur_us,
             int64_t block_dim = kNoId, std::string_view state = "static") {
  NpuOpRow row;
  row.name = side.Intern(type);
  row.type = side.Intern(type);
  row.accelerator_core = side.Intern(core);
  row.op_state = side.Intern(state);
  row.start_ns = Us(start_us);
  row.dur_ns = Us(dur_us);
  row.block_dim = block_dim;
  return row;
}

// A one-step trace with one kernel, so that the advisor has a step to work with.
Trace OneStep(double step_us = 1000) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(step_us));
  t.Kernel("k", 0, Us(step_us / 2));
  return t.Finish();
}

TEST(PeerRules, OperatorNoBound) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  const uint32_t mac = side.KernelMetricColumn("aic_mac_ratio");
  const uint32_t vec = side.KernelMetricColumn("aiv_vec_ratio");
  const uint32_t mte2 = side.KernelMetricColumn("aiv_mte2_ratio");
  const uint32_t fixpipe = side.KernelMetricColumn("aic_fixpipe_ratio");
  // 30 us, highest ratio 0.8 (not above the bound) -> unbound; fixpipe is not a checked pipeline.
  uint32_t r = side.AddKernelDetail(Row(side, "TransData", "AI_VECTOR_CORE", 0, 30));
  side.SetKernelMetric(vec, r, 0.2);
  side.SetKernelMetric(mte2, r, 0.8);
  side.SetKernelMetric(fixpipe, r, 0.95);
  // 30 us, mac 0.9 -> bound.
  r = side.AddKernelDetail(Row(side, "Conv2D", "AI_CORE", 40, 30));
  side.SetKernelMetric(mac, r, 0.9);
  // 20 us (not above 20 us) -> not checked.
  r = side.AddKernelDetail(Row(side, "Add", "AI_VECTOR_CORE", 80, 20));
  side.SetKernelMetric(vec, r, 0.1);
  // No counters (communication) -> not checked.
  side.AddKernelDetail(Row(side, "hcom_allReduce_", "HCCL", 100, 400));
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "compute.operator_no_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kCompute);
  EXPECT_DOUBLE_EQ(*f->value, 1);
  EXPECT_DOUBLE_EQ(Number(*f, "bound_ratio_pct"), 80);
  EXPECT_DOUBLE_EQ(Number(*f, "unbound_ops"), 1);
  EXPECT_DOUBLE_EQ(Number(*f, "unbound_us"), 30);
  EXPECT_DOUBLE_EQ(Number(*f, "checked_ops"), 2);
  EXPECT_DOUBLE_EQ(Number(*f, "unbound_time_pct"), 50);
  EXPECT_EQ(Text(*f, "top_types"), "TransData x1 (30.0 us)");
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, 0);  // unknown

  side.SetKernelMetric(mte2, 0, 0.81);  // now bound: quiet
  EXPECT_EQ(Find(Advise(trace), "compute.operator_no_bound"), nullptr);
}

TEST(PeerRules, BlockDimNotAMultipleOfTheCores) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  side.AddKernelDetail(Row(side, "MatMulV2", "AI_CORE", 0, 50, 24));                // full waves
  side.AddKernelDetail(Row(side, "Conv2D", "AI_CORE", 50, 100, 16));                // 16 of 24: 1/3 idle
  side.AddKernelDetail(Row(side, "Add", "AI_VECTOR_CORE", 150, 60, 50));            // 2 waves of 48: 46/96 idle
  side.AddKernelDetail(Row(side, "Mul", "AI_VECTOR_CORE", 210, 70, 1, "dynamic"));  // dynamic: skipped
  NpuOpRow mix = Row(side, "FlashAttentionScore", "MIX_AIC", 280, 90, 10);
  mix.mix_block_dim = 48;  // fills the vector cores
  side.AddKernelDetail(mix);
  const HardwareProfile chip = Ascend910B2();
  const AdvisorResult result = Advise(trace, &chip);
  const Finding* f = Find(result, "compute.block_dim");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 2);
  EXPECT_DOUBLE_EQ(Number(*f, "ops"), 2);
  EXPECT_DOUBLE_EQ(Number(*f, "ops_us"), 160);
  EXPECT_DOUBLE_EQ(Number(*f, "cube_cores"), 24);
  EXPECT_DOUBLE_EQ(Number(*f, "vector_cores"), 48);
  const double idle_us = 100.0 * (1 - 16.0 / 24) + 60.0 * (1 - 50.0 / 96);
  EXPECT_NEAR(Number(*f, "idle_core_us"), idle_us, 1e-9);
  EXPECT_NEAR(f->uncapped_gain_ns, idle_us * 1e3, 1e-6);
  EXPECT_LE(f->estimated_gain_ns, result.ranks[0].split.part(TimePart::kComputeBound));

  EXPECT_EQ(Find(Advise(trace), "compute.block_dim"), nullptr);  // unknown chip: core counts unknown
}

TEST(PeerRules, DynamicShapeWhenEveryOperatorIsDynamic) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  side.AddKernelDetail(Row(side, "Add", "AI_VECTOR_CORE", 0, 10, 8, "dynamic"));
  side.AddKernelDetail(Row(side, "Mul", "AI_VECTOR_CORE", 10, 10, 8, "dynamic"));
  side.AddKernelDetail(Row(side, "hcom_allReduce_", "HCCL", 20, 10, 0, "N/A"));
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "config.dynamic_shape");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kConfig);
  EXPECT_DOUBLE_EQ(Number(*f, "dynamic_ops"), 2);
  EXPECT_DOUBLE_EQ(Number(*f, "ops_with_state"), 2);
  EXPECT_NE(std::find(f->apis.begin(), f->apis.end(), "torch_npu.npu.set_compile_mode(jit_compile=False)"),
            f->apis.end());

  side.AddKernelDetail(Row(side, "Sub", "AI_VECTOR_CORE", 30, 10, 8, "static"));
  EXPECT_EQ(Find(Advise(trace), "config.dynamic_shape"), nullptr);
}

TEST(PeerRules, AiCoreFrequencyBelowMax) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("a", Us(100), Us(200));  // 100..300 at 1800 MHz
  t.Kernel("b", Us(400), Us(200));  // 400..600: half at 1800, half at 1500 -> 1650 MHz, 8.3 % below
  t.Kernel("c", Us(700), Us(100));  // 700..800 at 1500 MHz, 16.7 % below
  t.mutable_builder()->AddCounterSample(ProcessKey{5, false}, "AI Core Freq/MHz", Us(500), 1500);
  t.mutable_builder()->AddCounterSample(ProcessKey{5, false}, "AI Core Freq/MHz", 0, 1800);
  const Trace trace = t.Finish();
  const HardwareProfile chip = Ascend910B2();
  for (const HardwareProfile* profile : {&chip, static_cast<const HardwareProfile*>(nullptr)}) {
    const AdvisorResult result = Advise(trace, profile);  // max 1800 from the profile, or the highest sample
    const Finding* f = Find(result, "compute.ai_core_frequency");
    ASSERT_NE(f, nullptr);
    EXPECT_DOUBLE_EQ(Number(*f, "slowed_tasks"), 2);
    EXPECT_DOUBLE_EQ(Number(*f, "slowed_task_us"), 300);
    const double lost_us = 200.0 * 150 / 1800 + 100.0 * 300 / 1800;
    EXPECT_NEAR(Number(*f, "lost_us"), lost_us, 1e-9);
    EXPECT_NEAR(*f->value, 100 * lost_us / 300, 1e-9);
    EXPECT_DOUBLE_EQ(Number(*f, "max_frequency_mhz"), 1800);
    EXPECT_DOUBLE_EQ(Number(*f, "min_frequency_mhz"), 1500);
    EXPECT_NEAR(f->uncapped_gain_ns, lost_us * 1e3, 1e-6);
  }
}

TEST(PeerRules, AiCoreFrequencyAtMaxIsQuiet) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("a", Us(100), Us(200));
  t.mutable_builder()->AddCounterSample(ProcessKey{5, false}, "AI Core Freq/MHz", 0, 1800);
  t.mutable_builder()->AddCounterSample(ProcessKey{5, false}, "AI Core Freq/MHz", Us(900), 1720);  // 4.4 % below
  const Trace trace = t.Finish();
  EXPECT_EQ(Find(Advise(trace), "compute.ai_core_frequency"), nullptr);
}

// `count` host API events named `name`, `dur_us` each, 10 us apart, in one 100 ms step.
Trace HostCalls(std::string_view name, int count, double dur_us) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(100000));
  t.Kernel("k", Us(50000), Us(1000));
  for (int i = 0; i < count; ++i) t.Host(EventKind::kRuntime, name, Us(10.0 + i * (dur_us + 10)), Us(dur_us));
  return t.Finish();
}

TEST(PeerRules, OperatorsCompiledOnline) {
  const Trace trace = HostCalls("AscendCL@aclopCompileAndExecute", 20, 50);
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "host.op_compile");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 20);
  EXPECT_DOUBLE_EQ(Number(*f, "compile_us"), 1000);
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(1000));
  EXPECT_LE(f->estimated_gain_ns, result.ranks[0].split.part(TimePart::kHostWait));
  // The db's CANN_API spells it without the level prefix.
  EXPECT_NE(Find(Advise(HostCalls("aclopCompileAndExecute", 20, 50)), "host.op_compile"), nullptr);
  EXPECT_EQ(Find(Advise(HostCalls("AscendCL@aclopCompileAndExecute", 19, 50)), "host.op_compile"), nullptr);
}

TEST(PeerRules, SyncBatchNorm) {
  const Trace trace = HostCalls("SyncBatchNorm", 21, 5);
  const AdvisorResult advice = Advise(trace);
  const Finding* f = Find(advice, "communication.sync_batchnorm");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "syncbn_events"), 21);
  EXPECT_DOUBLE_EQ(Number(*f, "syncbn_us"), 105);
  EXPECT_EQ(Find(Advise(HostCalls("SyncBatchNorm", 20, 5)), "communication.sync_batchnorm"), nullptr);
}

// `launches` Node@launch calls, the first `synced` of them each followed by a synchronize.
Trace Launches(int launches, int synced) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(10000));
  t.Kernel("k", Us(9000), Us(500));
  for (int i = 0; i < launches; ++i) {
    t.Host(EventKind::kRuntime, "Node@launch", Us(100.0 * i), Us(10));
    if (i < synced)
      t.Host(EventKind::kRuntime, "AscendCL@aclrtSynchronizeStreamWithTimeout", Us(100.0 * i + 20), Us(30));
  }
  return t.Finish();
}

TEST(PeerRules, SynchronizeStreamAfterEveryLaunch) {
  const Trace trace = Launches(4, 3);
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "host.synchronize_stream");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 75);
  EXPECT_DOUBLE_EQ(Number(*f, "launches"), 4);
  EXPECT_DOUBLE_EQ(Number(*f, "synchronizes"), 3);
  EXPECT_DOUBLE_EQ(Number(*f, "launch_then_synchronize"), 3);
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, result.ranks[0].split.part(TimePart::kHostWait));
  EXPECT_EQ(Find(Advise(Launches(4, 2)), "host.synchronize_stream"), nullptr);  // 50 %: not above
}

TEST(PeerRules, LongGarbageCollections) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(10000));
  t.Kernel("k", Us(5000), Us(500));
  t.Host(EventKind::kOther, "GC", Us(100), Us(1500));
  t.Host(EventKind::kOther, "GC", Us(2000), Us(999));  // below 1000 us
  const Trace trace = t.Finish();
  const AdvisorResult result = Advise(trace);
  const Finding* f = Find(result, "host.gc");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "gc_events"), 1);
  EXPECT_DOUBLE_EQ(Number(*f, "gc_us"), 1500);
  EXPECT_DOUBLE_EQ(Number(*f, "longest_gc_us"), 1500);
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(1500));
  EXPECT_EQ(Find(Advise(HostCalls("GC", 3, 999)), "host.gc"), nullptr);
}

TEST(PeerRules, AllocatorApiTime) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(100000));
  t.Kernel("k", Us(50000), Us(1000));
  t.Host(EventKind::kRuntime, "AscendCL@aclMallocMemInner", Us(100), Us(6000));
  t.Host(EventKind::kRuntime, "AscendCL@aclrtFree", Us(7000), Us(4000));
  t.Host(EventKind::kRuntime, "AscendCL@aclrtFreePhysical", Us(12000), Us(1000));
  t.Host(EventKind::kRuntime, "AscendCL@aclrtFreeHost", Us(14000), Us(9000));  // not a device free
  const Trace trace = t.Finish();
  const AdvisorResult advice = Advise(trace);
  const Finding* f = Find(advice, "memory.allocator_api");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 11);
  EXPECT_DOUBLE_EQ(Number(*f, "allocator_calls"), 3);
  EXPECT_DOUBLE_EQ(Number(*f, "allocator_us"), 11000);
  EXPECT_EQ(Find(Advise(HostCalls("AscendCL@aclMallocMemInner", 2, 5000)), "memory.allocator_api"), nullptr);  // 10 ms
}

TEST(PeerRules, SdmaBandwidthContentionWithMatmuls) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  side.AddKernelDetail(Row(side, "MatMulV2", "AI_CORE", 1000, 100));    // 1000..1100 us
  side.AddKernelDetail(Row(side, "Add", "AI_VECTOR_CORE", 3000, 100));  // not a matmul
  CommunicationTables* comm = side.mutable_communication();
  comm->ops_present = true;
  auto add_op = [&](std::string_view name, double start_us, double elapse_ms, double gbps) {
    HcclTransportTraffic sdma;
    sdma.transport = side.Intern("SDMA");
    sdma.transit_size_mb = 10;
    sdma.bandwidth_gbps = gbps;
    HcclOpTime op;
    op.op_name = side.Intern(name);
    op.start_us = start_us;
    op.elapse_ms = elapse_ms;
    op.first_traffic = static_cast<uint32_t>(comm->traffic.size());
    op.traffic_count = 1;
    comm->traffic.push_back(sdma);
    comm->ops.push_back(op);
  };
  add_op("hcom_allReduce__1", 1050, 0.2, 10);  // overlaps the matmul, slow
  add_op("hcom_allReduce__2", 1090, 0.1, 20);  // overlaps, fast enough
  add_op("hcom_allReduce__3", 3000, 0.1, 5);   // slow but beside an Add only
  const AdvisorResult advice = Advise(trace);
  const Finding* f = Find(advice, "communication.bandwidth_contention");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "contended_ops"), 1);
  EXPECT_DOUBLE_EQ(Number(*f, "sdma_ops"), 3);
  EXPECT_DOUBLE_EQ(Number(*f, "contended_ms"), 0.2);
  EXPECT_DOUBLE_EQ(*f->value, 10);
  EXPECT_DOUBLE_EQ(*f->threshold, 14.4);
  EXPECT_EQ(Text(*f, "ops"), "hcom_allReduce__1 (10.00 GB/s)");

  comm->traffic[0].bandwidth_gbps = 14.4;  // at the threshold: quiet
  EXPECT_EQ(Find(Advise(trace), "communication.bandwidth_contention"), nullptr);
}

// Kernels on `devices` GPUs (Kineto pid = ordinal) under a `wrapper` range.
Trace Wrapped(std::string_view wrapper, int devices, std::string_view comm_range = "", int64_t compute_major = kNoId) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, wrapper, Us(10), Us(500));
  if (!comm_range.empty()) t.Host(EventKind::kUserAnnotation, comm_range, Us(600), Us(100));
  TraceBuilder* b = t.mutable_builder();
  for (int d = 0; d < devices; ++d) {
    if (compute_major != kNoId) {
      Device gpu;
      gpu.type = DeviceType::kGpu;
      gpu.id = d;
      gpu.name = b->Intern("NVIDIA A100-SXM4-80GB");
      gpu.compute_major = compute_major;
      gpu.compute_minor = 0;
      b->AddDevice(gpu);
    }
    EventRecord k;
    k.ts_ns = Us(100);
    k.dur_ns = Us(300);
    k.track = b->TrackFor(ProcessKey{d, false}, ProcessKey{7, false});
    k.name = b->Intern("sm80_xmma_gemm");
    k.category = b->Intern("kernel");
    k.kind = EventKind::kKernel;
    b->AddEvent(k);
  }
  return t.Finish();
}

TEST(PeerRules, DataParallelOnSeveralDevices) {
  const Trace trace = Wrapped("DataParallel.forward", 2);
  const AdvisorResult advice = Advise(trace);
  const Finding* f = Find(advice, "communication.data_parallel");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "devices_with_work"), 2);
  EXPECT_NE(f->apis.front().view().find("DistributedDataParallel"), std::string::npos);
  EXPECT_EQ(Find(Advise(Wrapped("DataParallel.forward", 1)), "communication.data_parallel"), nullptr);
  EXPECT_EQ(Find(Advise(Wrapped("DistributedDataParallel.forward", 2)), "communication.data_parallel"), nullptr);
}

TEST(PeerRules, DdpWithoutNcclOnGpus) {
  const Trace gloo = Wrapped("DistributedDataParallel.forward", 1, "gloo:all_reduce", 8);
  const AdvisorResult advice = Advise(gloo);
  const Finding* f = Find(advice, "communication.ddp_backend");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "backend"), "gloo");
  EXPECT_DOUBLE_EQ(Number(*f, "compute_capability"), 8);
  EXPECT_EQ(f->apis.front(), "torch.distributed.init_process_group(backend=\"nccl\")");
  // NCCL in use, or no GPU whose compute capability is known: quiet.
  EXPECT_EQ(
      Find(Advise(Wrapped("DistributedDataParallel.forward", 1, "nccl:all_reduce", 8)), "communication.ddp_backend"),
      nullptr);
  EXPECT_EQ(Find(Advise(Wrapped("DistributedDataParallel.forward", 1, "gloo:all_reduce")), "communication.ddp_backend"),
            nullptr);
  EXPECT_EQ(
      Find(Advise(Wrapped("DistributedDataParallel.forward", 1, "gloo:all_reduce", 3)), "communication.ddp_backend"),
      nullptr);
}

TEST(PeerRules, UnalignedSdmaTransfers) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("k", 0, Us(500));
  TraceBuilder* b = t.mutable_builder();
  auto task = [&](std::string_view name, double at_us, double dur_us, int64_t bytes, std::string_view transport,
                  std::string_view link) {
    const uint32_t event = t.Device(EventKind::kCollective, name, Us(at_us), Us(dur_us), kNoId, 20);
    b->AddHcclTaskInfo(HcclTaskInfo{event, bytes, b->Intern(transport), b->Intern(link), 10});
  };
  task("Memcpy", 600, 10, 4096, "SDMA", "HCCS");         // aligned
  task("Memcpy", 620, 20, 4100, "SDMA", "HCCS");         // unaligned
  task("Reduce_Inline", 650, 30, 1000, "SDMA", "HCCS");  // unaligned
  task("Memcpy", 700, 40, 4100, "SDMA", "ON_CHIP");      // on chip: not checked
  task("Memcpy", 750, 5, 500, "SDMA", "HCCS");           // not above 512 B: not checked
  task("Notify_Wait", 760, 5, 4100, "SDMA", "HCCS");     // not a data task
  task("Memcpy", 800, 5, 4100, "RDMA", "ROCE");          // not SDMA
  const Trace trace = t.Finish();
  const AdvisorResult advice = Advise(trace);
  const Finding* f = Find(advice, "communication.byte_alignment");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 2);
  EXPECT_DOUBLE_EQ(Number(*f, "alignment_bytes"), 512);
  EXPECT_DOUBLE_EQ(Number(*f, "unaligned_tasks"), 2);
  EXPECT_DOUBLE_EQ(Number(*f, "unaligned_task_us"), 50);
  EXPECT_DOUBLE_EQ(Number(*f, "unaligned_bytes"), 5100);
  EXPECT_DOUBLE_EQ(Number(*f, "checked_tasks"), 3);
  EXPECT_DOUBLE_EQ(Number(*f, "unaligned_time_pct"), 50.0 / 60 * 100);
}

TEST(PeerRules, AlignedSdmaTransfersAreQuiet) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  TraceBuilder* b = t.mutable_builder();
  const uint32_t event = t.Device(EventKind::kCollective, "Memcpy", Us(10), Us(10), kNoId, 20);
  b->AddHcclTaskInfo(HcclTaskInfo{event, 8192, b->Intern("SDMA"), b->Intern("HCCS"), 10});
  const Trace trace = t.Finish();
  EXPECT_EQ(Find(Advise(trace), "communication.byte_alignment"), nullptr);
}

}  // namespace
}  // namespace tuneprof

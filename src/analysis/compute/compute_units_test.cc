#include "analysis/compute/compute_units.h"

#include <gtest/gtest.h>

#include <limits>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"
#include "text_cases.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

constexpr int64_t kSms = 4;  // a small GPU keeps the blocks-per-SM arithmetic by hand easy
constexpr int64_t kMaxThreadsPerSm = 2048;

struct Launch {
  int64_t grid = kNoId;           // blocks (x; y = z = 1)
  int64_t block = kNoId;          // threads per block
  double occupancy = -1;          // Kineto's est. achieved occupancy, 0..1
  double blocks_per_sm_arg = -1;  // Kineto's "blocks per SM", when the producer wrote it
};

class ComputeUnitsTest : public ::testing::Test {
 protected:
  ComputeUnitsTest() {
    Device gpu;
    gpu.type = DeviceType::kGpu;
    gpu.id = 0;  // hand-built GPU events are on pid 0
    gpu.name = hand_.mutable_builder()->Intern("Test GPU");
    gpu.num_sms = kSms;
    gpu.max_threads_per_sm = kMaxThreadsPerSm;
    gpu.from_properties = true;
    hand_.mutable_builder()->AddDevice(gpu);
  }

  uint32_t Kernel(std::string_view name, int64_t ts, int64_t dur, const Launch& launch, int64_t stream = 7,
                  int64_t correlation = kNoId) {
    const uint32_t event = hand_.Device(EventKind::kKernel, name, ts, dur, correlation, stream);
    KernelInfo info;
    info.event = event;
    info.grid[0] = launch.grid;
    info.block[0] = launch.block;
    if (launch.grid != kNoId) info.grid[1] = info.grid[2] = 1;
    if (launch.block != kNoId) info.block[1] = info.block[2] = 1;
    info.achieved_occupancy = launch.occupancy;
    info.blocks_per_sm = launch.blocks_per_sm_arg;
    hand_.mutable_builder()->AddKernelInfo(info);
    return event;
  }

  RankComputeUnits Measure() {
    trace_ = hand_.Finish();
    breakdown_ = ComputeTimeBreakdown(trace_);
    return ComputeRankComputeUnits(trace_, breakdown_, HardwareSelection{});
  }

  HandBuiltTrace hand_;
  Trace trace_;
  RankBreakdown breakdown_;
};

// Three kernels one after the other and a 100 us gap, on a 4-SM GPU with 2048 threads per SM:
//   [0, 100)   grid 2  -> 0.5 blocks/SM,  256 threads, occupancy 25 %  -> 2 resident: one (half) wave
//   [100, 200) grid 8  -> 2 blocks/SM (capped at 1), 512 threads, 50 %, named tensor-core -> 2 resident: 1 wave
//   [300, 400) grid 1  -> 0.25 blocks/SM, 128 threads, 6.25 %          -> 0.25 of a wave
// Serving figures from request#i / prefill / decode_step, and MBU from --model-params: 1000 params ×
// 2 B per 20 µs decode step at 1 GB/s = 2000 B / 20e-6 s / 1e9 B/s = 0.1.
TEST(ServingTest, TtftTpotTokensAndMbu) {
  HandBuiltTrace hand;
  hand.Host(EventKind::kUserAnnotation, "request#0", Us(0), Us(100));
  hand.Host(EventKind::kUserAnnotation, "prefill", Us(0), Us(40));
  hand.Host(EventKind::kUserAnnotation, "decode_step", Us(40), Us(20));
  hand.Host(EventKind::kUserAnnotation, "decode_step", Us(60), Us(20));
  const Trace trace = hand.Finish();
  HardwareProfile chip;
  chip.memory_gb_per_s.value = 1;
  HardwareSelection selection;
  selection.profile = &chip;
  ComputeOptions options;
  options.model_params = 1000;
  const RankComputeUnits c = ComputeRankComputeUnits(trace, RankBreakdown{}, selection, options);
  ASSERT_TRUE(c.serving.has_value());
  EXPECT_EQ(c.serving->requests, 1u);
  EXPECT_EQ(c.serving->decode_steps, 2u);
  EXPECT_DOUBLE_EQ(*c.serving->ttft_ns, Us(40));
  EXPECT_DOUBLE_EQ(*c.serving->tpot_ns, Us(20));
  EXPECT_DOUBLE_EQ(*c.serving->decode_tokens_per_s, 2 / 40e-6);
  EXPECT_DOUBLE_EQ(*c.serving->mbu, 2000 / 20e-6 / 1e9);
  EXPECT_FALSE(ComputeRankComputeUnits(trace, RankBreakdown{}, HardwareSelection{}, options).serving->mbu);
  EXPECT_FALSE(c.verdict.bottleneck.has_value());  // no device work: nothing measured the units
}

TEST_F(ComputeUnitsTest, SequentialKernelsFollowThePluginDefinitions) {
  Kernel("elementwise_kernel", Us(0), Us(100), Launch{2, 256, 0.25});
  Kernel("sm80_xmma_gemm_f16f16_f16f32", Us(100), Us(100), Launch{8, 512, 0.5});
  Kernel("reduce_kernel", Us(300), Us(100), Launch{1, 128, 0.0625});
  const RankComputeUnits c = Measure();

  ASSERT_EQ(c.steps.size(), 1u);
  const GpuUnitSums& g = c.total.gpu;
  EXPECT_EQ(g.wall_ns, Us(400));
  EXPECT_EQ(g.kernels, 3u);
  EXPECT_DOUBLE_EQ(*g.BusyPct(), 75.0);
  EXPECT_DOUBLE_EQ(*g.SmEfficiency(), (0.5 * 100 + 1.0 * 100 + 0.25 * 100) / 400);
  EXPECT_DOUBLE_EQ(*g.AchievedOccupancy(), (0.25 + 0.5 + 0.0625) / 3);
  EXPECT_DOUBLE_EQ(*g.TensorCoreShare(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(*g.WavesPerSm(), (0.5 + 1.0 + 0.25) / 3);
  EXPECT_EQ(c.gpu_kernels, 3u);
  EXPECT_FALSE(c.mfu.has_value());
  EXPECT_FALSE(c.cube_ratio.has_value());
  // The verdict on a GPU is the estimated SM efficiency against 70 %: 43.75 % is a bottleneck.
  EXPECT_EQ(c.verdict.unit, "sm");
  EXPECT_DOUBLE_EQ(*c.verdict.utilization, *g.SmEfficiency());
  EXPECT_EQ(c.verdict.bottleneck, std::optional<bool>(true));
  ASSERT_EQ(c.verdict.steps.size(), 1u);
  EXPECT_EQ(c.verdict.steps[0].bottleneck, std::optional<bool>(true));
}

// Low utilization on a device idle most of its step is not a compute bottleneck: 300 us of kernels in a
// 1,300 us window leave 1,000 us free, the largest part.
TEST_F(ComputeUnitsTest, IdleDeviceIsNotComputeBound) {
  Kernel("elementwise_kernel", Us(0), Us(100), Launch{2, 256, 0.25});
  Kernel("reduce_kernel", Us(1200), Us(200), Launch{1, 128, 0.0625});
  const RankComputeUnits c = Measure();
  ASSERT_TRUE(c.verdict.utilization.has_value());
  EXPECT_LT(*c.verdict.utilization, 0.7);
  EXPECT_DOUBLE_EQ(*c.verdict.compute_share, 300.0 / 1400);
  EXPECT_FALSE(c.verdict.compute_material);
  EXPECT_EQ(c.verdict.bottleneck, std::optional<bool>(false));
  ASSERT_EQ(c.verdict.steps.size(), 1u);
  EXPECT_EQ(c.verdict.steps[0].bottleneck, std::optional<bool>(false));
}

// Overlapping kernels: blocks per SM add up while both run and are capped at 1 there, as the plugin's
// merge_ranges_with_value does: 0.6 × 50 + 1 × 50 + 0.6 × 50 over 150 us.
TEST_F(ComputeUnitsTest, OverlappingKernelsAddBlocksPerSmUpToOne) {
  Kernel("a", Us(0), Us(100), Launch{kNoId, kNoId, -1, 0.6}, /*stream=*/7);
  Kernel("b", Us(50), Us(100), Launch{kNoId, kNoId, -1, 0.6}, /*stream=*/8);
  const GpuUnitSums g = Measure().total.gpu;
  EXPECT_DOUBLE_EQ(*g.BusyPct(), 100.0);
  EXPECT_NEAR(*g.SmEfficiency(), (0.6 * 50 + 1.0 * 50 + 0.6 * 50) / 150, 1e-12);
  EXPECT_FALSE(g.AchievedOccupancy().has_value());
  EXPECT_FALSE(g.WavesPerSm().has_value());
}

// Kineto's "blocks per SM" arg wins over the grid (it used the device's real SM count).
TEST_F(ComputeUnitsTest, BlocksPerSmArgWinsOverTheGrid) {
  Kernel("k", Us(0), Us(10), Launch{400, 128, -1, 0.25});
  EXPECT_DOUBLE_EQ(*Measure().total.gpu.SmEfficiency(), 0.25);
}

// A grid whose dimensions multiply past int64 (a damaged trace) is no launch configuration, not an overflow.
TEST_F(ComputeUnitsTest, GridPastInt64IsUnknown) {
  const uint32_t event = hand_.Device(EventKind::kKernel, "huge_grid", Us(0), Us(10), kNoId, 7);
  KernelInfo info;
  info.event = event;
  info.grid[0] = info.grid[1] = info.grid[2] = int64_t{1} << 40;
  info.block[0] = std::numeric_limits<int64_t>::max();
  info.block[1] = info.block[2] = 4;
  hand_.mutable_builder()->AddKernelInfo(info);
  const RankComputeUnits c = Measure();
  EXPECT_EQ(c.gpu_kernels, 0u);
  EXPECT_FALSE(c.total.gpu.WavesPerSm().has_value());
}

// More blocks than fit at once: 64 blocks on 4 SMs = 16 per SM, 2 resident (1024 threads at 100 %): 8 waves.
TEST_F(ComputeUnitsTest, WavesCountRoundsOfResidentBlocks) {
  Kernel("big_grid", Us(0), Us(10), Launch{64, 1024, 1.0});
  const GpuUnitSums g = Measure().total.gpu;
  EXPECT_DOUBLE_EQ(*g.WavesPerSm(), 8.0);
  EXPECT_DOUBLE_EQ(*g.SmEfficiency(), 1.0);
}

// Per step over the step's device span; the total is the sum of the steps' integrals over their walls.
TEST_F(ComputeUnitsTest, StepsAndTotal) {
  hand_.Step(1, Us(0), Us(1000));
  hand_.Launch(Us(10), 1);
  hand_.Launch(Us(20), 2);
  hand_.Step(2, Us(1000), Us(1000));
  hand_.Launch(Us(1010), 3);
  hand_.Launch(Us(1020), 4);
  Kernel("k1", Us(100), Us(100), Launch{4, 128}, 7, 1);  // 1 block/SM
  Kernel("k2", Us(200), Us(100), Launch{2, 128}, 7, 2);  // 0.5
  Kernel("k3", Us(1100), Us(50), Launch{4, 128}, 7, 3);  // 1
  Kernel("k4", Us(1250), Us(50), Launch{4, 128}, 7, 4);  // 1
  const RankComputeUnits c = Measure();

  ASSERT_EQ(c.steps.size(), 2u);
  EXPECT_EQ(c.steps[0].step, 1);
  EXPECT_DOUBLE_EQ(*c.steps[0].gpu.BusyPct(), 100.0);
  EXPECT_DOUBLE_EQ(*c.steps[0].gpu.SmEfficiency(), 0.75);
  EXPECT_DOUBLE_EQ(*c.steps[1].gpu.BusyPct(), 50.0);
  EXPECT_DOUBLE_EQ(*c.steps[1].gpu.SmEfficiency(), 0.5);
  EXPECT_DOUBLE_EQ(*c.total.gpu.BusyPct(), 75.0);
  EXPECT_DOUBLE_EQ(*c.total.gpu.SmEfficiency(), 0.625);
}

// Kernels without a launch configuration still make the GPU busy; the estimates stay unknown.
TEST_F(ComputeUnitsTest, NoLaunchConfigurationLeavesEstimatesUnknown) {
  hand_.Kernel("kernel_without_args", Us(0), Us(10));
  hand_.Kernel("another", Us(20), Us(10));
  const RankComputeUnits c = Measure();
  EXPECT_DOUBLE_EQ(*c.total.gpu.BusyPct(), 100.0 * 20 / 30);
  EXPECT_FALSE(c.total.gpu.SmEfficiency().has_value());
  EXPECT_FALSE(c.total.gpu.AchievedOccupancy().has_value());
  EXPECT_EQ(c.gpu_kernels, 0u);
}

TEST(TensorCoreNamesTest, PluginPatternsAndNewerLibraries) {
  const test_support::TextCase<bool> kCases[] = {
      {"volta_h884gemm_64x64_ldg8_nn", true},
      {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn", true},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>", true},
      {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw", true},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", true},
      {"nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NTN", true},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", true},
      {"ampere_sgemm_32x32_sliced1x4_tn", false},
      {"void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>", false},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", false},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", false},
  };
  test_support::ExpectEachCase(UsesTensorCores, kCases);
}

TEST(TensorCoreNamesTest, AmdMatrixCoreKernels) {
  // hipBLASLt / Tensile MFMA GEMMs, by matrix instruction and by half / bf16 data type.
  const test_support::TextCase<bool> kCases[] = {
      {"Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1", true},
      {"Cijk_Ailk_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB1_AFC1", true},
      {"Custom_Cijk_Alik_Bljk_HB_MT128x128x32_SN", true},
      {"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<>>", true},
      {"void ck_tile::kentry<ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVS>>", true},
      {"void ck_tile::kentry<ck_tile::GemmKernel<ck_tile::GemmPipelineAgBgCrCompV3>>", true},
      {"_ZN5aiter21fmoe_bf16_g1u1_silu_kernelEv", true},
  };
  test_support::ExpectEachCase(UsesTensorCores, kCases);
  // Vector-unit kernels of the same libraries: a float Tensile GEMM without a matrix instruction,
  // ck_tile normalisation, aiter elementwise.
  EXPECT_FALSE(UsesTensorCores("Cijk_Ailk_Bljk_SB_MT64x64x16_SN_GRVW4_TT4_4"));
  EXPECT_FALSE(UsesTensorCores("Cijk_Ailk_Bljk_S_MT64x64x8_MIx_SN"));
  EXPECT_FALSE(
      UsesTensorCores("void ck_tile::kentry<ck_tile::Layernorm2dFwd<ck_tile::Layernorm2dFwdPipelineOnePass>>"));
  EXPECT_FALSE(UsesTensorCores("void aiter::add_kernel<bf16>"));
}

// ---- Ascend kernel_details PMU ratios

struct PmuRow {
  int64_t step;
  std::string_view type;
  std::string_view core;
  double dur_us;
  double aicore_us, mac, scalar, mte2;  // NaN: the cell was N/A
  double aiv_us, vec, vmte2, vmte3;
};

Trace AscendTrace(const std::vector<PmuRow>& rows) {
  HandBuiltTrace hand;
  Trace trace = hand.Finish();
  SideTableBuilder out(&trace);
  out.StartKernelDetails();
  const std::string_view columns[] = {"aicore_time(us)", "aic_mac_ratio", "aic_scalar_ratio", "aic_mte2_ratio",
                                      "aiv_time(us)",    "aiv_vec_ratio", "aiv_mte2_ratio",   "aiv_mte3_ratio"};
  for (const PmuRow& r : rows) {
    NpuOpRow row;
    row.step = r.step;
    row.type = out.Intern(r.type);
    row.name = out.Intern(r.type);
    row.accelerator_core = out.Intern(r.core);
    row.dur_ns = Us(r.dur_us);
    row.block_dim = 10;
    const uint32_t index = out.AddKernelDetail(row);
    const double values[] = {r.aicore_us, r.mac, r.scalar, r.mte2, r.aiv_us, r.vec, r.vmte2, r.vmte3};
    for (size_t c = 0; c < std::size(columns); ++c)
      out.SetKernelMetric(out.KernelMetricColumn(columns[c]), index, values[c]);
  }
  return trace;
}

constexpr double kNa = std::numeric_limits<double>::quiet_NaN();

// The contract's sums by hand: cube = Σ mac·aicore / Σ aicore over rows with both numbers (the HCCL row
// has N/A), vector = Σ vec·aiv / Σ aiv, scalar = Σ aic_scalar·aicore / Σ aicore; per step and op type.
TEST(AscendUnitsTest, RatiosAreTimeWeightedPerRankStepAndOpType) {
  const Trace trace = AscendTrace({
      {1, "MatMulV2", "AI_CORE", 100, 90, 0.9, 0.1, 0.5, 0, 0, 0, 0},
      {1, "Add", "AI_VECTOR_CORE", 50, 0, 0, 0, 0, 40, 0.2, 0.75, 0.1},
      {2, "MatMulV2", "AI_CORE", 300, 280, 0.5, 0.2, 0.96, 0, 0, 0, 0},
      {2, "hcom_allReduce_", "HCCL", 500, kNa, kNa, kNa, kNa, kNa, kNa, kNa, kNa},
  });
  HardwareProfile chip;
  chip.cube_cores.value = 20;
  chip.vector_cores.value = 40;
  HardwareSelection selection;
  selection.profile = &chip;
  const RankComputeUnits c = ComputeRankComputeUnits(trace, RankBreakdown{}, selection);

  ASSERT_TRUE(c.ascend.present);
  EXPECT_DOUBLE_EQ(*c.cube_ratio, (0.9 * 90 + 0.5 * 280) / 370);
  EXPECT_DOUBLE_EQ(*c.vector_ratio, 0.2);
  EXPECT_DOUBLE_EQ(*c.scalar_ratio, (0.1 * 90 + 0.2 * 280) / 370);
  EXPECT_EQ(c.ascend.total.rows, 4u);
  EXPECT_FALSE(c.ascend.total.Ratio(AscendRatio::kCubeUtilization).has_value());  // column absent

  ASSERT_EQ(c.ascend.steps.size(), 2u);
  EXPECT_EQ(c.ascend.steps[0].step, 1);
  EXPECT_DOUBLE_EQ(*c.ascend.steps[0].sums.Ratio(AscendRatio::kAicMac), 0.9);
  EXPECT_DOUBLE_EQ(*c.ascend.steps[1].sums.Ratio(AscendRatio::kAicMac), 0.5);

  ASSERT_EQ(c.ascend.op_types.size(), 3u);  // by time: hcom 500, MatMulV2 400, Add 50
  EXPECT_EQ(c.ascend.op_types[0].type, "hcom_allReduce_");
  EXPECT_EQ(c.ascend.op_types[0].unit, "other");
  EXPECT_EQ(c.ascend.op_types[0].bound, AscendBound::kUnknown);
  const AscendOpTypeUnits& mm = c.ascend.op_types[1];
  EXPECT_EQ(mm.unit, "cube");
  EXPECT_DOUBLE_EQ(*mm.sums.Ratio(AscendRatio::kAicMte2), (0.5 * 90 + 0.96 * 280) / 370);
  EXPECT_EQ(mm.bound, AscendBound::kNone);  // mac 0.60 < 0.8, mte2 0.85 < 0.95
  EXPECT_EQ(mm.below_threshold, std::optional<bool>(true));
  EXPECT_DOUBLE_EQ(*mm.sums.BlockOccupancy(), 0.5);  // 10 blocks of 20 cube cores
  const AscendOpTypeUnits& add = c.ascend.op_types[2];
  EXPECT_EQ(add.unit, "vector");
  EXPECT_EQ(add.bound, AscendBound::kMte2);  // aiv mte2 0.75 >= 0.7
  EXPECT_DOUBLE_EQ(*add.sums.BlockOccupancy(), 0.25);
  ASSERT_EQ(add.cores.size(), 1u);
  EXPECT_EQ(add.cores[0].core, "AI_VECTOR_CORE");
}

// The verdict: more PMU time on AI Cores than on vector cores, so Cube is the main unit; 0.60 < 0.7 is a
// bottleneck for the rank and step 2 (0.5), not step 1 (0.9); op types below the threshold by time.
TEST(AscendUnitsTest, VerdictNamesTheMainUnitAndTheOpsBelowTheThreshold) {
  const Trace trace = AscendTrace({
      {1, "MatMulV2", "AI_CORE", 100, 90, 0.9, 0.1, 0.5, 0, 0, 0, 0},
      {1, "Add", "AI_VECTOR_CORE", 50, 0, 0, 0, 0, 40, 0.2, 0.75, 0.1},
      {2, "MatMulV2", "AI_CORE", 300, 280, 0.5, 0.2, 0.96, 0, 0, 0, 0},
  });
  const ComputeVerdict v = ComputeRankComputeUnits(trace, RankBreakdown{}, HardwareSelection{}).verdict;
  EXPECT_EQ(v.unit, "cube");
  EXPECT_DOUBLE_EQ(*v.utilization, (0.9 * 90 + 0.5 * 280) / 370);
  EXPECT_EQ(v.bottleneck, std::optional<bool>(true));
  EXPECT_EQ(v.ops, (std::vector<std::string>{"MatMulV2", "Add"}));
  ASSERT_EQ(v.steps.size(), 2u);
  EXPECT_EQ(v.steps[0].bottleneck, std::optional<bool>(false));
  EXPECT_EQ(v.steps[1].bottleneck, std::optional<bool>(true));

  ComputeOptions lenient;
  lenient.threshold = 0.5;
  EXPECT_EQ(ComputeRankComputeUnits(trace, RankBreakdown{}, HardwareSelection{}, lenient).verdict.bottleneck,
            std::optional<bool>(false));
}

TEST(AscendUnitsTest, HuaweiCutOffsPickTheBoundingUnit) {
  auto bound = [](std::vector<PmuRow> rows) {
    const Trace trace = AscendTrace(rows);
    return ComputeAscendUnits(trace, nullptr, 0.7).op_types.at(0).bound;
  };
  EXPECT_EQ(bound({{1, "MatMul", "AI_CORE", 10, 10, 0.8, 0, 0.99, 0, 0, 0, 0}}), AscendBound::kMac);
  EXPECT_EQ(bound({{1, "MatMul", "MIX_AIC", 10, 10, 0.79, 0, 0.95, 0, 0, 0, 0}}), AscendBound::kMte2);
  EXPECT_EQ(bound({{1, "Mul", "AI_VECTOR_CORE", 10, 0, 0, 0, 0, 10, 0.7, 0.9, 0.9}}), AscendBound::kVec);
  EXPECT_EQ(bound({{1, "Mul", "AI_VECTOR_CORE", 10, 0, 0, 0, 0, 10, 0.1, 0.1, 0.7}}), AscendBound::kMte3);
  EXPECT_EQ(bound({{1, "Mul", "MIX_AIV", 10, 0, 0, 0, 0, 10, 0.3, 0.3, 0.35}}), AscendBound::kVecMte);
  EXPECT_EQ(bound({{1, "Mul", "AI_VECTOR_CORE", 10, 0, 0, 0, 0, 10, 0.3, 0.3, 0.2}}), AscendBound::kNone);
}

TEST(AscendUnitsTest, NoPmuColumnsMeansNull) {
  HandBuiltTrace hand;
  Trace trace = hand.Finish();
  SideTableBuilder out(&trace);
  out.StartKernelDetails();
  NpuOpRow row;
  row.dur_ns = Us(5);
  out.AddKernelDetail(row);
  const RankComputeUnits c = ComputeRankComputeUnits(trace, RankBreakdown{}, HardwareSelection{});
  EXPECT_FALSE(c.ascend.present);
  EXPECT_FALSE(c.cube_ratio.has_value());
  EXPECT_FALSE(c.vector_ratio.has_value());
  EXPECT_FALSE(c.scalar_ratio.has_value());
}

}  // namespace
}  // namespace tuneprof

#include "analysis/core/chip_inference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string_view>

#include <map>
#include <string>

#include "analysis/core/builtin_profiles_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"
#include "text_cases.h"

namespace tuneprof {
namespace {

const HardwareProfiles& Builtin() { return testing_support::BuiltinProfiles(); }

bool Has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// The hardware selected for a trace of one kernel named `kernel`, `forced` as --hardware names it.
HardwareSelection SelectForKernel(std::string_view kernel, const HardwareProfile* forced = nullptr) {
  hand_built::HandBuiltTrace hand;
  hand.Kernel(kernel, 0, 1000);
  return SelectHardware(hand.Finish(), Builtin(), forced);
}

TEST(ChipInferenceTest, ReadsArchitectureTagsInKernelNames) {
  const test_support::TextCase<int64_t> kCases[] = {
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 90},
      {"cutlass3x_sm90_tensorop_gemm_bf16", 90},
      {"void cutlass::Kernel<cutlass::arch::Sm80, float>", 80},
      {"sm100_xmma_gemm", 100},
      {"sm90a_kernel", 90},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x256_32x3_nn_align4>", 80},
      {"cutlass_tensorop_gemm", 0},      // CUTLASS without an architecture
      {"sm80_xmma then sm86_xmma", 86},  // the highest
      // Not tags: part of a word, too short, too long, out of range, or no digits at all.
      {"gsm80_kernel", 0},
      {"sm8_kernel", 0},
      {"sm9000", 0},
      {"sm20_legacy", 0},
      {"smem_reduce", 0},
      {"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", 0},
  };
  test_support::ExpectEachCase(KernelNameCapability, kCases);
}

// Kernels named for Hopper with no device name: three profiles are Hopper, so the documented default
// (H100 SXM) is assumed and the others named, never silently chosen.
TEST(ChipInferenceTest, HopperKernelsAssumeTheArchitecturesDefaultAndNameTheOthers) {
  hand_built::HandBuiltTrace hand;
  hand.Kernel("sm90_xmma_gemm_bf16", 0, 1000);
  hand.Kernel("elementwise_kernel", 2000, 1000);
  const Trace trace = hand.Finish();
  const ChipEvidence evidence = CollectChipEvidence(trace);
  EXPECT_EQ(evidence.min_capability, 90);
  EXPECT_TRUE(evidence.from_tag);
  EXPECT_EQ(evidence.tagged_kernels, 1);
  const HardwareSelection selection = SelectHardware(trace, Builtin(), nullptr);
  ASSERT_NE(selection.profile, nullptr);
  EXPECT_EQ(selection.profile->name, "H100 SXM");
  EXPECT_TRUE(selection.inferred);
  EXPECT_TRUE(Has(selection.how, "assumed from sm90 kernels")) << selection.how;
  EXPECT_TRUE(Has(selection.how, "\"H100 PCIe\"")) << selection.how;
  EXPECT_TRUE(Has(selection.how, "\"H200 SXM\"")) << selection.how;
  EXPECT_TRUE(Has(selection.how, "pass --hardware to override")) << selection.how;
  EXPECT_EQ(selection.label, "H100 SXM (assumed from sm90 kernels; pass --hardware to override)");
}

// Clusters of 2 blocks, 66 of them at once: at least 132 SMs, which rules the H100 PCIe (114) out.
TEST(ChipInferenceTest, ClusterLaunchesBoundTheArchitectureAndTheSmCount) {
  hand_built::HandBuiltTrace hand;
  KernelInfo info;
  info.event = hand.Kernel("flash_fwd_kernel", 0, 1000);
  info.cluster_blocks = 2;
  info.max_active_clusters = 66;
  hand.mutable_builder()->AddKernelInfo(info);
  const Trace trace = hand.Finish();
  const ChipEvidence evidence = CollectChipEvidence(trace);
  EXPECT_EQ(evidence.min_capability, 90);
  EXPECT_FALSE(evidence.from_tag);
  EXPECT_EQ(evidence.min_sms, 132);
  const HardwareSelection selection = InferHardware(evidence, Builtin());
  ASSERT_NE(selection.profile, nullptr);
  EXPECT_EQ(selection.profile->name, "H100 SXM");
  EXPECT_TRUE(Has(selection.how, "(at least 132 SMs)")) << selection.how;
  EXPECT_FALSE(Has(selection.how, "H100 PCIe")) << selection.how;
  EXPECT_TRUE(Has(selection.how, "\"H200 SXM\"")) << selection.how;
}

// An AMD device without a profile is pointed at AMD parts only, never at a Hopper of the same 9.x.
TEST(ChipInferenceTest, UnmatchedAmdDeviceNamesAmdParts) {
  const std::string how = UnmatchedDeviceHow("AMD Instinct MI308X", 9, 4, Builtin(), HardwareProfiles::kAmd);
  EXPECT_TRUE(Has(how, "closest: \"MI300X\"")) << how;
  EXPECT_FALSE(Has(how, "H100")) << how;
  EXPECT_FALSE(Has(how, "H200")) << how;
}

// A device with properties but no name (vLLM's ROCm traces): identified where one profile of its vendor
// has its capability, compute units and memory; left to the other evidence otherwise.
TEST(ChipInferenceTest, IdentifiesAnUnnamedDeviceFromItsProperties) {
  const auto unnamed = [](int64_t sms, int64_t warp, int64_t memory_bytes) {
    hand_built::HandBuiltTrace hand;
    Device gpu;
    gpu.num_sms = sms;
    gpu.compute_major = 9;
    gpu.compute_minor = 4;
    gpu.warp_size = warp;
    gpu.total_memory_bytes = memory_bytes;
    gpu.from_properties = true;
    hand.mutable_builder()->AddDevice(gpu);
    hand.Kernel("Cijk_Alik_Bljk_HHS_BH", 0, 1000);
    return hand.Finish();
  };
  const HardwareSelection mi300x = SelectHardware(unnamed(304, 64, 206141652992), Builtin(), nullptr);
  ASSERT_NE(mi300x.profile, nullptr) << mi300x.how;
  EXPECT_EQ(mi300x.profile->name, "MI300X");
  EXPECT_TRUE(mi300x.inferred);
  EXPECT_TRUE(Has(mi300x.how, "304 compute units, 192.0 GiB")) << mi300x.how;
  // 256 GiB is an MI325X's memory; without it the two 304-CU parts are not told apart.
  EXPECT_EQ(SelectHardware(unnamed(304, 64, 274877906944), Builtin(), nullptr).profile->name, "MI325X");
  const HardwareSelection either = SelectHardware(unnamed(304, 64, kNoId), Builtin(), nullptr);
  EXPECT_EQ(either.profile, nullptr);
  EXPECT_TRUE(Has(either.how, "fit \"MI300X\" or \"MI325X\": pass --hardware NAME")) << either.how;
  const HardwareSelection none = SelectHardware(unnamed(300, 64, 206141652992), Builtin(), nullptr);
  EXPECT_EQ(none.profile, nullptr);
  EXPECT_TRUE(Has(none.how, "closest: \"MI300X\"")) << none.how;
  EXPECT_FALSE(Has(none.how, "H100")) << none.how;
  // A warp of 32 is NVIDIA's: no AMD part is taken for it.
  EXPECT_EQ(SelectHardware(unnamed(304, 32, 206141652992), Builtin(), nullptr).profile, nullptr);
}

// An unnamed device whose SM count a CUPTI device table gives (nsys TARGET_INFO_CUDA_DEVICE): of the
// Hopper profiles only the H100 PCIe has 114 SMs, so it is inferred, not assumed.
TEST(ChipInferenceTest, TheDeviceTablesSmCountSettlesTheVariant) {
  hand_built::HandBuiltTrace hand;
  Device gpu;
  gpu.id = 0;
  gpu.num_sms = 114;
  hand.mutable_builder()->AddDevice(gpu);
  hand.Kernel("sm90_xmma_gemm_bf16", 0, 1000);
  const Trace trace = hand.Finish();
  EXPECT_EQ(CollectChipEvidence(trace).device_sms, 114);
  const HardwareSelection selection = SelectHardware(trace, Builtin(), nullptr);
  ASSERT_NE(selection.profile, nullptr);
  EXPECT_EQ(selection.profile->name, "H100 PCIe");
  EXPECT_TRUE(Has(selection.how, "inferred from sm90 kernels and the device table's 114 SMs")) << selection.how;
}

// Ampere-named kernels run on every newer chip: nothing is picked, the candidates are named.
TEST(ChipInferenceTest, AmpereKernelsOnlyBoundTheChipAndNameCandidates) {
  const HardwareSelection selection = SelectForKernel("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n");
  EXPECT_EQ(selection.profile, nullptr);
  EXPECT_FALSE(selection.inferred);
  EXPECT_TRUE(Has(selection.how, "compute capability 8.0 or newer")) << selection.how;
  EXPECT_TRUE(Has(selection.how, "--hardware NAME")) << selection.how;
  EXPECT_TRUE(Has(selection.how, "\"A100 SXM4 40GB\"")) << selection.how;
}

TEST(ChipInferenceTest, NoEvidenceSaysHowToName) {
  const HardwareSelection selection = SelectForKernel("elementwise_kernel");
  EXPECT_EQ(selection.profile, nullptr);
  EXPECT_EQ(selection.how, "the trace does not name its device: pass --hardware NAME");
  EXPECT_TRUE(Has(selection.how, "--hardware NAME")) << selection.how;
}

// --hardware wins over any inference.
TEST(ChipInferenceTest, TheCommandLineOverridesTheInference) {
  const HardwareSelection selection = SelectForKernel("sm90_xmma_gemm_bf16", Builtin().FindByName("H100 PCIe"));
  ASSERT_NE(selection.profile, nullptr);
  EXPECT_EQ(selection.profile->name, "H100 PCIe");
  EXPECT_EQ(selection.how, "--hardware");
  EXPECT_FALSE(selection.inferred);
}

// A named device without a profile (an RTX A6000, compute capability 8.6) names the closest profiles.
TEST(ChipInferenceTest, UnmatchedDeviceNamesTheClosestProfiles) {
  const std::string how = UnmatchedDeviceHow("NVIDIA RTX A6000", 8, 6, Builtin());
  EXPECT_TRUE(Has(how, "compute capability 8.6")) << how;
  EXPECT_TRUE(Has(how, "closest: \"RTX 3070\"")) << how;  // 8.6 itself first
  EXPECT_TRUE(Has(how, "--hardware-file")) << how;
  EXPECT_TRUE(Has(UnmatchedDeviceHow("x", kNoId, kNoId, Builtin()), "--hardware NAME"));
  // A garbled capability is no hint (its product overflowed before).
  EXPECT_TRUE(Has(UnmatchedDeviceHow("x", std::numeric_limits<int64_t>::max(), 0, Builtin()), "--hardware NAME or"));
  EXPECT_TRUE(Has(UnmatchedDeviceHow("x", 8, -1, Builtin()), "--hardware NAME or"));
}

// Every GPU profile with a compute capability carries the occupancy calculator's per-SM limits, and at
// most one profile per capability is its default.
TEST(ChipInferenceTest, GpuProfilesCarryPerSmLimitsAndOneDefaultPerArchitecture) {
  std::map<int, int> defaults;
  for (const HardwareProfile* p : Builtin().GpuCandidates()) {
    EXPECT_TRUE(p->max_threads_per_sm.value.has_value()) << p->name;
    EXPECT_TRUE(p->max_blocks_per_sm.value.has_value()) << p->name;
    EXPECT_TRUE(p->registers_per_sm.value.has_value()) << p->name;
    EXPECT_TRUE(p->shared_memory_per_sm_kib.value.has_value()) << p->name;
    EXPECT_FALSE(p->max_blocks_per_sm.source.empty()) << p->name;
    if (p->arch_default) ++defaults[static_cast<int>(*p->compute_capability.value * 10 + 0.5)];
  }
  for (const auto& [capability, count] : defaults) EXPECT_EQ(count, 1) << capability;
}

// A torch_npu run with kernel_details rows on these accelerator cores and no device name.
Trace NpuRun(const std::vector<std::string>& cores) {
  hand_built::HandBuiltTrace hand;
  Trace trace = hand.Finish();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  for (const std::string& core : cores) {
    NpuOpRow row;
    row.accelerator_core = side.Intern(core);
    side.AddKernelDetail(row);
  }
  return trace;
}

TEST(ChipInferenceTest, AscendVectorCoresAssumeThe910bFamilyAndNameTheVariants) {
  bool ascend = false;
  const HardwareSelection split =
      InferAscendHardware(NpuRun({"AI_CORE", "AI_VECTOR_CORE", "MIX_AIV"}), Builtin(), &ascend);
  EXPECT_TRUE(ascend);
  ASSERT_NE(split.profile, nullptr);
  EXPECT_EQ(split.profile->name, "Ascend 910B (variant unknown)");
  EXPECT_TRUE(split.inferred);
  EXPECT_TRUE(Has(split.how, "assumed from 2 operators")) << split.how;
  EXPECT_TRUE(Has(split.how, "\"Ascend 910B2\"")) << split.how;

  const HardwareSelection cube_only = InferAscendHardware(NpuRun({"AI_CORE", "AI_CPU"}), Builtin(), &ascend);
  EXPECT_TRUE(ascend);
  EXPECT_EQ(cube_only.profile, nullptr);
  EXPECT_TRUE(Has(cube_only.how, "--hardware")) << cube_only.how;

  hand_built::HandBuiltTrace gpu;
  const HardwareSelection not_npu = InferAscendHardware(gpu.Finish(), Builtin(), &ascend);
  EXPECT_FALSE(ascend);
  EXPECT_EQ(not_npu.profile, nullptr);
}

// A run with its AI Core clock sampled and operators launched one block per core; on an NPU named
// `npu_name` with `memory_bytes` of memory where given.
Trace NpuRunWith(double clock_mhz, int64_t cube_blocks, int64_t vector_blocks, std::string_view npu_name = "",
                 int64_t memory_bytes = kNoId) {
  hand_built::HandBuiltTrace hand;
  if (!npu_name.empty()) {
    Device npu;
    npu.type = DeviceType::kNpu;
    npu.name = hand.mutable_builder()->Intern(npu_name);
    npu.total_memory_bytes = memory_bytes;
    hand.mutable_builder()->AddDevice(npu);
  }
  if (clock_mhz > 0) hand.mutable_builder()->AddCounterSample(ProcessKey{7, false}, "AI Core Freq/MHz", 0, clock_mhz);
  Trace trace = hand.Finish();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  const auto add = [&](std::string_view core, int64_t blocks, int times) {
    for (int i = 0; i < times; ++i) {
      NpuOpRow row;
      row.accelerator_core = side.Intern(core);
      row.block_dim = blocks;
      side.AddKernelDetail(row);
    }
  };
  add("AI_CORE", cube_blocks, 3);
  add("AI_CORE", 8, 2);  // small operators do not spread over the chip
  add("AI_VECTOR_CORE", vector_blocks, 3);
  return trace;
}

// The family is kept (its figures, labelled), and the variants the clock and core counts allow are named.
TEST(ChipInferenceTest, AscendClockAndBlockDimsNameTheLikelyVariant) {
  bool ascend = false;
  const HardwareSelection b2 = InferAscendHardware(NpuRunWith(1800, 24, 48), Builtin(), &ascend);
  ASSERT_NE(b2.profile, nullptr);
  EXPECT_EQ(b2.profile->name, "Ascend 910B (variant unknown)");
  EXPECT_TRUE(Has(b2.how,
                  "; likely \"Ascend 910B2\" (AI Core clock 1800 MHz, operators launched on 24 Cube / 48 "
                  "Vector cores)"))
      << b2.how;
  const AscendVariantEvidence clock_only = CollectAscendVariantEvidence(NpuRunWith(1800, 24, 40));
  EXPECT_EQ(clock_only.clock_mhz, 1800);
  EXPECT_EQ(clock_only.cube_cores, 0);  // 24 and 40 are not the family's 1:2
  const HardwareProfile& family = *Builtin().FindByName("Ascend 910B (variant unknown)");
  EXPECT_EQ(AscendVariantHint(clock_only, family, Builtin()),
            "; likely \"Ascend 910B2\" or \"Ascend 910B3\" (AI Core clock 1800 MHz)");
  // A clock no variant runs at (throttled) rules all out: no hint rather than a wrong one.
  EXPECT_EQ(AscendVariantHint(CollectAscendVariantEvidence(NpuRunWith(1200, 24, 48)), family, Builtin()), "");
  EXPECT_EQ(AscendVariantHint(AscendVariantEvidence{}, family, Builtin()), "");
}

// What the run states of its chip (msprof's info.json: AI cores and clock; the HBM size) picks the variant
// where one fits; a hint (sampled clock, block dims) never does, and a size several variants share keeps
// the family with its range.
TEST(ChipInferenceTest, StatedCoresClockAndMemorySettleTheAscendVariant) {
  const auto run = [](std::string_view cores, std::string_view clock, std::string_view name, int64_t memory_bytes) {
    Trace trace = NpuRunWith(1800, 24, 48, name, memory_bytes);
    SideTableBuilder side(&trace);
    if (!cores.empty()) side.AddMetadataEntry("msprof_info.device_0.ai_core_num", std::string(cores));
    if (!clock.empty()) side.AddMetadataEntry("msprof_info.device_0.aic_frequency", std::string(clock));
    return trace;
  };
  const HardwareSelection b2 = SelectHardware(run("24", "1800", "", kNoId), Builtin(), nullptr);
  ASSERT_NE(b2.profile, nullptr) << b2.how;
  EXPECT_EQ(b2.profile->name, "Ascend 910B2");
  EXPECT_TRUE(b2.inferred);
  EXPECT_TRUE(Has(b2.how, "msprof's info.json (24 AI cores, AI Core clock 1800 MHz)")) << b2.how;
  // 20 cores at 1800 MHz: the 910B3, though the operators hint at 24.
  EXPECT_EQ(SelectHardware(run("20", "1800", "", kNoId), Builtin(), nullptr).profile->name, "Ascend 910B3");
  // Stated figures no variant has: the family, not a wrong variant.
  EXPECT_EQ(SelectHardware(run("24", "1200", "", kNoId), Builtin(), nullptr).profile->name,
            "Ascend 910B (variant unknown)");
  // The HBM size: 32 GiB is the 910B4's alone; 64 GiB is three variants', so the family stays.
  const HardwareSelection b4 = SelectHardware(run("", "", "Ascend910B", 34359738368), Builtin(), nullptr);
  ASSERT_NE(b4.profile, nullptr) << b4.how;
  EXPECT_EQ(b4.profile->name, "Ascend 910B4");
  EXPECT_TRUE(Has(b4.how, "the device memory size (32.0 GiB)")) << b4.how;
  const HardwareSelection wide = SelectHardware(run("", "", "Ascend910B", 68719476736), Builtin(), nullptr);
  EXPECT_EQ(wide.profile->name, "Ascend 910B (variant unknown)");
  EXPECT_TRUE(Has(wide.how, "variant unknown")) << wide.how;
}

// Level0 writes no engine per operator: the sampled AI Core clock alone names the family where no other
// Ascend chip runs at it (1800 MHz: 910B2 or B3), not where another does (1850 MHz: 910B1 and the A3 die).
TEST(ChipInferenceTest, AscendClockAloneAssumesTheFamily) {
  const auto level0 = [](double clock_mhz) {
    hand_built::HandBuiltTrace hand;
    hand.mutable_builder()->AddCounterSample(ProcessKey{7, false}, "AI Core Freq/MHz", 0, clock_mhz);
    Trace trace = hand.Finish();
    SideTableBuilder side(&trace);
    side.StartKernelDetails();
    NpuOpRow row;
    row.accelerator_core = side.Intern("N/A");
    side.AddKernelDetail(row);
    return trace;
  };
  bool ascend = false;
  const HardwareSelection b = InferAscendHardware(level0(1800), Builtin(), &ascend);
  ASSERT_NE(b.profile, nullptr) << b.how;
  EXPECT_EQ(b.profile->name, "Ascend 910B (variant unknown)");
  EXPECT_TRUE(Has(b.how, "AI Core clock msprof sampled (1800 MHz)")) << b.how;
  EXPECT_TRUE(Has(b.how, "likely \"Ascend 910B2\" or \"Ascend 910B3\"")) << b.how;
  EXPECT_EQ(InferAscendHardware(level0(1850), Builtin(), &ascend).profile, nullptr);
  EXPECT_EQ(InferAscendHardware(level0(1234), Builtin(), &ascend).profile, nullptr);
}

}  // namespace
}  // namespace tuneprof

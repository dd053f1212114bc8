// compute.tensor_cores_unused on AMD chips: matrix-core kernels count as tensor-core work.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/builtin_profiles_for_test.h"

namespace tuneprof::rule_test {
namespace {

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

}  // namespace
}  // namespace tuneprof::rule_test

#include "analysis/core/hardware_profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analysis/core/builtin_profiles_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

const HardwareProfiles& BuiltinHardware() { return testing_support::BuiltinProfiles(); }

std::string DetectedName(std::string_view device, int64_t num_sms = kNoId) {
  const HardwareProfile* profile = BuiltinHardware().Detect(device, num_sms);
  return profile ? profile->name : "unknown";
}

TEST(HardwareProfileTest, BuiltinHasTheChipsTheIssueAsksFor) {
  for (std::string_view name :
       {"Ascend 910A",    "Ascend 910B1",   "Ascend 910B2",   "Ascend 910B3", "Ascend 910B4",   "Ascend 910 A3 die",
        "Ascend 310P3",   "V100 SXM2 16GB", "V100 SXM2 32GB", "V100 PCIe",    "A100 SXM4 40GB", "A100 SXM4 80GB",
        "A100 PCIe 40GB", "A100 PCIe 80GB", "H100 SXM",       "H100 PCIe",    "H200 SXM",       "B200",
        "L40S",           "RTX 4090",       "generic CPU"}) {
    EXPECT_NE(BuiltinHardware().FindByName(name), nullptr) << name;
  }
  for (std::string_view name :
       {"V100 DGXS 32GB", "A800 SXM4 80GB", "H800 SXM", "H20", "L4", "GB200 (one B200 GPU)", "RTX 3090", "RTX 4080",
        "MI210", "MI250 GCD", "MI250X GCD", "MI300X", "MI325X", "MI355X"}) {
    EXPECT_NE(BuiltinHardware().FindByName(name), nullptr) << name;
  }
  EXPECT_NE(BuiltinHardware().FindByName("h100 sxm"), nullptr);  // case-insensitive, as typed on a command line
}

// Every number carries a source, known or not (the loader refuses a value without one), and links too.
TEST(HardwareProfileTest, EveryValueHasASource) {
  for (const HardwareProfile& p : BuiltinHardware().profiles()) {
    for (const SourcedValue* v : {&p.peak_fp16_tflops, &p.peak_bf16_tflops, &p.peak_fp32_tflops, &p.peak_int8_tops,
                                  &p.memory_gb, &p.memory_gb_per_s}) {
      EXPECT_FALSE(v->source.empty()) << p.name;
    }
    for (const LinkBandwidth& link : p.links) EXPECT_FALSE(link.gb_per_s.source.empty()) << p.name;
  }
}

TEST(HardwareProfileTest, PeaksFromHardwareReference) {
  const HardwareProfile* a100 = BuiltinHardware().FindByName("A100 SXM4 40GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->peak_bf16_tflops.value, 312);
  EXPECT_EQ(a100->memory_gb_per_s.value, 1555);
  EXPECT_FALSE(a100->peak_int8_tops.value.has_value());  // not captured: unknown, not guessed
  const HardwareProfile* h100 = BuiltinHardware().FindByName("H100 SXM");
  ASSERT_NE(h100, nullptr);
  EXPECT_NEAR(*h100->RidgeFlopPerByte(), 295, 0.5);  // 989 / 3.35
}

// Ascend peaks are derived: cube cores × 16·16·16 MAC × 2 FLOP × cube clock, INT8 twice that.
TEST(HardwareProfileTest, AscendDerivedPeaksFollowTheirFormula) {
  for (const HardwareProfile& p : BuiltinHardware().profiles()) {
    if (p.kind != "npu" || !p.clock_mhz.value || !p.cube_cores.value) continue;
    const double tflops = *p.cube_cores.value * 16 * 16 * 16 * 2 * *p.clock_mhz.value * 1e6 / 1e12;
    EXPECT_TRUE(p.peak_fp16_tflops.derived) << p.name;
    EXPECT_NEAR(*p.peak_fp16_tflops.value, tflops, 0.1) << p.name;
    EXPECT_NEAR(*p.peak_int8_tops.value, 2 * tflops, 0.2) << p.name;
  }
}

TEST(HardwareProfileTest, DetectsFromDeviceNames) {
  EXPECT_EQ(DetectedName("NVIDIA A100-SXM4-80GB"), "A100 SXM4 80GB");
  EXPECT_EQ(DetectedName("NVIDIA A100-PG509-200", 108), "A100 SXM4 40GB");
  EXPECT_EQ(DetectedName("Tesla V100-SXM2-32GB", 80), "V100 SXM2 32GB");
  EXPECT_EQ(DetectedName("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(DetectedName("Ascend910B2"), "Ascend 910B2");
  EXPECT_EQ(DetectedName("ascend910b3"), "Ascend 910B3");
}

// AMD parts by the names HIP gives them; a name two parts share is told apart by the compute units.
TEST(HardwareProfileTest, DetectsAmdPartsByNameAndComputeUnits) {
  EXPECT_EQ(DetectedName("AMD Instinct MI300X VF", 304), "MI300X");
  EXPECT_EQ(DetectedName("AMD Instinct MI300X"), "MI300X");
  EXPECT_EQ(DetectedName("AMD Instinct MI250X / MI250", 110), "MI250X GCD");
  EXPECT_EQ(DetectedName("AMD Instinct MI250X / MI250", 104), "MI250 GCD");
  EXPECT_EQ(DetectedName("AMD Instinct MI250X / MI250", 96), "unknown");
  EXPECT_EQ(DetectedName("NVIDIA H800", 132), "H800 SXM");
  EXPECT_EQ(DetectedName("Tesla V100-DGXS-32GB", 80), "V100 DGXS 32GB");
}

// Kernel-name evidence and suggestions stay within a vendor: a HIP compute capability (gfx90a is 9.0)
// is no Hopper.
TEST(HardwareProfileTest, GpuCandidatesAreOfOneVendor) {
  for (const HardwareProfile* p : BuiltinHardware().GpuCandidates()) EXPECT_EQ(p->vendor, "NVIDIA") << p->name;
  const std::vector<const HardwareProfile*> amd = BuiltinHardware().GpuCandidates(HardwareProfiles::kAmd);
  EXPECT_FALSE(amd.empty());
  for (const HardwareProfile* p : amd) EXPECT_EQ(p->vendor, "AMD") << p->name;
}

// A range must be two ordered non-negative numbers.
TEST(HardwareProfileTest, RejectsABadRange) {
  const std::string head =
      R"({"schema": "tuneprof.hardware_profiles/1", "profiles": [{"name": "x", "kind": "npu", "device_names": [],
      "links": {}, "memory_gb": {"value": 1, "source": "s", "range": )";
  EXPECT_TRUE(HardwareProfiles::Parse(head + "[1, 2]}}]}", "t").ok());
  for (std::string_view range : {"[2, 1]", "[1]", "[1, 2, 3]", "[-1, 2]", "[\"a\", 2]", "3"}) {
    const Result<HardwareProfiles> parsed = HardwareProfiles::Parse(head + std::string(range) + "}}]}", "t");
    ASSERT_FALSE(parsed.ok()) << range;
    EXPECT_NE(parsed.status().message().find("range"), std::string::npos) << parsed.status().message();
  }
}

TEST(HardwareProfileTest, UnknownChipsStayUnknown) {
  EXPECT_EQ(DetectedName("NVIDIA RTX A6000"), "unknown");
  EXPECT_EQ(DetectedName("NVIDIA A100"), "unknown");  // no prefix matching
  EXPECT_EQ(DetectedName(""), "unknown");
  // A known name with another SM count is another part (a MIG slice, a cut-down bin).
  EXPECT_EQ(DetectedName("NVIDIA A100-PG509-200", 14), "unknown");
}

// A trace whose GPU 0 is `name` with `num_sms` SMs (deviceProperties), and one kernel on it.
Trace TraceOnGpu(std::string_view name, int64_t num_sms) {
  hand_built::HandBuiltTrace hand;
  Device gpu;
  gpu.id = 0;
  gpu.name = hand.mutable_builder()->Intern(name);
  gpu.num_sms = num_sms;
  gpu.from_properties = true;
  hand.mutable_builder()->AddDevice(gpu);
  hand.Kernel("k", 0, 1000);
  return hand.Finish();
}

TEST(HardwareProfileTest, SelectsFromTheTraceOrTheCommandLine) {
  const Trace a100 = TraceOnGpu("NVIDIA A100-PG509-200", 108);
  HardwareSelection detected = SelectHardware(a100, BuiltinHardware(), nullptr);
  ASSERT_NE(detected.profile, nullptr);
  EXPECT_EQ(detected.profile->name, "A100 SXM4 40GB");
  EXPECT_EQ(detected.device_name, "NVIDIA A100-PG509-200");
  EXPECT_EQ(detected.how, "detected");

  HardwareSelection forced = SelectHardware(a100, BuiltinHardware(), BuiltinHardware().FindByName("H100 SXM"));
  EXPECT_EQ(forced.profile->name, "H100 SXM");
  EXPECT_EQ(forced.how, "--hardware");

  HardwareSelection slice = SelectHardware(TraceOnGpu("NVIDIA A100-PG509-200", 14), BuiltinHardware(), nullptr);
  EXPECT_EQ(slice.profile, nullptr);
  EXPECT_NE(slice.how.find("14 SMs, not 108"), std::string::npos) << slice.how;

  HardwareSelection unnamed = SelectHardware(TraceOnGpu("", 108), BuiltinHardware(), nullptr);
  EXPECT_EQ(unnamed.profile, nullptr);
}

// NPU_INFO says "Ascend910B" without the SKU digit: B1..B4 differ in cores, clock and memory. It matches
// the family entry, which knows only what every variant shares, and the selection says which to give.
// A CPU-only trace of `format`: one host operator and no device.
Trace HostOnlyTraceOfFormat(TraceFormat format) {
  hand_built::HandBuiltTrace hand;
  hand.mutable_metadata()->format = format;
  hand.Host(EventKind::kHostOp, "aten::mm", 0, 1000);
  return hand.Finish();
}

// The kind of device is known where the chip is not: from a device of the trace, else from its format.
TEST(HardwareProfileTest, PlatformFromTheDevicesElseFromTheFormat) {
  EXPECT_EQ(TracePlatform(TraceOnGpu("", 108)), DeviceType::kGpu);
  EXPECT_EQ(TracePlatform(TraceOnGpu("NVIDIA A100-PG509-200", 108)), DeviceType::kGpu);
  EXPECT_EQ(TracePlatform(HostOnlyTraceOfFormat(TraceFormat::kTorchNpuTraceView)), DeviceType::kNpu);
  EXPECT_EQ(TracePlatform(HostOnlyTraceOfFormat(TraceFormat::kNsysSqlite)), DeviceType::kGpu);
  EXPECT_EQ(TracePlatform(HostOnlyTraceOfFormat(TraceFormat::kKineto)), DeviceType::kCpu);
  EXPECT_EQ(TracePlatform(HostOnlyTraceOfFormat(TraceFormat::kPytorchLegacy)), DeviceType::kCpu);
}

TEST(HardwareProfileTest, BareAscend910BIsTheFamilyWithTheVariantUnknown) {
  const HardwareProfile* family = BuiltinHardware().Detect("Ascend910B");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->name, "Ascend 910B (variant unknown)");
  EXPECT_EQ(family->variants.size(), 4u);
  for (const SourcedValue* v : {&family->cube_cores, &family->vector_cores, &family->clock_mhz}) {
    EXPECT_FALSE(v->value.has_value()) << v->source;  // what tells the variants apart: never one variant's
  }
  // The peaks are the family's figure, labelled: the highest of the variants', with their range, so a
  // utilization against it is a lower bound.
  for (SourcedValue HardwareProfile::*field :
       {&HardwareProfile::peak_fp16_tflops, &HardwareProfile::peak_bf16_tflops, &HardwareProfile::peak_int8_tops,
        &HardwareProfile::memory_gb, &HardwareProfile::core_read_path_gb_per_s}) {
    const SourcedValue& v = family->*field;
    ASSERT_TRUE(v.value && v.range_low && v.range_high) << v.source;
    EXPECT_TRUE(v.source.starts_with("assumed Ascend 910B, variant unknown")) << v.source;
    double low = 1e300, high = 0;
    for (const std::string& name : family->variants) {
      const SourcedValue& of_variant = BuiltinHardware().FindByName(name)->*field;
      low = std::min(low, *of_variant.value);
      high = std::max(high, *of_variant.value);
    }
    EXPECT_DOUBLE_EQ(*v.range_low, low) << v.source;
    EXPECT_DOUBLE_EQ(*v.range_high, high) << v.source;
    EXPECT_DOUBLE_EQ(*v.value, high) << v.source;
  }
  // What it does know is what every variant has.
  for (const std::string& name : family->variants) {
    const HardwareProfile* variant = BuiltinHardware().FindByName(name);
    ASSERT_NE(variant, nullptr) << name;
    EXPECT_EQ(variant->ai_cpu_cores.value, family->ai_cpu_cores.value) << name;
    ASSERT_EQ(variant->links.size(), family->links.size()) << name;
    for (size_t i = 0; i < family->links.size(); ++i) {
      EXPECT_EQ(variant->links[i].transport, family->links[i].transport) << name;
      EXPECT_EQ(variant->links[i].gb_per_s.value, family->links[i].gb_per_s.value) << name;
    }
  }
  const HardwareSelection selection = SelectHardware(TraceOnGpu("Ascend910B", kNoId), BuiltinHardware(), nullptr);
  EXPECT_EQ(selection.profile, family);
  EXPECT_EQ(selection.how,
            "variant unknown; use --hardware \"Ascend 910B1\", \"Ascend 910B2\", \"Ascend 910B3\" or "
            "\"Ascend 910B4\"");
  EXPECT_EQ(selection.device_name, "Ascend910B");
  // --hardware takes the profile name or the device name as traces spell it.
  EXPECT_EQ(BuiltinHardware().FindByName("Ascend910B2"), BuiltinHardware().FindByName("Ascend 910B2"));
  EXPECT_EQ(BuiltinHardware().FindByName("Ascend910B9"), nullptr);
}

TEST(HardwareProfileTest, ParsesAFileOfTheSameSchema) {
  auto profiles = HardwareProfiles::Parse(R"({"schema": "tuneprof.hardware_profiles/1", "profiles": [
      {"name": "lab part", "kind": "gpu", "device_names": ["Lab GPU"],
       "peak_bf16_tflops": {"value": 100, "source": "our measurement"},
       "memory_gb_per_s": {"value": null, "source": "not measured"},
       "links": {"nvlink": {"value": 50, "source": "spec", "unverified": true}}}]})",
                                          "lab.json");
  ASSERT_TRUE(profiles.ok()) << profiles.status().message();
  const HardwareProfile* p = profiles->Detect("Lab GPU");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->peak_bf16_tflops.value, 100);
  EXPECT_FALSE(p->memory_gb_per_s.value.has_value());
  ASSERT_EQ(p->links.size(), 1u);
  EXPECT_EQ(p->links[0].transport, "nvlink");
  EXPECT_TRUE(p->links[0].gb_per_s.unverified);
}

TEST(HardwareProfileTest, RejectsBadFilesNamingThem) {
  const char* bad[] = {
      "not json",
      R"({"schema": "other/1", "profiles": []})",
      R"({"schema": "tuneprof.hardware_profiles/1", "profiles": [{"name": "x", "kind": "gpu", "device_names": [],
          "peak_fp16_tflops": {"value": 1}, "links": {}}]})",
      R"({"schema": "tuneprof.hardware_profiles/1", "profiles": [{"name": "x", "kind": "gpu", "device_names": [],
          "peak_fp16_tflops": {"value": -1, "source": "s"}, "links": {}}]})",
      R"({"schema": "tuneprof.hardware_profiles/1", "profiles": [{"name": "x", "kind": "gpu", "device_names": [],
          "peak_fp16_tflops": {"source": "s"}, "links": {}}]})",
  };
  for (const char* json : bad) {
    auto result = HardwareProfiles::Parse(json, "bad.json");
    ASSERT_FALSE(result.ok()) << json;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(result.status().message().find("bad.json"), std::string::npos) << result.status().message();
  }
}

}  // namespace
}  // namespace tuneprof

// compute.tensor_cores_unused (TensorBoard plugin rule 6): a GPU with tensor cores (compute capability
// >= 7.0) runs its matmuls and convolutions without them, i.e. in FP32. Gain: the GEMM time at the
// FP16 peak instead of the FP32 peak of the chip's profile; unknown (0) without a known chip.
// AMD numbers its chips' capabilities differently (an MI300X reports 9.4, and 9.0 covers chips with
// and without matrix cores), so an AMD GPU is judged by its profile: one whose FP16 (matrix) peak is
// above its FP32 (vector) peak has matrix cores.
#include <fmt/format.h>

#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/core/chip_inference.h"
#include "analysis/core/device_work.h"
#include "analysis/core/op_classes.h"

namespace tuneprof {
namespace {

bool IsAmd(const RankEvidence& rank, const Device& device) {
  return DeviceVendor(device, rank.trace->str(device.name)) == HardwareProfiles::kAmd;
}

// Whether the chip of an AMD GPU is known to have matrix cores.
bool AmdChipHasMatrixCores(const HardwareProfile* chip) {
  if (!chip || chip->vendor != HardwareProfiles::kAmd) return false;
  const auto& fp16 = chip->peak_fp16_tflops.value;
  const auto& fp32 = chip->peak_fp32_tflops.value;
  return fp16 && fp32 && *fp16 > *fp32;
}

}  // namespace

void RuleTensorCores(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (PlatformOf(rank) != Platform::kCuda) return;
  const Device* device = PrimaryDevice(*rank.trace);
  if (!device) return;
  const HardwareProfile* chip = rank.hardware ? rank.hardware->profile : nullptr;
  const bool amd = IsAmd(rank, *device);
  if (amd ? !AmdChipHasMatrixCores(chip) : device->compute_major < 7) return;
  const auto share = rank.compute->total.gpu.TensorCoreShare();
  if (!share || *share > 0) return;
  const EventTable& events = rank.trace->events();
  double gemm_ns = 0;
  uint64_t gemms = 0;
  std::vector<uint32_t> gemm_events;
  OpLetters letters(*rank.trace);
  for (const DeviceWorkEvent& work : rank.device_work.List(*rank.trace)) {
    if (work.work != WorkClass::kCompute || !IsComputeBoundLetter(letters.Of(events.name[work.event]))) continue;
    gemm_ns += static_cast<double>(events.dur_ns[work.event]);
    ++gemms;
    gemm_events.push_back(work.event);
  }
  if (gemms == 0) return;
  Finding f = NewFinding("compute.tensor_cores_unused", rank, config);
  f.title = fmt::format("{} matmul/conv kernels ({} per step) run without {}", gemms,
                        FormatDuration(PerStep(rank, gemm_ns)), amd ? "matrix cores" : "tensor cores");
  f.value = 0;
  if (chip && chip->peak_fp32_tflops.value && chip->peak_fp16_tflops.value && *chip->peak_fp16_tflops.value > 0) {
    f.uncapped_gain_ns = PerStep(rank, gemm_ns) * (1 - *chip->peak_fp32_tflops.value / *chip->peak_fp16_tflops.value);
    f.gain_model = fmt::format("GEMM time x (1 - FP32 peak / FP16 peak) of {}", chip->name);
  } else {
    f.gain_model = "unknown: the chip's FP32 and FP16 peaks are not known";
  }
  f.AddNumber("gemm_kernels", static_cast<double>(gemms), "count");
  f.AddNumber("gemm_us_per_step", PerStep(rank, gemm_ns) / 1e3, "us");
  SayModules(rank, gemm_events, &f);
  if (amd) {
    f.AddText("chip", chip->name);
    f.strategy = "Run matmuls and convolutions in reduced precision on the matrix cores (automatic mixed precision).";
    f.apis = {"torch.autocast(\"cuda\", dtype=torch.bfloat16)"};
    out->push_back(std::move(f));
    return;
  }
  f.AddNumber("compute_capability_major", static_cast<double>(device->compute_major), "");
  f.strategy =
      "Run matmuls and convolutions in reduced precision on the tensor cores (automatic mixed precision), "
      "or allow TF32 for FP32 matmuls.";
  f.apis = {"torch.autocast(\"cuda\", dtype=torch.bfloat16)", "torch.backends.cuda.matmul.allow_tf32 = True"};
  out->push_back(std::move(f));
}

}  // namespace tuneprof

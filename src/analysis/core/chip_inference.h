#pragma once
// Which GPU a trace ran on when it does not name its device (nsys exports without TARGET_INFO_GPU,
// Kineto traces without deviceProperties): what its kernels reveal, matched against the profiles.
//
// Evidence, each a lower bound on the compute capability unless said otherwise:
//   - architecture tags in kernel names ("sm90_xmma_gemm...", "cutlass3x_sm90_...", "cutlass::arch::Sm90",
//     CUTLASS 2's "cutlass_80_tensorop_...").
//     Tags of 9.0 and newer are taken as the architecture itself: such kernels are built around
//     instructions of that architecture (Hopper's warpgroup MMA and TMA), which the next one replaces
//     with its own. Older tags only bound it: libraries keep running their Ampere-named kernels on every
//     newer chip (an H100 runs cuBLAS's sm80_xmma FP32 GEMMs).
//   - thread-block cluster launches: compute capability 9.0 or newer.
//   - maxActiveClusters x blocks per cluster: the device holds at least that many SMs at once (a cluster
//     spans that many SMs when one block fits an SM; more blocks per SM only lower the bound's need).
//     It rules out profiles with fewer SMs (an H100 PCIe has 114, an H100 SXM 132).
//   - an SM count without a name (CUPTI's device table): profiles with another count are ruled out.
//
// Policy: the candidates are the GPU profiles at or above the proven capability with at least the proven
// SMs. Where the evidence reaches 9.0 (tags or clusters), the oldest architecture among the candidates
// is taken: a newer chip would show kernels of its own. One candidate there is "inferred"; several (H100
// SXM, H100 PCIe, H200 SXM are all 9.0) give the architecture's arch_default profile, "assumed", with
// the others named. Below 9.0 nothing is picked: the text names --hardware and the closest candidates.
#include <string>
#include <vector>

#include "analysis/core/hardware_profile.h"
#include "model/trace.h"

namespace tuneprof {

struct ChipEvidence {
  int min_capability = 0;  // compute capability × 10 the kernels prove at least; 0: nothing
  bool from_tag = false;   // min_capability comes from a kernel-name tag (else from clusters)
  int64_t tagged_kernels = 0;
  int64_t cluster_kernels = 0;
  int64_t min_sms = 0;  // SMs the cluster launches prove; 0: nothing
  // SMs of the unnamed device as a CUPTI device table gives them (nsys TARGET_INFO_CUDA_DEVICE): a
  // profile with another SM count is not a candidate. 0: not given (or GPUs that differ).
  int64_t device_sms = 0;
  std::string basis;        // "sm90 kernels", "thread-block clusters in 183 kernels (...) and ... (at least 132 SMs)"
  std::string short_basis;  // "sm90 kernels", "thread-block clusters"
};

// Visible for testing: the architecture tag of a kernel name as capability × 10 (90 for "sm90_"), 0 when
// it has none; the highest when it has several.
int KernelNameCapability(std::string_view kernel_name);

ChipEvidence CollectChipEvidence(const Trace& trace);

// The selection for a trace that names no device, from `evidence` (profile nullptr when it is unknown).
HardwareSelection InferHardware(const ChipEvidence& evidence, const HardwareProfiles& profiles);

// An Ascend run that names no chip (torch_npu's text export writes no device name): operators on separate
// AI Vector cores (AI_VECTOR_CORE, MIX_AIV, MIX_AIC in kernel_details) exist only on the chips that split
// the AI Core into Cube and Vector cores, the Ascend 910B family and its 910_93 successor. The 910B family
// profile is assumed, its variant unknown (figures the variants share, such as the HCCS peak, apply;
// those that differ stay unknown), and the text says how to name the chip. Without such operators, or
// without kernel_details, the chip stays unknown with the same advice. `ascend` is false for traces
// that are not torch_npu / msprof runs, and the selection is then left to the caller.
HardwareSelection InferAscendHardware(const Trace& trace, const HardwareProfiles& profiles, bool* ascend);

// Whether `trace` is a torch_npu / msprof run (what InferAscendHardware's `ascend` says).
bool IsAscendRun(const Trace& trace);

// Why a device the trace names has no profile, with the profiles of the same vendor and the closest
// compute capability (same major version, nearest first) to pass as --hardware; kNoId when the trace does
// not say it. `vendor` is HardwareProfiles::kNvidia or kAmd (DeviceVendor).
std::string UnmatchedDeviceHow(std::string_view device_name, int64_t major, int64_t minor,
                               const HardwareProfiles& profiles, std::string_view vendor = HardwareProfiles::kNvidia);

// The vendor of a GPU as its properties show it: AMD where the warp (wavefront) is 64 threads or the
// name says so, NVIDIA otherwise. A CUDA and a HIP compute capability overlap (gfx90a reports 9.0, as
// Hopper does), so suggestions and matches are kept within the vendor.
std::string_view DeviceVendor(const Device& device, std::string_view name);

// A GPU the trace describes but does not name (Kineto deviceProperties with an empty name, as vLLM's
// ROCm traces write): the one profile of its vendor with its compute capability and compute-unit count
// and a memory size that holds what the device reports. The selection's profile is nullptr when none
// or several match; for an AMD device its text then names the candidates (kernel names prove nothing
// of an AMD chip), and is empty for others (their kernels are the next evidence).
HardwareSelection IdentifyFromProperties(const Trace& trace, const HardwareProfiles& profiles);

// What an Ascend run shows of its variant: the highest AI Core clock sampled (MHz; 0: none), and the
// Cube and Vector core counts where its operators' most common block dims are in the family's 1:2
// ratio (0: not shown).
struct AscendVariantEvidence {
  int64_t clock_mhz = 0;
  int64_t cube_cores = 0;
  int64_t vector_cores = 0;
  // What the run states of its chip rather than shows by its work: msprof's info.json DeviceInfo (its
  // ai_core_num and aic_frequency) and the device memory (HBM) size where the trace holds it. 0: not
  // stated.
  int64_t stated_cube_cores = 0;
  int64_t stated_clock_mhz = 0;
  int64_t memory_bytes = 0;
};
AscendVariantEvidence CollectAscendVariantEvidence(const Trace& trace);

// The one variant of `family` that the figures the run states allow (a sampled clock or block dims only
// hint: a throttled clock or a small operator would mislead); nullptr when they allow several (HBM size
// alone tells only the 32 GiB 910B4 apart) or none, or the run states none. `basis` gets what decided,
// in words.
const HardwareProfile* AscendVariantFromStatedFigures(const AscendVariantEvidence& evidence,
                                                      const HardwareProfile& family, const HardwareProfiles& profiles,
                                                      std::string* basis);

// Where `selection` holds a family profile and the run's stated figures decide its variant, the variant,
// labelled as identified; otherwise `selection` as it was.
void SettleAscendVariant(const Trace& trace, const HardwareProfiles& profiles, HardwareSelection* selection);

// The variants of `family` the evidence allows, as "; likely \"Ascend 910B2\" (AI Core clock 1800 MHz,
// operators on 24 Cube / 48 Vector cores)"; "" when the evidence rules none out or rules all out.
std::string AscendVariantHint(const AscendVariantEvidence& evidence, const HardwareProfile& family,
                              const HardwareProfiles& profiles);

}  // namespace tuneprof

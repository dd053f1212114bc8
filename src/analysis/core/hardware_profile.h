#pragma once
// Chip peaks (FLOP/s, memory, cores, links) and which chip a trace ran on. The profiles are
// data/hardware_profiles.json, compiled into the binary (cmake/embed_text.cmake) so that an installed
// tuneprof does not depend on the source tree; `--hardware-file` reads another file of the same schema.
// Every number carries its source. Unknown numbers stay unknown (nullopt); an unknown chip is reported
// as unknown, never matched to a neighbour.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

// One number of a profile and where it comes from.
struct SourcedValue {
  std::optional<double> value;  // nullopt: not known
  std::string source;
  bool derived = false;     // computed from cited inputs (the source says how)
  bool unverified = false;  // recalled or third-party
  // A family entry's figure: the lowest and highest of its variants' (the value is one of them, and the
  // source says which and why).
  std::optional<double> range_low;
  std::optional<double> range_high;
};

struct LinkBandwidth {
  std::string transport;  // "nvlink", "pcie", "hccs", "roce", "sio"
  SourcedValue gb_per_s;  // per device, as the source states it
};

struct HardwareProfile {
  std::string name;  // "A100 SXM4 40GB": what --hardware takes and reports print
  std::string vendor;
  std::string kind;                       // "gpu", "npu", "cpu"
  std::vector<std::string> device_names;  // names a trace gives the device, matched exactly (case-insensitive)
  // Non-empty for a family entry ("Ascend910B" without the SKU digit): the profiles the device may be.
  // Its numbers that differ between them are null; detection says the variant is unknown.
  std::vector<std::string> variants;
  SourcedValue peak_fp16_tflops;  // dense (no 2:4 sparsity)
  SourcedValue peak_bf16_tflops;
  SourcedValue peak_fp32_tflops;
  SourcedValue peak_int8_tops;
  SourcedValue memory_gb;
  SourcedValue memory_gb_per_s;
  SourcedValue core_read_path_gb_per_s;  // Ascend: the cores' aggregate read path (an upper bound)
  SourcedValue sm_count;                 // GPU
  SourcedValue max_threads_per_sm;       // GPU
  // GPU per-SM limits of the CUDA occupancy calculator (the compute capability's, not the product's).
  SourcedValue max_blocks_per_sm;
  SourcedValue registers_per_sm;          // 32-bit registers
  SourcedValue shared_memory_per_sm_kib;  // the largest carveout
  SourcedValue compute_capability;        // 9.0 = Hopper; what kernel names and launches can reveal
  // The profile assumed for a trace that shows its compute capability but names no device (one per
  // capability at most; the JSON's arch_default_source says why this part).
  bool arch_default = false;
  SourcedValue cube_cores;    // Ascend AI (Cube) cores
  SourcedValue vector_cores;  // Ascend vector cores
  SourcedValue ai_cpu_cores;  // Ascend AI CPU
  SourcedValue clock_mhz;
  std::vector<LinkBandwidth> links;

  // Dense FP16 FLOP per byte of memory traffic at which a kernel turns compute-bound (derived).
  std::optional<double> RidgeFlopPerByte() const;
};

class HardwareProfiles {
 public:
  // Parses a file of schema tuneprof.hardware_profiles/1; `origin` names it in error messages.
  static Result<HardwareProfiles> Parse(std::string_view json, std::string_view origin);
  // The profiles shipped with tuneprof (data/hardware_profiles.json, embedded at build time).
  static Result<HardwareProfiles> Builtin();

  const std::vector<HardwareProfile>& profiles() const { return profiles_; }
  // By profile name, case-insensitive, else by a device name a profile lists ("Ascend910B2", as the
  // trace spells it); nullptr when none has it.
  const HardwareProfile* FindByName(std::string_view name) const;
  // By the name a trace gives the device. A profile whose SM count is known and differs from the
  // device's is not a match (a renamed or partitioned part would otherwise borrow the wrong peaks); a
  // name two profiles share ("AMD Instinct MI250X / MI250") is told apart by the count.
  const HardwareProfile* Detect(std::string_view device_name, int64_t num_sms = kNoId) const;
  // Profiles of single GPUs of `vendor` (no family entries) whose compute capability is known: the
  // candidates a trace that names no device is matched against, and the suggestions for one whose name
  // no profile has. Kernel-name evidence and suggestions never cross vendors.
  std::vector<const HardwareProfile*> GpuCandidates(std::string_view vendor = kNvidia) const;

  static constexpr std::string_view kNvidia = "NVIDIA";
  static constexpr std::string_view kAmd = "AMD";

 private:
  std::vector<HardwareProfile> profiles_;
};

// The profile a rank is measured against, and how it was chosen.
struct HardwareSelection {
  const HardwareProfile* profile = nullptr;  // nullptr: unknown chip
  std::string device_name;                   // as the trace names it ("" when it does not)
  // "detected", "--hardware", "inferred from ..." / "assumed: ..." (chip_inference.h), or why it is
  // unknown; an unknown chip's text names --hardware and the closest candidates where there are some.
  std::string how;
  bool inferred = false;  // the profile comes from the trace's kernels, not from a device name
  // An inferred profile in a few words: "H100 SXM (assumed from thread-block clusters; pass --hardware
  // to override)"; "" otherwise.
  std::string label;
};

// The accelerator a rank's work ran on, as the trace names it: the device of the first device event,
// else the first named accelerator; nullptr when the trace names none.
const Device* PrimaryDevice(const Trace& trace);

// The kind of device a rank's work ran on, known even where its chip is not: a GPU or an NPU the trace
// holds, else what its format implies (torch_npu's output ran on an NPU, an Nsight Systems export on a
// GPU), else the CPU alone (a CPU-only PyTorch trace, a legacy autograd profile).
DeviceType TracePlatform(const Trace& trace);

// `forced` (from --hardware) wins; otherwise detection from the trace's device.
HardwareSelection SelectHardware(const Trace& trace, const HardwareProfiles& profiles, const HardwareProfile* forced);

}  // namespace tuneprof

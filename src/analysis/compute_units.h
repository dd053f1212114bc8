#pragma once
// How well the compute units are used, per rank and per step, against the chip the rank ran on
// (hardware_profile.h). GPU figures follow the PyTorch TensorBoard plugin's definitions
// (pytorch/kineto tb_plugin gpu_metrics_parser.py; ../shared/reference/formulas.md §4), over the same
// step windows as time_breakdown.h (each step's span of device work, clipped):
//
//   busy %          = |U(kernels)| / wall × 100 ("GPU utilization": any kernel running)
//   SM efficiency   = ∫ min(Σ blocks_per_SM of the kernels running at t, 1) dt / wall, where a kernel's
//                     blocks_per_SM is Kineto's arg (grid blocks / numSms), else grid / the device's numSms
//   occupancy       = Σ occ_K·dur_K / Σ dur_K over kernels with Kineto's `est. achieved occupancy %`
//   tensor-core share = time of kernels whose name says they use tensor cores / all kernel time
//   waves per SM    = Σ waves_K·dur_K / Σ dur_K, waves_K = blocks_per_SM / resident blocks per SM (estimated)
//
// SM efficiency follows the plugin's code (merge_ranges_with_value: concurrent kernels' blocks per SM
// add up, then the sum is capped at 1), not its docs' Σ min(blocks_K/SMs, 1)·dur_K, which can pass 100 %
// when kernels overlap; the two agree when they do not. All kernels count, NCCL's included, as in the
// plugin. A rank with several GPUs is measured per GPU
// and the figures are over all of them (wall counted once per GPU that ran kernels).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/hardware_profile.h"
#include "analysis/time_breakdown.h"
#include "model/trace.h"

namespace tuneprof {

// The sums a window's figures are made of; windows add up by adding them.
struct GpuUnitSums {
  int64_t wall_ns = 0;               // window wall × GPUs that ran kernels
  int64_t busy_ns = 0;               // |U(kernels)| per GPU, summed
  double sm_active_ns = 0;           // ∫ min(Σ blocks per SM, 1) dt
  uint64_t kernels = 0;
  uint64_t kernels_with_blocks = 0;  // blocks per SM known
  int64_t kernel_ns = 0;             // Σ dur_K (clipped to the window)
  double occupancy_ns = 0;           // Σ occ_K·dur_K
  int64_t occupancy_known_ns = 0;    // Σ dur_K of kernels with an occupancy
  int64_t tensor_core_ns = 0;
  double waves_ns = 0;               // Σ waves_K·dur_K
  int64_t waves_known_ns = 0;

  void Add(const GpuUnitSums& other);

  std::optional<double> BusyPct() const;           // 0..100
  std::optional<double> SmEfficiency() const;      // 0..1; nullopt when no kernel had blocks per SM
  std::optional<double> AchievedOccupancy() const; // 0..1
  std::optional<double> TensorCoreShare() const;   // 0..1
  std::optional<double> WavesPerSm() const;
};

struct StepComputeUnits {
  std::optional<int64_t> step;  // as in StepBreakdown
  GpuUnitSums gpu;
};

struct RankComputeUnits {
  std::optional<std::string> hardware;  // profile name; nullopt when the chip is unknown
  std::string device_name;              // as the trace names it
  std::string hardware_how;             // "detected", "--hardware", or why unknown
  // Model FLOP utilization needs FLOPs from shapes (record_shapes Input Dims), which the importer does
  // not keep yet: nullopt until it does, and always when the chip's peak is unknown.
  std::optional<double> mfu;
  // Ascend PMU ratios from kernel_details (aic_mac_ratio, aiv_vec_ratio, aic_scalar_ratio), time-weighted;
  // nullopt until that import exists.
  std::optional<double> cube_ratio;
  std::optional<double> vector_ratio;
  std::optional<double> scalar_ratio;
  uint64_t gpu_kernels = 0;  // kernels that carry a launch configuration (grid/block or blocks per SM)
  std::vector<StepComputeUnits> steps;  // same order as RankBreakdown::steps
  StepComputeUnits total;               // over all steps
};

// Whether a kernel's name says it runs on tensor cores (the plugin's patterns plus newer libraries').
bool UsesTensorCores(std::string_view kernel_name);

RankComputeUnits ComputeRankComputeUnits(const Trace& trace, const RankBreakdown& breakdown,
                                         const HardwareSelection& hardware);

}  // namespace tuneprof

#pragma once
// How well the compute units are used, per rank and per step, against the chip the rank ran on
// (hardware_profile.h). GPU figures follow the PyTorch TensorBoard plugin's definitions
// (pytorch/kineto tb_plugin gpu_metrics_parser.py), over the same
// step windows as time_breakdown.h (each step's span of device work, clipped):
//
//   busy %          = |U(kernels)| / wall × 100 ("GPU utilization": any kernel running)
//   SM efficiency   = ∫ min(Σ blocks_per_SM of the kernels running at t, 1) dt / wall, where a kernel's
//                     blocks_per_SM is Kineto's arg (grid blocks / numSms), else grid / the device's numSms,
//                     else grid / the chip profile's SM count (exports that do not describe the device)
//   occupancy       = Σ occ_K·dur_K / Σ dur_K over kernels with Kineto's `est. achieved occupancy %`, or
//                     the same estimate made here from the launch configuration where the producer wrote
//                     none (launch_occupancy.h)
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

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/compute/generation_metrics.h"
#include "analysis/compute/gpu_metrics.h"
#include "analysis/compute/memory_traffic.h"
#include "analysis/core/graph_replays.h"
#include "analysis/compute/op_flops.h"
#include "analysis/core/hardware_profile.h"
#include "model/trace.h"

namespace tuneprof {

// The sums a window's figures are made of; windows add up by adding them.
struct GpuUnitSums {
  int64_t wall_ns = 0;      // window wall × GPUs that ran kernels
  int64_t busy_ns = 0;      // |U(kernels)| per GPU, summed
  double sm_active_ns = 0;  // ∫ min(Σ blocks per SM, 1) dt
  uint64_t kernels = 0;
  uint64_t kernels_with_blocks = 0;  // blocks per SM known
  int64_t kernel_ns = 0;             // Σ dur_K (clipped to the window)
  double occupancy_ns = 0;           // Σ occ_K·dur_K
  int64_t occupancy_known_ns = 0;    // Σ dur_K of kernels with an occupancy
  int64_t tensor_core_ns = 0;
  double waves_ns = 0;  // Σ waves_K·dur_K
  int64_t waves_known_ns = 0;

  void Add(const GpuUnitSums& other);

  std::optional<double> BusyPct() const;            // 0..100
  std::optional<double> SmEfficiency() const;       // 0..1; nullopt when no kernel had blocks per SM
  std::optional<double> AchievedOccupancy() const;  // 0..1
  std::optional<double> TensorCoreShare() const;    // 0..1
  std::optional<double> WavesPerSm() const;
};

// Ascend PMU ratios of kernel_details rows (aic_metrics PipeUtilization / ArithmeticUtilization), each
// time-weighted over the rows that carry it: aic_* by aicore_time(us), aiv_* by aiv_time(us),
// cube_utilization(%) by Duration. A row counts for a ratio only when both cells are numbers.
enum class AscendRatio : uint8_t {
  kAicMac,
  kAicScalar,
  kAicMte1,
  kAicMte2,
  kAicFixpipe,
  kAicMacFp16,
  kAicMacInt8,
  kAivVec,
  kAivScalar,
  kAivMte2,
  kAivMte3,
  kAivVecFp32,
  kAivVecFp16,
  kAivVecInt32,
  kAivVecMisc,
  kCubeUtilization,  // cube_utilization(%) / 100
  kCount,
};
constexpr size_t kAscendRatioCount = static_cast<size_t>(AscendRatio::kCount);
// The kernel_details column of a ratio ("aic_mac_ratio"); reports use it as the key.
std::string_view AscendRatioColumn(AscendRatio ratio);

struct AscendUnitSums {
  uint64_t rows = 0;
  int64_t dur_ns = 0;
  double weighted[kAscendRatioCount] = {};  // Σ ratio·weight
  double weight[kAscendRatioCount] = {};    // Σ weight (µs)
  bool seen[kAscendRatioCount] = {};        // some row had the column
  double fops = 0;                          // Σ aic/aiv cube/vector _fops (ArithmeticUtilization)
  int64_t fops_dur_ns = 0;                  // Σ Duration of the rows with fops
  double occupancy_ns = 0;                  // Σ min(block dim / cores, 1)·dur
  int64_t occupancy_known_ns = 0;

  void Add(const AscendUnitSums& other);
  // nullopt when no row carried the column or the weights sum to 0.
  std::optional<double> Ratio(AscendRatio ratio) const;
  std::optional<double> FlopsPerSecond() const;  // Σ fops / Σ Duration
  std::optional<double> BlockOccupancy() const;  // block dim over the core type's count, 0..1
};

// Which unit bounds an operator, by Huawei's cut-offs (msprof-analyze advisor AI Core Performance):
// cube ops mac ≥ 0.8 or mte2 ≥ 0.95; vector ops vec, mte2 or mte3 ≥ 0.7, or vec+mte2+mte3 ≥ 0.9.
enum class AscendBound : uint8_t { kUnknown, kNone, kMac, kMte2, kVec, kMte3, kVecMte };
std::string_view AscendBoundName(AscendBound bound);

struct AscendCoreShare {
  std::string core;  // Accelerator Core as written ("AI_CORE", "MIX_AIV", "AI_CPU"; "" when absent)
  int64_t dur_ns = 0;
};

// One operator type (kernel_details Type; the Name when the run wrote no type).
struct AscendOpTypeUnits {
  std::string type;
  // "cube" when more of its time ran on AI_CORE / MIX_AIC rows than on AI_VECTOR_CORE / MIX_AIV ones,
  // "vector" when the latter ran longer, "other" when neither ran (AI_CPU, HCCL, DSA_SQE).
  std::string_view unit = "other";
  AscendUnitSums sums;
  std::vector<AscendCoreShare> cores;  // by time, descending
  AscendBound bound = AscendBound::kUnknown;
  // The guide's rule: the op's main unit (mac for cube ops, vec for vector ops) below the threshold.
  std::optional<bool> below_threshold;
};

struct AscendStepUnits {
  int64_t step = 0;  // Step Id
  AscendUnitSums sums;
};

struct AscendComputeUnits {
  bool present = false;                     // the rank has kernel_details rows with PMU columns
  AscendUnitSums total;                     // every row
  std::vector<AscendStepUnits> steps;       // by Step Id, ascending (rows without one only in total)
  std::vector<AscendOpTypeUnits> op_types;  // by time, descending
};

// The per-operator bound and the guide's threshold (0..1) applied to one op type's sums.
AscendBound AscendBoundOf(const AscendUnitSums& sums, bool cube);

// LLM serving figures from the generation markers (generation_metrics.h: request#i, prefill, decode_step).
struct ServingMetrics {
  uint64_t requests = 0;
  uint64_t decode_steps = 0;
  std::optional<double> ttft_ns;                // mean over requests with one
  std::optional<double> tpot_ns;                // mean decode_step duration
  std::optional<double> decode_tokens_per_s;    // decode steps (× batch 1) / Σ decode_step time
  std::optional<double> bytes_per_decode_step;  // from --model-params / --kv-bytes-per-token
  std::optional<double> mbu;                    // bytes per step / TPOT / peak memory bandwidth
};

// The guide's compute bottleneck: the rank's main unit below the threshold. Ascend: Cube (aic_mac_ratio)
// when more PMU time ran on AI Cores than on vector cores, else Vector (aiv_vec_ratio); GPUs: estimated
// SM efficiency. `ops` are what costs most below it: Ascend op types whose unit is below the threshold,
// GPU operators whose time at the roofline is under threshold × their time, by time.
// Low utilization is a bottleneck only where compute is material: computing holds the largest part of
// the device's step (at least its exposed communication, its exposed copies and its idle time each).
// A device idle most of the step is bound by what keeps it idle, as `analyze` says, not by its units.
struct ComputeStepVerdict {
  std::optional<int64_t> step;
  std::optional<double> utilization;
  std::optional<bool> bottleneck;
  std::optional<double> compute_share;  // computing / device wall time; nullopt without a wall
};

struct ComputeVerdict {
  std::string unit;  // "cube", "vector", "sm"; "" when nothing measured it
  double threshold = 0.7;
  std::optional<double> utilization;
  std::optional<bool> bottleneck;       // nullopt: unknown
  std::optional<double> compute_share;  // over all steps, as ComputeStepVerdict
  bool compute_material = true;         // compute is the largest part of the step (over all steps)
  std::vector<std::string> ops;
  std::vector<ComputeStepVerdict> steps;
};

struct StepComputeUnits {
  std::optional<int64_t> step;  // as in StepBreakdown
  GpuUnitSums gpu;
  SampledGpuMetrics sampled;  // nsys GPU metrics over the step's device span (gpu_metrics.h)
};

struct RankComputeUnits {
  std::optional<std::string> hardware;  // profile name; nullopt when the chip is unknown
  std::string device_name;              // as the trace names it
  std::string hardware_how;             // "detected", "--hardware", or why unknown
  // Model FLOP utilization from FLOPs estimated from record_shapes (op_flops.h): achieved FLOP/s over the
  // steps / (devices × the chip's dense peak for the dominant dtype); nullopt when FLOPs or peak are unknown.
  std::optional<double> mfu;
  RankOpFlops flops;
  // Ascend PMU ratios from kernel_details, time-weighted over the rows (the contract):
  // Σ(aic_mac_ratio·aicore_time)/Σ aicore_time, Σ(aiv_vec_ratio·aiv_time)/Σ aiv_time,
  // Σ(aic_scalar_ratio·aicore_time)/Σ aicore_time; nullopt when the columns are absent.
  std::optional<double> cube_ratio;
  std::optional<double> vector_ratio;
  std::optional<double> scalar_ratio;
  uint64_t gpu_kernels = 0;  // kernels that carry a launch configuration (grid/block or blocks per SM)
  // Kernels whose occupancy tuneprof estimated from the launch configuration (launch_occupancy.h), the
  // producer having written none (Nsight Systems exports); 0 on Kineto traces, which carry their own.
  uint64_t estimated_occupancy_kernels = 0;
  bool sm_limits_from_device = false;    // SMs / per-SM limits came from the trace's device properties
  bool sm_limits_from_profile = false;   // ... or from the chip profile (hardware_how says how it was chosen)
  std::vector<int64_t> gpu_ids;          // the GPUs that ran kernels, as the trace numbers them
  std::vector<StepComputeUnits> steps;   // same order as RankBreakdown::steps
  StepComputeUnits total;                // over all steps
  AscendComputeUnits ascend;             // kernel_details PMU figures (present = false elsewhere)
  MemoryTrafficEstimate memory_traffic;  // operators' tensor bytes over their time (memory_traffic.h)
  MemoryTrafficEstimate hbm;             // msprof's HBM sampling over the steps' device span (memory_traffic.h)
  // nsys GPU metrics over the rank's device span: measured SM activity and DRAM throughput, preferred
  // to the launch-configuration and shape estimates where the export has them.
  SampledGpuMetrics sampled;
  GraphReplays graphs;                    // the device work CUDA graphs replayed, found once for the rank's analyses
  std::optional<ServingMetrics> serving;  // nullopt without generation markers
  ComputeVerdict verdict;
};

struct ComputeOptions {
  double threshold = 0.7;  // the guide's "compute units below 70 % utilization"
  // MBU of decode steps: (model_params × param_bytes + kv_bytes_per_token × context_tokens) / TPOT / the
  // chip's memory bandwidth. model_params = 0: not given, no MBU.
  double model_params = 0;
  double param_bytes = 2;
  double kv_bytes_per_token = 0;
  double context_tokens = 0;
  GenerationMarkers generation_markers;  // the serving loop's marker names
};

// Whether a kernel's name says it runs on tensor cores (the plugin's patterns plus newer libraries'),
// or on AMD's matrix cores (Tensile `_MI<m>x<n>x<k>` and half/bf16 Cijk GEMMs, Composable Kernel XDL,
// ck_tile and aiter GEMM / attention kernels), which the same figures count as tensor-core work.
bool UsesTensorCores(std::string_view kernel_name);

// `tree`: BuildHostOpTree(trace) where the caller has it (built here otherwise).
RankComputeUnits ComputeRankComputeUnits(const Trace& trace, const RankBreakdown& breakdown,
                                         const HardwareSelection& hardware, const ComputeOptions& options = {},
                                         const HostOpTree* tree = nullptr);

// The kernel_details figures alone (reads only trace.kernel_details()).
AscendComputeUnits ComputeAscendUnits(const Trace& trace, const HardwareProfile* profile, double threshold);

}  // namespace tuneprof

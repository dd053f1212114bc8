#include "analysis/compute_units.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

#include "analysis/intervals.h"

namespace tuneprof {
namespace {

// The TensorBoard plugin's TC_Allowlist (tb_plugin/torch_tb_profiler/profiler/tensor_core.py, after
// NVIDIA PyProf tc.py): a kernel uses tensor cores when its name contains one of these.
constexpr std::array<std::string_view, 18> kPluginTensorCorePatterns = {
    "h884", "s884", "h1688", "s1688", "hmma", "i8816", "16816", "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel", "conv1x1", "conv2d_c1_k1", "direct_group", "xmma_implicit_gemm",
    "xmma_sparse_conv", "xmma_warp_specialized_implicit_gemm", "xmma_gemm", "xmma_sparse_gemm", "c1688",
};

// Kernels newer than the plugin's list, which it would count as not using tensor cores.
constexpr std::array<std::string_view, 7> kNewerTensorCorePatterns = {
    "tensorop",   // CUTLASS tensor-op kernels (cutlass_80_tensorop_*); CUTLASS's CUDA-core ones say "simt"
    "_xmma_",     // cuDNN 8+ "sm80_xmma_fprop_implicit_gemm_*", "sm90_xmma_*": xmma is NVIDIA's MMA library
    "gmma",       // Hopper warpgroup MMA ("gmma", "wgmma") kernels
    "nvjet",      // cuBLAS's Hopper/Blackwell GEMM kernels
    "flash_fwd",  // FlashAttention (built on mma instructions)
    "flash_bwd",
    "fmha",       // fused multi-head attention (xformers, cuDNN, TensorRT)
};

// Kineto writes `est. achieved occupancy %` as a whole percent, so resident blocks recomputed from it
// are off by up to this much for small blocks (32 threads of 2048: 0.5 % = 0.32 blocks).
constexpr double kResidentRoundingSlack = 0.5;

// One kernel as the GPU figures need it; -1 = unknown.
struct KernelSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  double blocks_per_sm = -1;
  double occupancy = -1;
  double waves = -1;
  bool tensor_core = false;
};

// The kernels of one GPU, sorted by start.
struct GpuKernels {
  std::vector<KernelSpan> kernels;
  int64_t max_duration_ns = 0;
};

int64_t Product(const int64_t (&dims)[3]) {
  if (dims[0] == kNoId || dims[1] == kNoId || dims[2] == kNoId) return kNoId;
  return dims[0] * dims[1] * dims[2];
}

// Kineto's arg when present (grid blocks / numSms), else the same from the grid and the device.
double BlocksPerSm(const KernelInfo& info, const Device* device) {
  if (info.blocks_per_sm >= 0) return info.blocks_per_sm;
  const int64_t blocks = Product(info.grid);
  if (blocks == kNoId || !device || device->num_sms == kNoId || device->num_sms <= 0) return -1;
  return static_cast<double>(blocks) / static_cast<double>(device->num_sms);
}

// Waves = rounds of resident blocks an SM runs. Kineto's occupancy is min(max resident blocks, blocks
// per SM) × block size / max threads per SM; when the grid capped it, every block was resident at once
// and the kernel ran one wave (a fraction of one when it had fewer blocks than SMs).
double EstimateWaves(double blocks_per_sm, double occupancy, int64_t threads_per_block, const Device* device) {
  if (blocks_per_sm < 0 || occupancy < 0 || threads_per_block == kNoId || threads_per_block <= 0 || !device ||
      device->max_threads_per_sm == kNoId || device->max_threads_per_sm <= 0) {
    return -1;
  }
  const double resident =
      occupancy * static_cast<double>(device->max_threads_per_sm) / static_cast<double>(threads_per_block);
  if (resident + kResidentRoundingSlack >= blocks_per_sm) return std::min(blocks_per_sm, 1.0);
  return blocks_per_sm / std::max(1.0, std::round(resident));
}

const Device* DeviceAt(const Trace& trace, uint32_t device) {
  return device == kNoIndex ? nullptr : &trace.devices()[device];
}

struct CollectedKernels {
  std::map<uint32_t, GpuKernels> by_device;  // device index (kNoIndex: unidentified) -> kernels
  uint64_t with_launch_config = 0;
};

KernelSpan SpanOf(const Trace& trace, uint32_t event, const KernelInfo* info, const Device* device) {
  const EventTable& events = trace.events();
  KernelSpan span;
  span.start_ns = events.ts_ns[event];
  span.end_ns = events.end_ns(event);
  span.tensor_core = UsesTensorCores(trace.str(events.name[event]));
  if (info) {
    span.blocks_per_sm = BlocksPerSm(*info, device);
    span.occupancy = info->achieved_occupancy;
    span.waves = EstimateWaves(span.blocks_per_sm, span.occupancy, Product(info->block), device);
  }
  return span;
}

CollectedKernels CollectKernels(const Trace& trace) {
  std::unordered_map<uint32_t, const KernelInfo*> info_of;
  info_of.reserve(trace.kernels().size());
  for (const KernelInfo& info : trace.kernels()) info_of.emplace(info.event, &info);
  const EventTable& events = trace.events();
  CollectedKernels out;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kKernel || events.dur_ns[i] < 0) continue;
    const uint32_t device = trace.processes()[trace.tracks()[events.track[i]].process].device;
    auto it = info_of.find(i);
    const KernelInfo* info = it == info_of.end() ? nullptr : it->second;
    if (info && (info->blocks_per_sm >= 0 || Product(info->grid) != kNoId)) ++out.with_launch_config;
    GpuKernels& gpu = out.by_device[device];
    gpu.kernels.push_back(SpanOf(trace, i, info, DeviceAt(trace, device)));
    gpu.max_duration_ns = std::max(gpu.max_duration_ns, events.dur_ns[i]);
  }
  for (auto& [device, gpu] : out.by_device) {
    std::sort(gpu.kernels.begin(), gpu.kernels.end(),
              [](const KernelSpan& a, const KernelSpan& b) { return a.start_ns < b.start_ns; });
  }
  return out;
}

// ∫ min(Σ blocks per SM of the running kernels, 1) dt: the plugin's merge_ranges_with_value, a sweep
// over start/end points with starts first at equal times.
double SmActiveNs(std::vector<std::pair<Interval, double>> ranges) {
  struct Point {
    int64_t ts;
    bool end;
    double blocks;
  };
  std::vector<Point> points;
  points.reserve(ranges.size() * 2);
  for (const auto& [range, blocks] : ranges) {
    points.push_back(Point{range.start_ns, false, blocks});
    points.push_back(Point{range.end_ns, true, blocks});
  }
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.ts != b.ts ? a.ts < b.ts : !a.end && b.end; });
  double active_ns = 0;
  double running = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (i > 0 && running > 0) {
      active_ns += std::min(running, 1.0) * static_cast<double>(points[i].ts - points[i - 1].ts);
    }
    running += points[i].end ? -points[i].blocks : points[i].blocks;
  }
  return active_ns;
}

void AddKernel(const KernelSpan& k, Interval clipped, GpuUnitSums* sums, std::vector<Interval>* busy,
               std::vector<std::pair<Interval, double>>* sm_ranges) {
  const int64_t dur = clipped.length();
  ++sums->kernels;
  sums->kernel_ns += dur;
  busy->push_back(clipped);
  if (k.tensor_core) sums->tensor_core_ns += dur;
  if (k.blocks_per_sm >= 0) {
    ++sums->kernels_with_blocks;
    if (k.blocks_per_sm > 0) sm_ranges->emplace_back(clipped, k.blocks_per_sm);
  }
  if (k.occupancy >= 0) {
    sums->occupancy_ns += k.occupancy * static_cast<double>(dur);
    sums->occupancy_known_ns += dur;
  }
  if (k.waves >= 0) {
    sums->waves_ns += k.waves * static_cast<double>(dur);
    sums->waves_known_ns += dur;
  }
}

// One GPU's kernels clipped to [start, end), as the plugin clips them to the steps' range.
GpuUnitSums MeasureGpu(const GpuKernels& gpu, int64_t start_ns, int64_t end_ns) {
  GpuUnitSums sums;
  sums.wall_ns = end_ns - start_ns;
  std::vector<Interval> busy;
  std::vector<std::pair<Interval, double>> sm_ranges;
  // Kernels that overlap the window start no earlier than start - the longest kernel.
  auto it = std::lower_bound(gpu.kernels.begin(), gpu.kernels.end(), start_ns - gpu.max_duration_ns,
                             [](const KernelSpan& k, int64_t ts) { return k.start_ns < ts; });
  for (; it != gpu.kernels.end() && it->start_ns < end_ns; ++it) {
    const Interval clipped{std::max(it->start_ns, start_ns), std::min(it->end_ns, end_ns)};
    if (clipped.length() > 0) AddKernel(*it, clipped, &sums, &busy, &sm_ranges);
  }
  sums.busy_ns = TotalLength(UnionOf(std::move(busy)));
  sums.sm_active_ns = SmActiveNs(std::move(sm_ranges));
  return sums;
}

StepComputeUnits MeasureStep(const CollectedKernels& kernels, const StepBreakdown& step) {
  StepComputeUnits out;
  out.step = step.step;
  if (step.device_start_ns == kNoId) return out;
  for (const auto& [device, gpu] : kernels.by_device) {
    out.gpu.Add(MeasureGpu(gpu, step.device_start_ns, step.device_end_ns));
  }
  return out;
}

std::optional<double> Ratio(double part, double whole) {
  if (whole <= 0) return std::nullopt;
  return part / whole;
}

}  // namespace

void GpuUnitSums::Add(const GpuUnitSums& other) {
  wall_ns += other.wall_ns;
  busy_ns += other.busy_ns;
  sm_active_ns += other.sm_active_ns;
  kernels += other.kernels;
  kernels_with_blocks += other.kernels_with_blocks;
  kernel_ns += other.kernel_ns;
  occupancy_ns += other.occupancy_ns;
  occupancy_known_ns += other.occupancy_known_ns;
  tensor_core_ns += other.tensor_core_ns;
  waves_ns += other.waves_ns;
  waves_known_ns += other.waves_known_ns;
}

std::optional<double> GpuUnitSums::BusyPct() const {
  if (kernels == 0) return std::nullopt;
  auto ratio = Ratio(static_cast<double>(busy_ns), static_cast<double>(wall_ns));
  return ratio ? std::optional<double>(*ratio * 100.0) : std::nullopt;
}

std::optional<double> GpuUnitSums::SmEfficiency() const {
  if (kernels_with_blocks == 0) return std::nullopt;
  return Ratio(sm_active_ns, static_cast<double>(wall_ns));
}

std::optional<double> GpuUnitSums::AchievedOccupancy() const {
  return Ratio(occupancy_ns, static_cast<double>(occupancy_known_ns));
}

std::optional<double> GpuUnitSums::TensorCoreShare() const {
  return Ratio(static_cast<double>(tensor_core_ns), static_cast<double>(kernel_ns));
}

std::optional<double> GpuUnitSums::WavesPerSm() const {
  return Ratio(waves_ns, static_cast<double>(waves_known_ns));
}

bool UsesTensorCores(std::string_view kernel_name) {
  auto in_name = [&](std::string_view pattern) { return kernel_name.find(pattern) != std::string_view::npos; };
  return std::any_of(kPluginTensorCorePatterns.begin(), kPluginTensorCorePatterns.end(), in_name) ||
         std::any_of(kNewerTensorCorePatterns.begin(), kNewerTensorCorePatterns.end(), in_name);
}

RankComputeUnits ComputeRankComputeUnits(const Trace& trace, const RankBreakdown& breakdown,
                                         const HardwareSelection& hardware) {
  RankComputeUnits out;
  if (hardware.profile) out.hardware = hardware.profile->name;
  out.device_name = hardware.device_name;
  out.hardware_how = hardware.how;
  const CollectedKernels kernels = CollectKernels(trace);
  out.gpu_kernels = kernels.with_launch_config;
  for (const StepBreakdown& step : breakdown.steps) {
    out.steps.push_back(MeasureStep(kernels, step));
    out.total.gpu.Add(out.steps.back().gpu);
  }
  return out;
}

}  // namespace tuneprof

#include "analysis/compute/compute_units.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

#include "analysis/compute/launch_occupancy.h"
#include "analysis/core/intervals.h"
#include "analysis/core/name_test_memo.h"
#include "analysis/core/side_rows_by_event.h"

namespace tuneprof {
namespace {

// The TensorBoard plugin's TC_Allowlist (tb_plugin/torch_tb_profiler/profiler/tensor_core.py, after
// NVIDIA PyProf tc.py): a kernel uses tensor cores when its name contains one of these.
constexpr std::array<std::string_view, 18> kPluginTensorCorePatterns = {
    "h884",
    "s884",
    "h1688",
    "s1688",
    "hmma",
    "i8816",
    "16816",
    "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel",
    "conv1x1",
    "conv2d_c1_k1",
    "direct_group",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_warp_specialized_implicit_gemm",
    "xmma_gemm",
    "xmma_sparse_gemm",
    "c1688",
};

// Kernels newer than the plugin's list, which it would count as not using tensor cores.
constexpr std::array<std::string_view, 7> kNewerTensorCorePatterns = {
    "tensorop",   // CUTLASS tensor-op kernels (cutlass_80_tensorop_*); CUTLASS's CUDA-core ones say "simt"
    "_xmma_",     // cuDNN 8+ "sm80_xmma_fprop_implicit_gemm_*", "sm90_xmma_*": xmma is NVIDIA's MMA library
    "gmma",       // Hopper warpgroup MMA ("gmma", "wgmma") kernels
    "nvjet",      // cuBLAS's Hopper/Blackwell GEMM kernels
    "flash_fwd",  // FlashAttention (built on mma instructions)
    "flash_bwd",
    "fmha",  // fused multi-head attention (xformers, cuDNN, TensorRT)
};

// AMD libraries' GEMM and attention kernels whose names show matrix-core (MFMA) work: Composable
// Kernel's XDL kernels (xdlops are its MFMA path) and, below, ck_tile's and aiter's GEMM / attention
// kernels. Matched case-sensitively as the libraries spell them.
constexpr std::array<std::string_view, 2> kAmdMatrixCorePatterns = {
    "_xdl",  // kernel_gemm_xdl_cshuffle_v3, gridwise_gemm_xdlops_...
    "xdlops",
};

// Words of a ck_tile or aiter kernel name that make it a GEMM or attention kernel; the same libraries'
// normalisation and elementwise kernels run on the vector units.
constexpr std::array<std::string_view, 6> kAmdMatmulWords = {"gemm", "Gemm", "fmha", "Fmha", "fmoe", "mha_"};

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Tensile names the MFMA instruction a GEMM uses as `_MI<m>x<n>x<k>`; its MAC (vector) kernels have none.
bool HasTensileMatrixInstruction(std::string_view name) {
  for (size_t at = name.find("_MI"); at != std::string_view::npos; at = name.find("_MI", at + 1)) {
    std::string_view rest = name.substr(at + 3);
    rest = rest.substr(0, rest.find('_'));
    const size_t x1 = rest.find('x');
    const size_t x2 = x1 == std::string_view::npos ? x1 : rest.find('x', x1 + 1);
    if (x2 == std::string_view::npos) continue;
    if (IsDigits(rest.substr(0, x1)) && IsDigits(rest.substr(x1 + 1, x2 - x1 - 1)) && IsDigits(rest.substr(x2 + 1))) {
      return true;
    }
  }
  return false;
}

// A Tensile GEMM (`Cijk_<A layout>_<B layout>_<data type>_...`) on half or bf16 data ("H", "HB", "B",
// "BBS", ...): the MFMA-capable chips run those on the matrix cores.
bool IsHalfTensileGemm(std::string_view name) {
  const size_t at = name.find("Cijk_");
  if (at == std::string_view::npos) return false;
  std::string_view rest = name.substr(at + 5);
  for (int token = 0; token < 2; ++token) {
    const size_t end = rest.find('_');
    if (end == std::string_view::npos) return false;
    rest = rest.substr(end + 1);
  }
  return !rest.empty() && (rest.front() == 'H' || rest.front() == 'B');
}

bool UsesAmdMatrixCores(std::string_view name) {
  auto in_name = [&](std::string_view pattern) { return name.find(pattern) != std::string_view::npos; };
  if (HasTensileMatrixInstruction(name) || IsHalfTensileGemm(name)) return true;
  if (std::any_of(kAmdMatrixCorePatterns.begin(), kAmdMatrixCorePatterns.end(), in_name)) return true;
  return (in_name("ck_tile") || in_name("aiter")) &&
         std::any_of(kAmdMatmulWords.begin(), kAmdMatmulWords.end(), in_name);
}

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

// Kineto's arg when present (grid blocks / numSms), else the same from the grid and the SM count.
double BlocksPerSm(const KernelInfo& info, const SmLimits& limits) {
  if (info.blocks_per_sm >= 0) return info.blocks_per_sm;
  const int64_t blocks = LaunchDimsProduct(info.grid);
  if (blocks == kNoId || limits.sm_count == kNoId || limits.sm_count <= 0) return -1;
  return static_cast<double>(blocks) / static_cast<double>(limits.sm_count);
}

// Waves = rounds of resident blocks an SM runs. Kineto's occupancy is min(max resident blocks, blocks
// per SM) × block size / max threads per SM; when the grid capped it, every block was resident at once
// and the kernel ran one wave (a fraction of one when it had fewer blocks than SMs).
double EstimateWaves(double blocks_per_sm, double occupancy, int64_t threads_per_block, const SmLimits& limits) {
  if (blocks_per_sm < 0 || occupancy < 0 || threads_per_block == kNoId || threads_per_block <= 0 ||
      limits.max_threads_per_sm == kNoId || limits.max_threads_per_sm <= 0) {
    return -1;
  }
  const double resident =
      occupancy * static_cast<double>(limits.max_threads_per_sm) / static_cast<double>(threads_per_block);
  if (resident + kResidentRoundingSlack >= blocks_per_sm) return std::min(blocks_per_sm, 1.0);
  return blocks_per_sm / std::max(1.0, std::round(resident));
}

const Device* DeviceAt(const Trace& trace, uint32_t device) {
  return device == kNoIndex ? nullptr : &trace.devices()[device];
}

struct CollectedKernels {
  std::map<uint32_t, GpuKernels> by_device;  // device index (kNoIndex: unidentified) -> kernels
  uint64_t with_launch_config = 0;
  uint64_t estimated_occupancy = 0;  // kernels whose occupancy tuneprof estimated (no producer figure)
  bool limits_from_device = false;
  bool limits_from_profile = false;
};

KernelSpan SpanOf(const Trace& trace, uint32_t event, const KernelInfo* info, const SmLimits& limits, bool tensor_core,
                  CollectedKernels* out) {
  const EventTable& events = trace.events();
  KernelSpan span;
  span.start_ns = events.ts_ns[event];
  span.end_ns = events.end_ns(event);
  span.tensor_core = tensor_core;
  if (info) {
    span.blocks_per_sm = BlocksPerSm(*info, limits);
    span.occupancy = info->achieved_occupancy;
    if (span.occupancy < 0) {
      // No producer figure (Nsight Systems exports): Kineto's estimate from the launch configuration.
      if (auto estimate = EstimateAchievedOccupancy(*info, span.blocks_per_sm, limits)) {
        span.occupancy = *estimate;
        ++out->estimated_occupancy;
      }
    }
    span.waves = EstimateWaves(span.blocks_per_sm, span.occupancy, LaunchDimsProduct(info->block), limits);
  }
  return span;
}

CollectedKernels CollectKernels(const Trace& trace, const HardwareProfile* profile) {
  SideRowsByEvent<KernelInfo> info_of(trace.kernels());
  NameTestMemo uses_tensor_cores(trace, UsesTensorCores);
  const EventTable& events = trace.events();
  CollectedKernels out;
  std::map<uint32_t, SmLimits> limits_of;  // per device index
  // Consecutive kernels mostly run on one device: its limits and list are looked up when it changes.
  uint32_t last_device = kNoIndex;
  const SmLimits* limits = nullptr;
  GpuKernels* gpu = nullptr;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kKernel || events.dur_ns[i] < 0) continue;
    const uint32_t device = trace.processes()[trace.tracks()[events.track[i]].process].device;
    const KernelInfo* info = info_of.Next(i);
    if (info && (info->blocks_per_sm >= 0 || LaunchDimsProduct(info->grid) != kNoId)) ++out.with_launch_config;
    if (gpu == nullptr || device != last_device) {
      auto found = limits_of.find(device);
      if (found == limits_of.end()) {
        found = limits_of.emplace(device, ResolveSmLimits(DeviceAt(trace, device), profile)).first;
      }
      limits = &found->second;
      gpu = &out.by_device[device];
      // Room for every kernel of the trace in the first device's list (one device per rank is usual).
      if (gpu->kernels.empty() && out.by_device.size() == 1) gpu->kernels.reserve(trace.kernels().size());
      last_device = device;
    }
    gpu->kernels.push_back(SpanOf(trace, i, info, *limits, uses_tensor_cores(events.name[i]), &out));
    gpu->max_duration_ns = std::max(gpu->max_duration_ns, events.dur_ns[i]);
  }
  for (const auto& [device_id, device_limits] : limits_of) {
    out.limits_from_device = out.limits_from_device || device_limits.from_device;
    out.limits_from_profile = out.limits_from_profile || device_limits.from_profile;
  }
  for (auto& [device_id, device_kernels] : out.by_device) {
    std::sort(device_kernels.kernels.begin(), device_kernels.kernels.end(),
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

constexpr size_t kVerdictOps = 5;

std::optional<bool> Below(std::optional<double> utilization, double threshold) {
  if (!utilization) return std::nullopt;
  return *utilization < threshold;
}

std::optional<double> ComputeShare(const StepBreakdown& step) {
  return Ratio(static_cast<double>(step.computing_ns), static_cast<double>(step.wall_ns));
}

// Computing is the largest of the parts the step splits into (time_breakdown.h); idle is free time plus
// uncovered waits. A step with no wall (no device work) keeps the plain threshold test.
bool ComputeMaterial(const StepBreakdown& step) {
  if (step.wall_ns <= 0) return true;
  const int64_t largest_other =
      std::max({step.communication_not_overlapped_ns, step.memcpy_ns, step.free_ns + step.other_ns});
  return step.computing_ns >= largest_other;
}

std::optional<bool> Bottleneck(std::optional<double> utilization, double threshold, bool material) {
  const std::optional<bool> below = Below(utilization, threshold);
  if (!below) return below;
  return *below && material;
}

void AscendVerdict(const AscendComputeUnits& a, ComputeVerdict* v) {
  const size_t mac = static_cast<size_t>(AscendRatio::kAicMac), vec = static_cast<size_t>(AscendRatio::kAivVec);
  const bool cube = a.total.weight[mac] >= a.total.weight[vec];
  const AscendRatio unit = cube ? AscendRatio::kAicMac : AscendRatio::kAivVec;
  v->unit = cube ? "cube" : "vector";
  v->utilization = a.total.Ratio(unit);
  for (const AscendStepUnits& step : a.steps) {
    const auto u = step.sums.Ratio(unit);
    v->steps.push_back(ComputeStepVerdict{step.step, u, Below(u, v->threshold), std::nullopt});
  }
  for (const AscendOpTypeUnits& op : a.op_types) {  // by time already
    if (op.below_threshold.value_or(false) && v->ops.size() < kVerdictOps) v->ops.push_back(op.type);
  }
}

// Measured SM activity (nsys GPU metrics) where the export sampled it, else SM efficiency estimated from
// launch configurations.
void GpuVerdict(const RankComputeUnits& c, ComputeVerdict* v) {
  v->unit = "sm";
  const bool sampled = c.sampled.sm_active.has_value();
  v->utilization = sampled ? c.sampled.sm_active : c.total.gpu.SmEfficiency();
  for (const StepComputeUnits& step : c.steps) {
    const auto u = sampled ? step.sampled.sm_active : step.gpu.SmEfficiency();
    v->steps.push_back(ComputeStepVerdict{step.step, u, Below(u, v->threshold), std::nullopt});
  }
  std::vector<const OpFlopsRow*> low;
  for (const OpFlopsRow& op : c.flops.ops) {
    if (op.roof.roof_time_ns && op.time_ns > 0 && op.outermost > 0 &&
        *op.roof.roof_time_ns < v->threshold * static_cast<double>(op.time_ns)) {
      low.push_back(&op);
    }
  }
  std::stable_sort(low.begin(), low.end(),
                   [](const OpFlopsRow* a, const OpFlopsRow* b) { return a->time_ns > b->time_ns; });
  for (size_t i = 0; i < low.size() && i < kVerdictOps; ++i) v->ops.push_back(low[i]->name);
}

// The per-step verdicts matched to the breakdown's steps by step number (Ascend steps come from
// kernel_details and may differ).
void ApplyMaterial(const RankBreakdown& breakdown, ComputeVerdict* v) {
  for (ComputeStepVerdict& verdict : v->steps) {
    for (const StepBreakdown& step : breakdown.steps) {
      if (step.step != verdict.step) continue;
      verdict.compute_share = ComputeShare(step);
      verdict.bottleneck = Bottleneck(verdict.utilization, v->threshold, ComputeMaterial(step));
    }
  }
  v->compute_share = ComputeShare(breakdown.total);
  v->compute_material = ComputeMaterial(breakdown.total);
  v->bottleneck = Bottleneck(v->utilization, v->threshold, v->compute_material);
}

ComputeVerdict Verdict(const RankComputeUnits& c, const RankBreakdown& breakdown, double threshold) {
  ComputeVerdict v;
  v.threshold = threshold;
  if (c.ascend.present)
    AscendVerdict(c.ascend, &v);
  else if (c.total.gpu.kernels > 0 || c.sampled.sm_active)
    GpuVerdict(c, &v);
  v.bottleneck = Below(v.utilization, threshold);
  // On Ascend the split is torch_npu's own step_trace (ascend_step_breakdown.h); its Computing against
  // its Communication(Not Overlapped) and Free decides materiality the same way.
  ApplyMaterial(breakdown, &v);
  return v;
}

std::optional<ServingMetrics> Serving(const Trace& trace, const HardwareProfile* profile, const ComputeOptions& o) {
  const GenerationMetrics g = ComputeGenerationMetrics(trace, o.generation_markers);
  if (g.empty()) return std::nullopt;
  ServingMetrics out;
  out.requests = g.requests.size();
  out.decode_steps = g.tpot_ns.size();
  auto mean = [](const std::vector<double>& v) -> std::optional<double> {
    if (v.empty()) return std::nullopt;
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  out.ttft_ns = mean(g.ttft_ns);
  out.tpot_ns = mean(g.tpot_ns);
  out.decode_tokens_per_s = g.decode_tokens_per_s;
  if (o.model_params > 0) {
    out.bytes_per_decode_step = o.model_params * o.param_bytes + o.kv_bytes_per_token * o.context_tokens;
    const auto& bandwidth = profile ? profile->memory_gb_per_s.value : std::nullopt;
    if (out.tpot_ns && *out.tpot_ns > 0 && bandwidth && *bandwidth > 0) {
      out.mbu = *out.bytes_per_decode_step / (*out.tpot_ns * 1e-9) / (*bandwidth * 1e9);
    }
  }
  return out;
}

// Σ over the rank's steps of the time every command reports as its step (StepTimeNs), the cut-off steps
// included: the FLOPs in the MFU's numerator count every step's operators.
int64_t TimedSteps(const RankBreakdown& breakdown) {
  int64_t total = 0;
  for (const auto* steps : {&breakdown.steps, &breakdown.incomplete_steps}) {
    for (const StepBreakdown& step : *steps) {
      if (__builtin_add_overflow(total, std::max<int64_t>(StepTimeNs(step, breakdown.definitions), 0), &total))
        return 0;
    }
  }
  return total;
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

std::optional<double> GpuUnitSums::WavesPerSm() const { return Ratio(waves_ns, static_cast<double>(waves_known_ns)); }

bool UsesTensorCores(std::string_view kernel_name) {
  auto in_name = [&](std::string_view pattern) { return kernel_name.find(pattern) != std::string_view::npos; };
  return std::any_of(kPluginTensorCorePatterns.begin(), kPluginTensorCorePatterns.end(), in_name) ||
         std::any_of(kNewerTensorCorePatterns.begin(), kNewerTensorCorePatterns.end(), in_name) ||
         UsesAmdMatrixCores(kernel_name);
}

RankComputeUnits ComputeRankComputeUnits(const Trace& trace, const RankBreakdown& breakdown,
                                         const HardwareSelection& hardware, const ComputeOptions& options,
                                         const HostOpTree* tree) {
  RankComputeUnits out;
  if (hardware.profile) out.hardware = hardware.profile->name;
  out.device_name = hardware.device_name;
  out.hardware_how = hardware.how;
  const CollectedKernels kernels = CollectKernels(trace, hardware.profile);
  out.gpu_kernels = kernels.with_launch_config;
  out.estimated_occupancy_kernels = kernels.estimated_occupancy;
  out.sm_limits_from_device = kernels.limits_from_device;
  out.sm_limits_from_profile = kernels.limits_from_profile;
  for (const auto& [device, gpu] : kernels.by_device) {
    if (device != kNoIndex) out.gpu_ids.push_back(trace.devices()[device].id);
  }
  const GpuMetricSamples samples(trace);
  for (const StepBreakdown& step : breakdown.steps) {
    out.steps.push_back(MeasureStep(kernels, step));
    out.total.gpu.Add(out.steps.back().gpu);
    if (step.device_start_ns != kNoId)
      out.steps.back().sampled = samples.Measure(step.device_start_ns, step.device_end_ns);
  }
  if (breakdown.total.device_start_ns != kNoId) {
    out.sampled = samples.Measure(breakdown.total.device_start_ns, breakdown.total.device_end_ns);
  }
  out.ascend = ComputeAscendUnits(trace, hardware.profile, options.threshold);
  out.graphs = FindGraphReplays(trace);
  out.flops = ComputeOpFlops(trace, hardware.profile, tree);
  if (breakdown.definitions == StepDefinitions::kTorchNpu) RetimeOpFlops(TimedSteps(breakdown), &out.flops);
  out.flops.graph_replayed_share = out.graphs.replayed_share();
  out.mfu = out.flops.mfu;
  if (breakdown.total.device_start_ns != kNoId) {
    out.hbm = MeasureHbmSampling(trace, hardware.profile, breakdown.total.device_start_ns,
                                 breakdown.total.device_end_ns, breakdown.total.computing_ns);
  }
  out.memory_traffic = MeasureNpuMainMemory(trace, hardware.profile);
  if (out.memory_traffic.ops == 0) out.memory_traffic = EstimateNpuMemoryTraffic(trace, hardware.profile);
  if (out.memory_traffic.ops == 0) out.memory_traffic = EstimateShapeMemoryTraffic(out.flops, hardware.profile);
  out.serving = Serving(trace, hardware.profile, options);
  out.verdict = Verdict(out, breakdown, options.threshold);
  out.cube_ratio = out.ascend.total.Ratio(AscendRatio::kAicMac);
  out.vector_ratio = out.ascend.total.Ratio(AscendRatio::kAivVec);
  out.scalar_ratio = out.ascend.total.Ratio(AscendRatio::kAicScalar);
  return out;
}

}  // namespace tuneprof

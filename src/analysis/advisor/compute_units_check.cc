#include <fmt/format.h>

#include "analysis/advisor/utilizations.h"
#include "model/producer_facts.h"

namespace tuneprof {
namespace {

// torch_npu's PMU ratios per operator (aic_mac_ratio, aiv_vec_ratio, ...) in kernel_details.
constexpr std::string_view kAscendPipeCounters =
    "torch_npu.profiler._ExperimentalConfig(aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization, "
    "profiler_level=torch_npu.profiler.ProfilerLevel.Level1)";
std::string PercentOrUnknown(std::optional<double> fraction) {
  return fraction ? fmt::format("{:.1f} %", 100 * *fraction) : std::string("unknown");
}

void ExplainUnknownGpuUnits(const RankEvidence& rank, UtilizationCheck* check) {
  const RankComputeUnits& compute = *rank.compute;
  if (compute.total.gpu.kernels == 0) {
    check->measured_as = "unknown: no kernels in the profiled steps";
    check->how_to_measure = "record the device: " + std::string(kCudaActivity);
  } else if (compute.gpu_kernels == 0) {
    check->measured_as = "unknown: the kernels carry no launch configuration (grid, block)";
    check->how_to_measure =
        "launch configurations: " + std::string(kCudaActivity) +
        " (both record grid and block per kernel); measured SM activity: " + std::string(kGpuMetricsOption);
  } else {
    check->measured_as = "unknown: the SM count is unknown (" + HardwareHow(rank.hardware) + ")";
    check->how_to_measure =
        "name the chip with --hardware NAME (the reason lists the candidates); measured SM activity: " +
        std::string(kGpuMetricsOption);
  }
}

std::string GpuUnitsMeasuredAs(const RankEvidence& rank) {
  const RankComputeUnits& compute = *rank.compute;
  const GpuUnitSums& gpu = compute.total.gpu;
  std::string source;
  if (ProducerFactsOf(rank.trace->metadata().format).nsight_systems) {
    source = "estimated from launch configurations (grid blocks / SMs";
    source += compute.sm_limits_from_profile ? " of " + ChipLabel(rank.hardware) + ")" : " of the device properties)";
  } else {
    source = "from the launch configurations Kineto recorded (blocks per SM)";
  }
  std::string out = fmt::format("SM efficiency (TensorBoard plugin definition) {}, time-weighted over {} kernels on {}",
                                source, gpu.kernels_with_blocks, GpuList(compute.gpu_ids));
  if (auto occupancy = gpu.AchievedOccupancy()) {
    out += fmt::format("; est. achieved occupancy {:.1f} %", 100 * *occupancy);
    if (compute.estimated_occupancy_kernels > 0) out += " (Kineto's estimate)";
  }
  return out;
}

}  // namespace

UtilizationCheck CheckComputeUnits(const RankEvidence& rank, const AdvisorConfig& config) {
  const Platform platform = MeasuredPlatformOf(rank);
  UtilizationCheck check = StartCheck("compute_units", config.Get(threshold::kComputeUnitUtilizationPct),
                                      platform == Platform::kCuda ? "SM efficiency" : "compute units", "");
  const RankComputeUnits& compute = *rank.compute;
  if (compute.cube_ratio || compute.vector_ratio) {
    // The engine the operators spend the most time on, as profile's compute verdict reads it (one engine
    // choice for every command); without that verdict, the busier engine.
    const bool verdict =
        compute.verdict.utilization && (compute.verdict.unit == "cube" || compute.verdict.unit == "vector");
    const bool cube =
        verdict ? compute.verdict.unit == "cube" : compute.cube_ratio.value_or(0) >= compute.vector_ratio.value_or(0);
    check.value_pct =
        100 * (verdict ? *compute.verdict.utilization : (cube ? compute.cube_ratio : compute.vector_ratio).value_or(0));
    check.label = cube ? "Cube" : "Vector";
    check.source = "pmu";
    check.measured_as =
        fmt::format("Ascend {} ratio ({}, time-weighted over {} kernel_details rows), {}; {} {}",
                    cube ? "Cube" : "Vector", cube ? "aic_mac_ratio x aicore_time" : "aiv_vec_ratio x aiv_time",
                    compute.ascend.total.rows, verdict ? "the engine most operator time ran on" : "the busier engine",
                    cube ? "Vector" : "Cube", PercentOrUnknown(cube ? compute.vector_ratio : compute.cube_ratio));
  } else if (compute.sampled.sm_active) {
    check.value_pct = 100 * *compute.sampled.sm_active;
    check.source = "gpu_metrics";
    check.label = "SMs active";
    check.measured_as = fmt::format(
        "sampled by Nsight Systems GPU metrics ({}), the mean of {} samples over the rank's device span on {}",
        compute.sampled.sm_metric, compute.sampled.sm_samples, GpuList(compute.sampled.gpus));
  } else if (auto sm = compute.total.gpu.SmEfficiency()) {
    check.value_pct = 100 * *sm;
    check.source = "launch_config";
    check.measured_as = GpuUnitsMeasuredAs(rank);
  } else if (platform == Platform::kCuda) {
    ExplainUnknownGpuUnits(rank, &check);
  } else if (platform == Platform::kCpu) {
    check.measured_as = "unknown: CPU-only trace (no device, no compute-unit counters)";
    check.how_to_measure = DeviceActivity(rank);
  } else {
    check.measured_as = rank.trace->kernel_details().present
                            ? "unknown: no PMU ratios in kernel_details (aic_metrics off, or Level0)"
                            : "unknown: no kernel_details in the input (a step summary without operators)";
    check.how_to_measure = std::string(kAscendPipeCounters);
  }
  MarkImmaterialCompute(compute, "compute", &check);
  return check;
}

}  // namespace tuneprof

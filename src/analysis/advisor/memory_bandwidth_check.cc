#include <fmt/format.h>

#include "analysis/advisor/utilizations.h"

namespace tuneprof {
namespace {

// torch_npu's per-operator main-memory bandwidth counters (main_mem_read_bw / main_mem_write_bw).
constexpr std::string_view kAscendMemoryCounters =
    "per-operator main-memory bandwidth: torch_npu.profiler._ExperimentalConfig("
    "aic_metrics=torch_npu.profiler.AiCMetrics.Memory)";

// "174 operators move 785.4 GB/s reading and writing their tensors once (...)": the estimate's population.
std::string TrafficPopulation(const MemoryTrafficEstimate& traffic) {
  if (traffic.measured) {
    return fmt::format(
        "{} operators on the AI cores move {:.1f} GB/s to and from main memory over their time (PMU "
        "aic/aiv_main_mem read + write bandwidth x core time, kernel_details)",
        traffic.ops, *traffic.achieved_gb_per_s);
  }
  std::string out = fmt::format("{} operators move {:.1f} GB/s reading and writing their tensors once ({}", traffic.ops,
                                *traffic.achieved_gb_per_s, traffic.source);
  if (traffic.ops_unknown > 0)
    out += fmt::format("; {} left out: no shapes or a type of unknown size", traffic.ops_unknown);
  return out + ")";
}

// The peak a traffic figure is measured against: the chip's memory bandwidth, or its cores' read path
// (no measured HBM peak), with `read_path_note` after that caveat.
std::string PeakText(const RankEvidence& rank, const MemoryTrafficEstimate& traffic, std::string_view read_path_note) {
  const bool read_path = traffic.peak_source == "core_read_path_gb_per_s";
  std::string out =
      read_path
          ? fmt::format("the cores' aggregate read path of {} ({:.0f} GB/s; no measured HBM peak{})",
                        ChipLabel(rank.hardware), *traffic.peak_gb_per_s, read_path_note)
          : fmt::format("the memory bandwidth of {} ({:.0f} GB/s)", ChipLabel(rank.hardware), *traffic.peak_gb_per_s);
  return out + FamilyRangeNote(rank.hardware, read_path ? &HardwareProfile::core_read_path_gb_per_s
                                                        : &HardwareProfile::memory_gb_per_s);
}

// The operators' tensor traffic over their time against the chip's peak: an estimate and a lower bound
// (caches, re-reads and workspaces are not seen). False when the trace has no operators with shapes.
bool CheckOperatorTraffic(const RankEvidence& rank, Platform platform, UtilizationCheck* check) {
  const MemoryTrafficEstimate& traffic = rank.compute->memory_traffic;
  if (traffic.ops == 0 || !traffic.achieved_gb_per_s) return false;
  if (traffic.utilization) {
    check->value_pct = 100 * *traffic.utilization;
    check->source = traffic.measured ? "pmu" : "operator_shapes";
    const std::string peak = PeakText(rank, traffic, "");
    check->measured_as = traffic.measured ? fmt::format("PMU counters (aic_metrics=Memory): {}, against {}",
                                                        TrafficPopulation(traffic), peak)
                                          : fmt::format("estimated from operator shapes, a lower bound: {}, against {}",
                                                        TrafficPopulation(traffic), peak);
    if (!traffic.measured && rank.compute->graphs.replayed_share() > 0) {
      check->measured_as += fmt::format(
          "; {:.1f} % of device-work time was replayed from CUDA graphs, whose kernels have no shapes and are not "
          "counted",
          100 * rank.compute->graphs.replayed_share());
    }
    return true;
  }
  check->measured_as =
      fmt::format("unknown: the chip's memory peak is unknown ({}); {}, {}", HardwareHow(rank.hardware),
                  traffic.measured ? "PMU counters (aic_metrics=Memory)" : "estimated from operator shapes",
                  TrafficPopulation(traffic));
  check->how_to_measure =
      platform == Platform::kNpu
          ? "name the chip with --hardware NAME (e.g. \"Ascend 910B2\"); " + std::string(kAscendMemoryCounters)
          : "name the chip with --hardware NAME; DRAM throughput: " + std::string(kGpuMetricsOption);
  return true;
}

// msprof's HBM sampling: the device's whole main-memory traffic over the steps, measured by the memory
// controller; preferred to every estimate, second to per-operator PMU counters. False without samples.
bool CheckHbmSampling(const RankEvidence& rank, UtilizationCheck* check) {
  const MemoryTrafficEstimate& hbm = rank.compute->hbm;
  if (!hbm.achieved_gb_per_s) return false;
  const std::string population = fmt::format(
      "{:.1f} GB/s read + write over the computing time ({:.1f} GB/s over the steps' whole device "
      "span, {} samples of {} HBM stack x direction series, msprof sys_hardware_mem)",
      *hbm.achieved_gb_per_s, *hbm.span_gb_per_s, hbm.samples, hbm.series);
  if (!hbm.utilization) {
    check->measured_as = fmt::format("unknown: the chip's memory peak is unknown ({}); HBM sampling measured {}",
                                     HardwareHow(rank.hardware), population);
    check->how_to_measure = "name the chip with --hardware NAME (e.g. \"Ascend 910B2\")";
    return true;
  }
  check->value_pct = 100 * *hbm.utilization;
  check->source = "hbm_samples";
  const std::string peak = PeakText(rank, hbm, ", so a lower bound");
  check->measured_as = fmt::format("sampled HBM bandwidth: {}, against {}", population, peak);
  MarkImmaterialCompute(*rank.compute, "kernels", check);
  return true;
}

// Nsight Systems' sampled DRAM throughput: a measured figure, preferred to every other. False without
// samples.
bool CheckSampledDram(const RankEvidence& rank, UtilizationCheck* check) {
  const SampledGpuMetrics& sampled = rank.compute->sampled;
  if (!sampled.dram_bandwidth) return false;
  check->value_pct = 100 * *sampled.dram_bandwidth;
  check->source = "gpu_metrics";
  check->measured_as = fmt::format(
      "sampled by Nsight Systems GPU metrics: DRAM Read + DRAM Write Bandwidth [Throughput %] (shares of the DRAM "
      "peak), means over the rank's device span on {}",
      GpuList(sampled.gpus));
  MarkImmaterialCompute(*rank.compute, "kernels", check);
  return true;
}

// The rank's copies whose path has a known peak, their achieved bandwidth weighted by their time.
struct CopySums {
  double weighted = 0;
  int64_t time = 0, copies = 0, unmeasured = 0;
  std::vector<std::string> devices;  // those with a measured copy
};

CopySums SumCopies(const MemoryAnalysis* memory) {
  CopySums sums;
  if (memory == nullptr) return sums;
  for (const DeviceMemory& device : memory->devices) {
    bool counted = false;
    for (const CopyTraffic& traffic : device.copies) {
      if (!traffic.utilization || traffic.time_ns <= 0) {
        sums.unmeasured += traffic.count;
        continue;
      }
      sums.weighted += *traffic.utilization * static_cast<double>(traffic.time_ns);
      sums.time += traffic.time_ns;
      sums.copies += traffic.count - traffic.unknown_size_count;
      counted = true;
    }
    if (counted) sums.devices.push_back(device.device);
  }
  return sums;
}

void CheckCopies(const RankEvidence& rank, bool gpu, const CopySums& sums, UtilizationCheck* check) {
  check->value_pct = 100 * sums.weighted / static_cast<double>(sums.time);
  check->source = "copies";
  // Copies are not the kernels' memory traffic: the label says what was measured, and how much of the
  // step the copies are says how much the figure can speak for.
  check->label = "memory bandwidth (copies)";
  check->measured_as = "copies' achieved bandwidth / peak of their path, time-weighted (no DRAM counters in the trace)";
  if (gpu) {
    std::string where;
    for (const std::string& device : sums.devices) where += (where.empty() ? "" : ", ") + device;
    check->measured_as +=
        fmt::format(" over copies ({}) on {}, peaks of {}", sums.copies, where, ChipLabel(rank.hardware));
  }
  const double traced_ns = rank.split.step_ns * static_cast<double>(rank.split.steps);
  if (traced_ns > 0) {
    check->measured_as +=
        fmt::format("; the copies take {:.1f} % of the steps' time", 100 * static_cast<double>(sums.time) / traced_ns);
  }
  MarkImmaterialCopies(rank.breakdown->total, check);
}

// Nothing measured the memory bandwidth: why, and what would, per platform.
void ExplainUnknownMemory(const RankEvidence& rank, Platform platform, int64_t unmeasured, UtilizationCheck* check) {
  if (platform == Platform::kCpu) {
    check->measured_as = "unknown: CPU-only trace (no device memory)";
    check->how_to_measure = DeviceActivity(rank);
  } else if (platform == Platform::kNpu) {
    check->measured_as = "unknown: no memory counters, no operator shapes and no copies against a known peak";
    check->how_to_measure = std::string(kAscendMemoryCounters) +
                            "; or operator shapes in kernel_details for an estimate: "
                            "profiler_level=torch_npu.profiler.ProfilerLevel.Level1 or higher";
  } else if (unmeasured > 0 && (rank.hardware == nullptr || rank.hardware->profile == nullptr)) {
    check->measured_as = fmt::format("unknown: no DRAM counters, and the peak of the copies ({}) needs the chip ({})",
                                     unmeasured, HardwareHow(rank.hardware));
    check->how_to_measure = "name the chip with --hardware NAME; DRAM throughput: " + std::string(kGpuMetricsOption);
  } else {
    check->measured_as = "unknown: no DRAM counters, no operator shapes and no copies against a known peak";
    check->how_to_measure = "DRAM throughput: " + std::string(kGpuMetricsOption) +
                            "; an estimate from operator shapes: torch.profiler.profile(record_shapes=True)";
  }
}

}  // namespace

UtilizationCheck CheckMemoryBandwidth(const RankEvidence& rank, const AdvisorConfig& config) {
  UtilizationCheck check =
      StartCheck("memory_bandwidth", config.Get(threshold::kMemoryBandwidthUtilizationPct), "memory bandwidth",
                 "unknown: no memory-bandwidth counters, and no copies against a known peak");
  const Platform platform = MeasuredPlatformOf(rank);
  if (CheckSampledDram(rank, &check)) return check;
  if (const MemoryTrafficEstimate& pmu = rank.compute->memory_traffic;
      !(pmu.measured && pmu.utilization) && CheckHbmSampling(rank, &check)) {
    return check;
  }
  if (CheckOperatorTraffic(rank, platform, &check) && check.value_pct) {
    MarkImmaterialCompute(*rank.compute, "kernels", &check);
    return check;
  }
  const CopySums sums = SumCopies(rank.memory);
  if (sums.time > 0) {
    CheckCopies(rank, platform == Platform::kCuda, sums, &check);
    return check;
  }
  if (!check.how_to_measure.empty()) return check;  // the operators' estimate, short of a peak
  ExplainUnknownMemory(rank, platform, sums.unmeasured, &check);
  return check;
}

}  // namespace tuneprof

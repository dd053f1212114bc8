#include "analysis/advisor/advisor.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <span>
#include <thread>

#include "analysis/advisor/rules/rules.h"
#include "analysis/advisor/stage_findings.h"
#include "base/rank_ranges.h"

namespace tuneprof {
namespace {

constexpr double kNoneGainShare = 0.05;  // "none" only if no finding would save 5 % of the step

}  // namespace

namespace {

// The capture options an unknown GPU utilization points to. Nsight Systems samples SM activity and DRAM
// throughput per GPU with --gpu-metrics-devices (GPU_METRICS rows); torch.profiler records each
// kernel's launch configuration with the CUDA activity, and NCCL message sizes on its kernels.
constexpr std::string_view kGpuMetricsOption =
    "nsys profile --gpu-metrics-devices=all samples it (GPU_METRICS), then nsys export --type sqlite";
constexpr std::string_view kCudaActivity =
    "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) or nsys profile "
    "--trace=cuda,nvtx";

// Where an Nsight Systems export's NCCL message sizes are: NCCL (2.19 on) writes them into the payloads of
// its NVTX API ranges, which `nsys export` leaves out unless asked; without NCCL's ranges, nsys did not
// trace them.
std::string NsysSizesHowTo(const Trace& trace) {
  const auto entry = std::find_if(trace.metadata().entries.begin(), trace.metadata().entries.end(),
                                  [](const MetadataEntry& e) { return e.key == kNcclPayloadsEntry; });
  if (entry != trace.metadata().entries.end()) {
    return fmt::format(
        "export the report again with `nsys export --type sqlite --include-blobs=true --include-json=true "
        "REPORT.nsys-rep`: NCCL's NVTX "
        "ranges are in it ({}), and their payloads carry each collective's message size and communicator; or "
        "profile with torch.profiler (ProfilerActivity.CUDA), whose NCCL kernel args carry the sizes",
        entry->value);
  }
  return "profile with `nsys profile --trace=cuda,nvtx` and NCCL 2.19 or later (NCCL_NVTX_DISABLE unset): NCCL's NVTX "
         "ranges carry each collective's message size; export with `nsys export --type sqlite --include-blobs=true`";
}

// What measures anything at all on a CPU-only trace: the device's activity.
constexpr std::string_view kDeviceActivity =
    "profile the device: torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) on "
    "GPUs, torch_npu.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]) on Ascend";
// torch_npu's PMU ratios per operator (aic_mac_ratio, aiv_vec_ratio, ...) in kernel_details.
constexpr std::string_view kAscendPipeCounters =
    "torch_npu.profiler._ExperimentalConfig(aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization, "
    "profiler_level=torch_npu.profiler.ProfilerLevel.Level1)";
// torch_npu's per-transport HCCL traffic (communication.json, analysis.db), written from Level1 up.
constexpr std::string_view kAscendCommunication =
    "torch_npu.profiler.profile with ProfilerActivity.NPU and "
    "_ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1) on every rank (communication.json)";

std::string PercentOrUnknown(std::optional<double> fraction) {
  return fraction ? fmt::format("{:.1f} %", 100 * *fraction) : std::string("unknown");
}

enum class Platform : uint8_t { kCpu, kAscend, kGpu };

Platform PlatformOf(const RankEvidence& rank) {
  if (rank.split.cpu_only) return Platform::kCpu;
  return rank.compute->ascend.present || rank.on_npu ? Platform::kAscend : Platform::kGpu;
}

// "GPU 0" / "GPUs 0, 1" (as the trace numbers them); "the GPU" when the trace does not number it.
std::string GpuList(const std::vector<int64_t>& ids) {
  if (ids.empty()) return "the GPU";
  std::string out = ids.size() == 1 ? "GPU " : "GPUs ";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out;
}

// The chip the figures are against and how it was chosen, when the trace did not name it.
std::string ChipLabel(const HardwareSelection* hardware) {
  if (hardware == nullptr || hardware->profile == nullptr) return "an unknown chip";
  if (hardware->inferred) return hardware->label;
  if (hardware->how == "--hardware") return hardware->profile->name + " (--hardware)";
  return hardware->profile->name;
}

// A family's figure (the variant unknown) in words: "; assumed Ascend 910B, variant unknown: the highest
// of its variants' 960-1420 GB/s, so the utilization is a lower bound"; "" for a single chip.
std::string FamilyRangeNote(const HardwareSelection* hardware, SourcedValue HardwareProfile::*field) {
  if (hardware == nullptr || hardware->profile == nullptr || hardware->profile->variants.empty()) return "";
  const SourcedValue& value = hardware->profile->*field;
  if (!value.range_low || !value.range_high) return "";
  std::string family = hardware->profile->name;
  if (const size_t cut = family.find(" ("); cut != std::string::npos) family.resize(cut);
  return fmt::format(
      "; assumed {}, variant unknown: the highest of its variants' {:.0f}-{:.0f} GB/s, so the "
      "utilization is a lower bound",
      family, *value.range_low, *value.range_high);
}

std::string HardwareHow(const HardwareSelection* hardware) {
  return hardware == nullptr ? std::string("the chip is unknown: pass --hardware NAME") : hardware->how;
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
  if (rank.trace->metadata().format == TraceFormat::kNsysSqlite) {
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

// A figure about the device's kernels (units, their memory traffic) speaks for the step only where
// computing is its largest part.
// `part`: "compute" for the units, "kernels" for the kernels' memory traffic (the same time, named for
// what the figure measures).
void MarkImmaterialCompute(const RankComputeUnits& compute, std::string_view part, UtilizationCheck* check) {
  if (!check->value_pct || compute.verdict.compute_material) return;
  check->immaterial_share = compute.verdict.compute_share.value_or(0);
  check->immaterial_part = std::string(part);
}

// The copies' bandwidth speaks for the step only where exposed copies are its largest part.
void MarkImmaterialCopies(const StepBreakdown& total, UtilizationCheck* check) {
  if (!check->value_pct || total.wall_ns <= 0) return;
  const int64_t largest_other =
      std::max({total.computing_ns, total.communication_not_overlapped_ns, total.free_ns + total.other_ns});
  if (total.memcpy_ns >= largest_other) return;
  check->immaterial_share = static_cast<double>(total.memcpy_ns) / static_cast<double>(total.wall_ns);
  check->immaterial_part = "copies";
}

// The collectives' bandwidth speaks for the step only where exposed communication is its largest part,
// as the copies' does for copies.
void MarkImmaterialCommunication(const StepBreakdown& total, UtilizationCheck* check) {
  if (!check->value_pct || total.wall_ns <= 0) return;
  const int64_t largest_other = std::max({total.computing_ns, total.memcpy_ns, total.free_ns + total.other_ns});
  if (total.communication_not_overlapped_ns >= largest_other) return;
  check->immaterial_share =
      static_cast<double>(total.communication_not_overlapped_ns) / static_cast<double>(total.wall_ns);
  check->immaterial_part = "collectives";
}

UtilizationCheck CheckComputeUnits(const RankEvidence& rank, const AdvisorConfig& config) {
  UtilizationCheck check;
  check.name = "compute_units";
  check.threshold_pct = config.Get(threshold::kComputeUnitUtilizationPct);
  check.label = "compute units";
  const RankComputeUnits& compute = *rank.compute;
  const Platform platform = PlatformOf(rank);
  check.label = platform == Platform::kGpu ? "SM efficiency" : "compute units";
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
  } else if (platform == Platform::kGpu) {
    ExplainUnknownGpuUnits(rank, &check);
  } else if (platform == Platform::kCpu) {
    check.measured_as = "unknown: CPU-only trace (no device, no compute-unit counters)";
    check.how_to_measure = std::string(kDeviceActivity);
  } else {
    check.measured_as = rank.trace->kernel_details().present
                            ? "unknown: no PMU ratios in kernel_details (aic_metrics off, or Level0)"
                            : "unknown: no kernel_details in the input (a step summary without operators)";
    check.how_to_measure = std::string(kAscendPipeCounters);
  }
  MarkImmaterialCompute(compute, "compute", &check);
  return check;
}

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
      platform == Platform::kAscend
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

UtilizationCheck CheckMemoryBandwidth(const RankEvidence& rank, const AdvisorConfig& config) {
  UtilizationCheck check;
  check.name = "memory_bandwidth";
  check.threshold_pct = config.Get(threshold::kMemoryBandwidthUtilizationPct);
  check.measured_as = "unknown: no memory-bandwidth counters, and no copies against a known peak";
  check.label = "memory bandwidth";
  const Platform platform = PlatformOf(rank);
  const bool gpu = platform == Platform::kGpu;
  if (const SampledGpuMetrics& sampled = rank.compute->sampled; sampled.dram_bandwidth) {
    check.value_pct = 100 * *sampled.dram_bandwidth;
    check.source = "gpu_metrics";
    check.measured_as = fmt::format(
        "sampled by Nsight Systems GPU metrics: DRAM Read + DRAM Write Bandwidth [Throughput %] (shares of the DRAM "
        "peak), means over the rank's device span on {}",
        GpuList(sampled.gpus));
    MarkImmaterialCompute(*rank.compute, "kernels", &check);
    return check;
  }
  if (const MemoryTrafficEstimate& pmu = rank.compute->memory_traffic;
      !(pmu.measured && pmu.utilization) && CheckHbmSampling(rank, &check)) {
    return check;
  }
  if (CheckOperatorTraffic(rank, platform, &check) && check.value_pct) {
    MarkImmaterialCompute(*rank.compute, "kernels", &check);
    return check;
  }
  double weighted = 0;
  int64_t time = 0, copies = 0, unmeasured = 0;
  std::vector<std::string> devices;
  if (rank.memory != nullptr) {
    for (const DeviceMemory& device : rank.memory->devices) {
      bool counted = false;
      for (const CopyTraffic& traffic : device.copies) {
        if (!traffic.utilization || traffic.time_ns <= 0) {
          unmeasured += traffic.count;
          continue;
        }
        weighted += *traffic.utilization * static_cast<double>(traffic.time_ns);
        time += traffic.time_ns;
        copies += traffic.count - traffic.unknown_size_count;
        counted = true;
      }
      if (counted) devices.push_back(device.device);
    }
  }
  if (time > 0) {
    check.value_pct = 100 * weighted / static_cast<double>(time);
    check.source = "copies";
    // Copies are not the kernels' memory traffic: the label says what was measured, and how much of the
    // step the copies are says how much the figure can speak for.
    check.label = "memory bandwidth (copies)";
    check.measured_as =
        "copies' achieved bandwidth / peak of their path, time-weighted (no DRAM counters in the trace)";
    if (gpu) {
      std::string where;
      for (const std::string& device : devices) where += (where.empty() ? "" : ", ") + device;
      check.measured_as += fmt::format(" over copies ({}) on {}, peaks of {}", copies, where, ChipLabel(rank.hardware));
    }
    const double traced_ns = rank.split.step_ns * static_cast<double>(rank.split.steps);
    if (traced_ns > 0) {
      check.measured_as +=
          fmt::format("; the copies take {:.1f} % of the steps' time", 100 * static_cast<double>(time) / traced_ns);
    }
    MarkImmaterialCopies(rank.breakdown->total, &check);
    return check;
  }
  if (!check.how_to_measure.empty()) return check;  // the operators' estimate, short of a peak
  if (platform == Platform::kCpu) {
    check.measured_as = "unknown: CPU-only trace (no device memory)";
    check.how_to_measure = std::string(kDeviceActivity);
    return check;
  }
  if (platform == Platform::kAscend) {
    check.measured_as = "unknown: no memory counters, no operator shapes and no copies against a known peak";
    check.how_to_measure = std::string(kAscendMemoryCounters) +
                           "; or operator shapes in kernel_details for an estimate: "
                           "profiler_level=torch_npu.profiler.ProfilerLevel.Level1 or higher";
    return check;
  }
  if (!gpu) return check;
  if (unmeasured > 0 && (rank.hardware == nullptr || rank.hardware->profile == nullptr)) {
    check.measured_as = fmt::format("unknown: no DRAM counters, and the peak of the copies ({}) needs the chip ({})",
                                    unmeasured, HardwareHow(rank.hardware));
    check.how_to_measure = "name the chip with --hardware NAME; DRAM throughput: " + std::string(kGpuMetricsOption);
  } else {
    check.measured_as = "unknown: no DRAM counters, no operator shapes and no copies against a known peak";
    check.how_to_measure = "DRAM throughput: " + std::string(kGpuMetricsOption) +
                           "; an estimate from operator shapes: torch.profiler.profile(record_shapes=True)";
  }
  return check;
}

// Fewer collectives with sizes than this make the communication figure a small sample, said so.
constexpr uint64_t kFewCollectives = 5;

UtilizationCheck CheckCommunicationBandwidth(const RankEvidence& rank, const AdvisorConfig& config) {
  UtilizationCheck check;
  check.name = "communication_bandwidth";
  check.threshold_pct = config.Get(threshold::kCommunicationBandwidthUtilizationPct);
  check.measured_as = "unknown: no collective sizes against a known link peak";
  check.label = "communication bandwidth";
  const Platform platform = PlatformOf(rank);
  const bool gpu = platform == Platform::kGpu;
  if (platform == Platform::kCpu) {
    const size_t collectives = rank.comm == nullptr ? 0 : rank.comm->collectives.size();
    check.measured_as =
        collectives == 0
            ? "unknown: CPU-only trace without collectives"
            : fmt::format(
                  "unknown: CPU-only trace: {} collectives over the host network, whose peak the trace does "
                  "not give",
                  collectives);
    check.how_to_measure = std::string(kDeviceActivity);
    return check;
  }
  if (rank.comm == nullptr) return check;
  if (rank.comm->total.utilization) {
    check.value_pct = 100 * *rank.comm->total.utilization;
    check.source = "collective_sizes";
    check.measured_as = fmt::format("collectives' bus bandwidth / {} peak, duration-weighted",
                                    rank.comm->link.transport.empty() ? "link" : rank.comm->link.transport);
    if (gpu) {
      // A collective's kernel runs from its launch until the last peer arrives: a late rank's wait counts
      // as transfer time here, and communication.straggler says how much of it there is.
      check.measured_as += fmt::format(
          " over {} collectives with sizes (their kernels' time, which includes waiting for late peers), peak of {}",
          rank.comm->total.count_with_bytes, ChipLabel(rank.hardware));
      if (rank.comm->total.count_with_bytes < kFewCollectives) {
        check.measured_as += fmt::format("; only {} collective{} with sizes: a small sample",
                                         rank.comm->total.count_with_bytes,
                                         rank.comm->total.count_with_bytes == 1 ? "" : "s");
      }
    }
    MarkImmaterialCommunication(rank.breakdown->total, &check);
    return check;
  }
  double weighted = 0, time = 0;
  std::string transports;
  bool unpeaked = false;  // a transport with traffic but no standard bandwidth on this chip
  for (const AscendTransportTotal& transport : rank.comm->ascend_transports) {
    if (transport.time_ms <= 0) continue;
    if (!transport.utilization) {
      unpeaked = unpeaked || transport.transport != "SDMA";  // SDMA spans several links: no one peak
      continue;
    }
    weighted += *transport.utilization * transport.time_ms;
    time += transport.time_ms;
    transports += fmt::format("{}{} {:.2f} of {:.1f} GB/s over {:.3f} ms", transports.empty() ? "" : ", ",
                              transport.transport, transport.bandwidth_gbps.value_or(0),
                              transport.bandwidth_gbps.value_or(0) / *transport.utilization, transport.time_ms);
  }
  if (time > 0) {
    check.value_pct = 100 * weighted / time;
    check.source = "hccl_transports";
    check.measured_as = fmt::format(
        "HCCL transport bandwidth (communication.json / analysis.db) / the transport's standard bandwidth of {}, "
        "time-weighted: {}",
        ChipLabel(rank.hardware), transports);
    MarkImmaterialCommunication(rank.breakdown->total, &check);
    return check;
  }
  if (platform == Platform::kAscend) {
    if (unpeaked) {
      check.measured_as =
          fmt::format("unknown: HCCL transports carry traffic, but their standard bandwidth needs the chip ({})",
                      HardwareHow(rank.hardware));
      check.how_to_measure = "name the chip with --hardware NAME (e.g. \"Ascend 910B2\")";
    } else if (rank.comm->collectives.empty() && rank.split.part(TimePart::kCommunication) > 0) {
      check.measured_as = "unknown: the input gives communication time but no per-transport HCCL traffic";
      check.how_to_measure = std::string(kAscendCommunication);
    } else if (rank.comm->collectives.empty()) {
      check.measured_as = "unknown: no HCCL communication in this rank's data";
      check.how_to_measure = "a multi-NPU run's HCCL traffic: " + std::string(kAscendCommunication);
    } else {
      check.measured_as = "unknown: no per-transport HCCL traffic (no communication.json or analysis.db)";
      check.how_to_measure = std::string(kAscendCommunication);
    }
    return check;
  }
  if (!gpu) {
    if (!rank.comm->link.why.empty() && rank.comm->collectives.size() > 0) {
      check.measured_as = "unknown: " + rank.comm->link.why;
    }
    return check;
  }
  const auto& collectives = rank.comm->collectives;
  const int64_t sized = std::count_if(collectives.begin(), collectives.end(),
                                      [](const Collective& c) { return c.bytes != kNoId && c.bytes > 0; });
  const bool nsys = rank.trace->metadata().format == TraceFormat::kNsysSqlite;
  if (collectives.empty()) {
    check.measured_as = "unknown: no collectives in the trace";
    check.how_to_measure =
        "a multi-GPU run's NCCL collectives, recorded with " + std::string(kCudaActivity) + " on every rank";
  } else if (sized == 0) {
    check.measured_as = fmt::format("unknown: {} collectives without message sizes", collectives.size());
    check.how_to_measure = nsys ? NsysSizesHowTo(*rank.trace)
                                : "torch.profiler with ProfilerActivity.CUDA in a PyTorch whose Kineto writes NCCL "
                                  "kernel arguments (In msg nelems, dtype, Group size) or record_param_comms ranges "
                                  "with them";
  } else if (std::none_of(collectives.begin(), collectives.end(),
                          [](const Collective& c) { return c.bytes > 0 && c.group_size >= 1; })) {
    check.measured_as = fmt::format(
        "unknown: {} collectives with message sizes, but the size of their communicators (ranks per group, which "
        "turns algorithm bandwidth into bus bandwidth) is not in the trace",
        sized);
    check.how_to_measure =
        nsys ? "capture the communicators' creation: NCCL's ncclCommInitRank NVTX range gives each one's \"No. of "
               "ranks\" (start nsys before NCCL initializes rather than with a --capture-range that begins later)"
             : "a PyTorch whose Kineto writes each NCCL kernel's \"Group size\" (or its process group's ranks)";
  } else if (rank.comm->link.peak_gb_per_s) {
    // The link is known, but the groups are larger than the GPUs the trace lists: whether they crossed
    // nodes, and so whose peak applies (NVLink or the network), is not in the trace.
    int64_t largest = 0;
    for (const Collective& c : collectives) largest = std::max(largest, c.group_size);
    check.measured_as = fmt::format(
        "unknown: the collectives' groups ({} ranks) are larger than the {} GPU(s) this trace lists, so whether "
        "they stayed on {} ({:.0f} GB/s one direction) or crossed the network is not in the trace",
        largest,
        std::max<int64_t>(std::count_if(rank.trace->devices().begin(), rank.trace->devices().end(),
                                        [](const Device& d) { return d.from_properties; }),
                          rank.trace->metadata().node_gpus),
        rank.comm->link.transport, *rank.comm->link.peak_gb_per_s);
    check.how_to_measure =
        "profile with a PyTorch whose Kineto lists every GPU of the node in deviceProperties; for groups that "
        "span nodes, the network's peak is not in the hardware profiles";
  } else {
    check.measured_as = "unknown: " + rank.comm->link.why;
    check.how_to_measure = "name the chip with --hardware NAME (its NVLink / PCIe peak)";
  }
  return check;
}

namespace {

TinyOpLimits TinyLimits(const AdvisorConfig& config) {
  return TinyOpLimits{config.Get(threshold::kTinyOpKib) * 1024, config.Get(threshold::kTinyOpMflop) * 1e6,
                      static_cast<int64_t>(config.Get(threshold::kTinyOpUs) * 1e3)};
}

// Drops `text`'s claims that the figure is a lower bound: one above the peak is not a bound of anything.
std::string WithoutLowerBound(std::string text) {
  for (std::string_view claim : {", so the utilization is a lower bound", ", so a lower bound", ", a lower bound"}) {
    for (size_t at = text.find(claim); at != std::string::npos; at = text.find(claim)) text.erase(at, claim.size());
  }
  return text;
}

// A utilization above 100 % of the peak cannot be: the bytes (or the busy time) and the peak do not fit
// together (a shape estimate counting more traffic than moved, a peak of the wrong chip variant, a sample
// series counted twice). Such a figure is unknown, with both numbers said, never "ok".
void MarkAbovePeakInconsistent(UtilizationCheck* check) {
  if (!check->value_pct || *check->value_pct <= 100) return;
  check->measured_as = fmt::format("unknown: inconsistent: the figure comes to {:.1f} % of the peak, more than the peak "
                                   "itself, so its bytes or its times do not fit the peak: {}",
                                   *check->value_pct, WithoutLowerBound(check->measured_as));
  check->value_pct.reset();
  check->source.clear();
  check->immaterial_share.reset();
  check->immaterial_part.clear();
  // A measured figure had no advice on measuring: an unknown one says what to check, as every unknown does.
  if (check->how_to_measure.empty()) {
    check->how_to_measure =
        "name the chip with --hardware NAME (a peak of another chip gives such a figure); if the chip is right, "
        "the trace's sizes or durations are off for this figure";
  }
}

std::vector<UtilizationCheck> Utilizations(const RankEvidence& rank, const AdvisorConfig& config) {
  std::vector<UtilizationCheck> checks = {CheckComputeUnits(rank, config), CheckMemoryBandwidth(rank, config),
                                          CheckCommunicationBandwidth(rank, config)};
  for (UtilizationCheck& check : checks) MarkAbovePeakInconsistent(&check);
  return checks;
}

// Time per bottleneck of one rank's mean step.
std::array<double, 7> BottleneckTimes(const TimeSplit& split) {
  std::array<double, 7> times{};
  // Computing no operator classes, or of a kind no rule knows, is computing all the same: the guide's
  // compute part.
  const double unclassed = split.compute_classes_known ? 0 : split.part(TimePart::kMemoryBound);
  times[static_cast<size_t>(Bottleneck::kCompute)] =
      split.part(TimePart::kComputeBound) + unclassed + split.part(TimePart::kUnclassified);
  times[static_cast<size_t>(Bottleneck::kMemory)] =
      split.part(TimePart::kMemoryBound) - unclassed + split.part(TimePart::kMemcpy);
  times[static_cast<size_t>(Bottleneck::kCommunication)] =
      split.part(TimePart::kCommunication) + split.part(TimePart::kPipelineBubble);
  times[static_cast<size_t>(Bottleneck::kHost)] = split.part(TimePart::kHostWait);
  times[static_cast<size_t>(Bottleneck::kData)] = split.part(TimePart::kData);
  times[static_cast<size_t>(Bottleneck::kIdle)] = split.part(TimePart::kIdle);
  return times;
}

Bottleneck Largest(const std::array<double, 7>& times) {
  Bottleneck best = Bottleneck::kNone;
  double best_ns = 0;
  for (size_t b = 0; b < times.size(); ++b) {
    if (times[b] > best_ns) best_ns = times[b], best = static_cast<Bottleneck>(b);
  }
  return best;
}

void MergeInto(const Finding& finding, std::map<std::string_view, Finding>* merged) {
  auto [it, inserted] = merged->try_emplace(finding.id, finding);
  if (inserted) return;
  std::vector<int64_t> ranks = it->second.ranks;
  if (finding.estimated_gain_ns > it->second.estimated_gain_ns) it->second = finding;  // its evidence_rank too
  ranks.insert(ranks.end(), finding.ranks.begin(), finding.ranks.end());
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  it->second.ranks = std::move(ranks);
}

// Each rank's capped gain of each finding, for what the late rank's findings explain of the others' wait.
class RankGains {
 public:
  void Add(const Finding& finding, int64_t rank) {
    double& gain = by_id_[finding.id][rank];
    gain = std::max(gain, finding.estimated_gain_ns);
  }

  // What `late` loses beyond the other ranks to the work `finding` names: its gain minus the median of
  // the other `ranks` - 1 ranks' (0 where the finding did not fire), never below 0. Work every rank does
  // alike (the framework's overhead) makes nobody late.
  double Excess(const Finding& finding, int64_t late, size_t ranks) const {
    if (ranks < 2) return 0;
    return std::max(0.0, GainOf(finding, late) - OthersMedian(finding, late, ranks));
  }

  // `rank`'s gain of `finding` (0 where it did not fire there).
  double GainOf(const Finding& finding, int64_t rank) const {
    const auto it = by_id_.find(finding.id);
    if (it == by_id_.end()) return 0;
    const auto gain = it->second.find(rank);
    return gain == it->second.end() ? 0 : gain->second;
  }

  // The median of the gains of the `ranks` - 1 ranks other than `rank` (0 where it did not fire).
  double OthersMedian(const Finding& finding, int64_t rank, size_t ranks) const {
    const auto it = by_id_.find(finding.id);
    if (it == by_id_.end() || ranks < 2) return 0;
    std::vector<double> others;
    for (const auto& [other, gain] : it->second) {
      if (other != rank) others.push_back(gain);
    }
    if (others.size() < ranks - 1) others.resize(ranks - 1, 0.0);
    std::sort(others.begin(), others.end());
    const size_t n = others.size();
    return n % 2 == 1 ? others[n / 2] : (others[n / 2 - 1] + others[n / 2]) / 2;
  }

 private:
  std::map<std::string_view, std::map<int64_t, double>> by_id_;  // id (pooled) -> rank -> its largest gain
};

// A quoted gain below this multiple of the other ranks' median reads as the job's: no note.
constexpr double kStandsOutFactor = 2.0;

// Notes the other ranks' median gain on a finding whose quoted rank gains at least twice as much (a
// straggler's host stall quoted as every rank's launch overhead, say).
void NoteOthersMedian(const RankGains& gains, size_t ranks, Finding* finding) {
  if (ranks < 2 || finding->estimated_gain_ns <= 0) return;  // no gain left to attribute
  // Balanced stages shorten every rank's step alike; the bounding stage's ranks, which the finding does not
  // name, would read as gaining nothing.
  if (finding->id == "pipeline.stage_imbalance") return;
  const double quoted = gains.GainOf(*finding, finding->evidence_rank);
  const double median = gains.OthersMedian(*finding, finding->evidence_rank, ranks);
  if (quoted > 0 && quoted >= kStandsOutFactor * median) finding->others_median_gain_ns = median;
}

// The rank communication.straggler says the others wait for: the timeline's straggler or msprof-analyze's
// slow rank, as its evidence names them; none when the late rank is not in the input.
std::optional<int64_t> LateRankOf(const Finding& straggler) {
  for (const Evidence& e : straggler.evidence) {
    if ((e.label == "straggler_rank" || e.label == "slow_rank") && e.number) return std::llround(*e.number);
  }
  return std::nullopt;
}

// The others' wait for the late rank is lost to that rank's extra work: where findings on its own time
// (host, compute, data, copies; not communication, and not a catch-all symptom) cost it more than they
// cost the other ranks, that excess is the wait again, and communication.straggler keeps only what the
// excesses leave of it, so that the run's gains do not count one lost time twice.
void KeepWaitNotExplained(const RankGains& gains, size_t ranks, std::vector<Finding>* findings) {
  auto straggler = std::find_if(findings->begin(), findings->end(),
                                [](const Finding& f) { return f.id == "communication.straggler"; });
  if (straggler == findings->end()) return;
  const std::optional<int64_t> late = LateRankOf(*straggler);
  if (!late) return;
  double explained = 0;
  for (const Finding& f : *findings) {
    if (&f != &*straggler && !f.catch_all && f.saves_from != TimePart::kCommunication) {
      explained += gains.Excess(f, *late, ranks);
    }
  }
  if (explained <= 0) return;
  // The wait stays claimed in the communication part: the findings the caps cut for it (exposed
  // communication) would count it again, as the late rank's findings do.
  straggler->estimated_gain_ns = std::max(0.0, straggler->estimated_gain_ns - explained);
  straggler->gain_cut = fmt::format("rank {}'s own findings count the rest", *late);
  straggler->gain_model += fmt::format(
      ", less what rank {}'s findings cost it beyond the other ranks ({:.3f} ms per step), which the wait repeats",
      *late, explained / 1e6);
}

// A communication verdict whose time is mostly the other ranks waiting for one late rank: the fix is that
// rank's own work, not the collectives, so the verdict says so. "" when no straggler stands out.
std::string StragglerShareOfCommunication(const CrossRankCommunication& cross) {
  if (!cross.straggler_rank || !cross.straggler_stands_out || cross.straggler_within_clock_uncertainty) return "";
  int64_t wait = 0;
  int64_t communication = 0;
  for (const RankWait& w : cross.ranks) {
    if (w.rank == *cross.straggler_rank || w.matched == 0) continue;
    wait += w.wait_ns;
    communication += w.communication_ns;
  }
  if (communication <= 0 || 2 * wait < communication) return "";
  return fmt::format(
      "; {:.1f} % of the other ranks' collective time is waiting for rank {} to arrive "
      "(communication.straggler): its own work delays them",
      100.0 * static_cast<double>(wait) / static_cast<double>(communication), *cross.straggler_rank);
}

// A trace without step markers that is mostly one-off set-up (host.framework_overhead names the region):
// the verdict speaks of that set-up, and says so. "" otherwise.
std::string OneOffNote(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    for (const Evidence& e : f.evidence) {
      if (e.label == "one_off_region") {
        return fmt::format(
            "; the trace marks no steps and most of it is '{}', which runs once: profile "
            "steady-state steps for a per-step verdict",
            e.text);
      }
    }
  }
  return "";
}

// `times`: one rank's mean step split by bottleneck, averaged over `ranks` ranks; they add up to that
// mean step, so the figures quoted are of one population.
std::string DescribeVerdict(Bottleneck dominant, const std::array<double, 7>& times, size_t ranks) {
  double step = 0;
  for (double t : times) step += t;
  if (step <= 0) return "no work found in the trace";
  const std::string of_step = ranks > 1 ? fmt::format("a {:.3f} ms mean step, mean over {} ranks", step / 1e6, ranks)
                                        : fmt::format("a {:.3f} ms mean step", step / 1e6);
  if (dominant == Bottleneck::kNone) {
    const double compute = times[static_cast<size_t>(Bottleneck::kCompute)];
    return fmt::format(
        "compute holds {:.1f} % of the step time ({:.3f} ms of {}) with the compute units at or above their "
        "threshold, and no finding would save {:.0f} % of the step",
        100 * compute / step, compute / 1e6, of_step, 100 * kNoneGainShare);
  }
  const double part = times[static_cast<size_t>(dominant)];
  return fmt::format("{} holds {:.1f} % of the step time ({:.3f} ms of {})", BottleneckName(dominant),
                     100 * part / step, part / 1e6, of_step);
}

}  // namespace

void CapGains(const TimeSplit& split, std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(),  // ties keep the rules' order: deterministic caps
                   [](const Finding& a, const Finding& b) {
                     if (a.catch_all != b.catch_all) return b.catch_all;
                     return a.uncapped_gain_ns > b.uncapped_gain_ns;
                   });
  std::array<double, static_cast<size_t>(TimePart::kCount)> left = split.part_ns;
  for (Finding& finding : *findings) {
    double& part_left = left[static_cast<size_t>(finding.saves_from)];
    finding.estimated_gain_ns = std::clamp(finding.uncapped_gain_ns, 0.0, part_left);
    if (finding.estimated_gain_ns < finding.uncapped_gain_ns) {
      // On a pipeline rank the communication part is what stays exposed outside the bubble: said so, since
      // the rank's communication time is larger.
      const bool outside_bubble = finding.saves_from == TimePart::kCommunication &&
                                  split.part(TimePart::kPipelineBubble) > 0;
      const std::string part = outside_bubble ? std::string("exposed communication (outside the pipeline bubble)")
                                              : std::string(TimePartName(finding.saves_from));
      finding.gain_cut = part_left < split.part(finding.saves_from)
                             ? fmt::format("capped at the {} time other findings leave", part)
                             : fmt::format("capped at the step's {} time", part);
    }
    part_left -= finding.estimated_gain_ns;
  }
}

// Adds one of `ranks` ranks' split to their mean.
void AddToMean(const TimeSplit& split, size_t ranks, TimeSplit* mean) {
  const double weight = 1.0 / static_cast<double>(std::max<size_t>(ranks, 1));
  mean->steps += split.steps;
  mean->step_ns += weight * split.step_ns;
  for (size_t p = 0; p < mean->part_ns.size(); ++p) mean->part_ns[p] += weight * split.part_ns[p];
  mean->compute_bound_share += weight * split.compute_bound_share;
  mean->unclassified_share += weight * split.unclassified_share;
  mean->dataloader_ns += weight * split.dataloader_ns;
  mean->dispatch_ns += weight * split.dispatch_ns;
  mean->compute_classes_known = mean->compute_classes_known && split.compute_classes_known;
  mean->cpu_only = split.cpu_only;
}

namespace {

// An NPU device, or a torch_npu trace (whose devices may all be host-side when only the CPU was captured).
bool RunsOnNpu(const Trace& trace) {
  for (const Device& device : trace.devices()) {
    if (device.type == DeviceType::kNpu) return true;
  }
  return trace.metadata().format == TraceFormat::kTorchNpuTraceView;
}

// The rules that read the other ranks, on one rank's draft (each rule stays quiet without what it
// needs); then all its findings in the rules' order.
// communication.low_bandwidth is found on one rank, over its collectives' kernel time. Across ranks that
// time splits into waiting for the last peer and moving the data, and only the moving runs faster on a
// faster link: the finding keeps the transfer share of its gain (the wait is communication.straggler's).
void KeepTransferShare(const CrossRankCommunication* cross, int64_t rank_id, std::vector<RuleFinding>* findings) {
  if (cross == nullptr) return;
  const auto wait =
      std::find_if(cross->ranks.begin(), cross->ranks.end(), [&](const RankWait& w) { return w.rank == rank_id; });
  if (wait == cross->ranks.end() || wait->matched == 0 || wait->communication_ns <= 0) return;
  const double share = static_cast<double>(wait->transfer_ns) / static_cast<double>(wait->communication_ns);
  for (RuleFinding& found : *findings) {
    Finding& f = found.finding;
    if (f.id != "communication.low_bandwidth") continue;
    f.uncapped_gain_ns *= share;
    f.AddNumber("transfer_share_pct", 100 * share, "%");
    f.gain_model = fmt::format(
        "exposed communication x (1 - utilization / threshold) x the transfer share ({:.1f} %) of the rank's {} "
        "matched collectives: the link brought to the threshold; the rest of their time waits for late peers "
        "(communication.straggler)",
        100 * share, wait->matched);
  }
}

// The bytes of each EP rank's all-to-alls per step, beside its tokens (drafts and `comm` run in parallel).
void AddAllToAllBytes(const std::vector<RankAdviceDraft>& ranks, const std::vector<const RankCommunication*>& comm,
                      MoeBalance* moe) {
  if (moe->ranks.empty()) return;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (!ranks[i].moe.found()) continue;
    double bytes = -1;
    if (i < comm.size() && comm[i] != nullptr) {
      for (const Collective& c : comm[i]->collectives) {
        if (c.type == CollectiveType::kAllToAll && c.bytes != kNoId)
          bytes = std::max(bytes, 0.0) + static_cast<double>(c.bytes);
      }
    }
    moe->all_to_all_bytes_per_step.push_back(bytes < 0 ? bytes : bytes / static_cast<double>(ranks[i].moe.steps));
  }
}

std::vector<Finding> RankFindings(RankAdviceDraft& draft, const RankCommunication* comm, const AdvisorConfig& config,
                                  const CrossRankCommunication* cross, const MoeBalance* moe) {
  RankEvidence rank;
  rank.moe = moe;
  rank.split = draft.advice.split;
  rank.comm = comm;
  rank.cross = cross;
  rank.rank_id = draft.advice.rank;
  rank.on_npu = draft.on_npu;
  const std::span<const RuleFunction> rules = AllRules();
  for (size_t r = 0; r < rules.size(); ++r) {
    if (!RuleReadsOtherRanks(rules[r])) continue;
    std::vector<Finding> found;
    rules[r](rank, config, &found);
    for (Finding& finding : found) draft.findings.push_back(RuleFinding{r, std::move(finding)});
  }
  KeepTransferShare(cross, draft.advice.rank, &draft.findings);
  std::stable_sort(draft.findings.begin(), draft.findings.end(),
                   [](const RuleFinding& a, const RuleFinding& b) { return a.rule < b.rule; });
  std::vector<Finding> findings;
  findings.reserve(draft.findings.size());
  for (RuleFinding& f : draft.findings) findings.push_back(std::move(f.finding));
  return findings;
}

}  // namespace

namespace {

// Runs `rule(0)` .. `rule(n - 1)`, on two threads when a core is spare: each takes the next rule not yet
// taken, so a long rule (the attention search) runs beside the others rather than before them.
template <typename Rule>
void ForEachRule(size_t n, bool two_threads, const Rule& rule) {
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t r = next++; r < n; r = next++) rule(r);
  };
  if (!two_threads) {
    work();
    return;
  }
  std::thread helper(work);
  work();
  helper.join();
}

}  // namespace

RankAdviceDraft AdviseRank(const RankInputs& input, const AdvisorConfig& config) {
  RankEvidence rank{input.trace,
                    input.breakdown,
                    input.compute,
                    input.hardware,
                    input.tree != nullptr ? std::move(*input.tree) : BuildHostOpTree(*input.trace),
                    {},
                    input.memory,
                    input.comm,
                    nullptr};
  rank.rank_id = input.trace->metadata().rank;
  rank.on_npu = RunsOnNpu(*input.trace);
  rank.split = SplitStepTime(*rank.trace, *rank.breakdown, rank.tree, TinyLimits(config));
  const ModuleAttribution modules = AttributeWorkToModules(*rank.trace);
  rank.modules = &modules;
  RankAdviceDraft draft;
  draft.on_npu = rank.on_npu;
  draft.moe = MeasureMoeLoad(*rank.trace, rank.tree);
  draft.moe.call_ns.shrink_to_fit();
  const std::span<const RuleFunction> rules = AllRules();
  std::vector<std::vector<Finding>> found(rules.size());
  ForEachRule(rules.size(), input.spare_core, [&](size_t r) {
    if (!RuleReadsOtherRanks(rules[r])) rules[r](rank, config, &found[r]);
  });
  for (size_t r = 0; r < rules.size(); ++r) {
    for (Finding& finding : found[r]) draft.findings.push_back(RuleFinding{r, std::move(finding)});
  }
  draft.advice =
      RankAdvice{rank.rank_id, input.trace->metadata().path, rank.split, Utilizations(rank, config), Bottleneck::kNone};
  draft.advice.dominant = Largest(BottleneckTimes(rank.split));
  // Every rank's draft waits for the reduce: kept without its vectors' growth slack.
  for (RuleFinding& kept : draft.findings) {
    kept.finding.evidence.shrink_to_fit();
    kept.finding.modules.shrink_to_fit();
  }
  draft.findings.shrink_to_fit();
  return draft;
}

namespace {

// On GPUs the pipeline's wait sits in the exposed communication (the pp group's send / recv kernels wait
// for their peer; pipeline_stages.h measures how long): in a pipeline it is taken out into the bubble part, which only pipeline findings save
// from; overlapping communication with compute, which DDP bucket advice is about, cannot hide it.
bool SplitOutGpuPipelineWait(const CrossRankCommunication* cross, const RankCommunication* comm, TimeSplit* split) {
  if (cross == nullptr || !cross->pipeline || comm == nullptr || split->part(TimePart::kPipelineBubble) > 0) {
    return false;
  }
  const double wait =
      std::min(GpuPipelineWaitNsPerStep(*cross->pipeline, comm->rank), split->part(TimePart::kCommunication));
  if (wait <= 0) return false;
  split->part_ns[static_cast<size_t>(TimePart::kCommunication)] -= wait;
  split->part_ns[static_cast<size_t>(TimePart::kPipelineBubble)] += wait;
  return true;
}

// The per-rank rules ran before the ranks met, when a pipeline stage's receive waits still counted as exposed
// communication: once they are the bubble, communication.exposed keeps only what is left, and goes where that
// is under its threshold (gradient buckets cannot hide a wait for the previous stage).
void RecheckExposedCommunication(const TimeSplit& split, const AdvisorConfig& config,
                                 std::vector<RuleFinding>* findings) {
  const double exposed = split.part(TimePart::kCommunication);
  const double pct = split.step_ns > 0 ? 100 * exposed / split.step_ns : 0;
  const bool below = exposed <= 0 || pct < config.Get(threshold::kExposedCommunicationPct);
  std::erase_if(*findings, [&](const RuleFinding& f) { return f.finding.id == "communication.exposed" && below; });
  for (RuleFinding& f : *findings) {
    if (f.finding.id != "communication.exposed") continue;
    f.finding.value = pct;
    f.finding.title = fmt::format(
        "{:.1f} % of the step is communication not hidden under compute ({:.2f} ms per step)", pct, exposed / 1e6);
    f.finding.uncapped_gain_ns = std::min(f.finding.uncapped_gain_ns, exposed);
  }
}

// A pipeline's step is bounded by the stage that computes most, not by the mean over ranks: named beside
// it, with the stage that waits longest for it.
std::string PipelineNote(const PipelineAnalysis& p) {
  const PipelineStage& slowest = StageNumbered(p, p.slowest_stage);
  const PipelineStage* waits = &p.stages.front();
  for (const PipelineStage& s : p.stages) {
    if (s.bubble_ns_per_step > waits->bubble_ns_per_step) waits = &s;
  }
  std::string note = fmt::format("; pipeline: stage {} (ranks {}) bounds the step, {} {:.3f} ms a step against "
                                 "{:.3f} ms on the mean stage",
                                 slowest.stage, RankRanges(slowest.ranks), p.work_is_computing ? "computing" : "working",
                                 slowest.work_ns_per_step / 1e6, p.mean_work_ns_per_step / 1e6);
  if (waits->bubble_ns_per_step > 0 && waits->step_ns_per_step > 0) {
    note += fmt::format("; stage {} waits {:.3f} ms a step in bubbles ({:.1f} % of its step)", waits->stage,
                        waits->bubble_ns_per_step / 1e6, 100 * waits->bubble_ns_per_step / waits->step_ns_per_step);
  }
  return note;
}

// The mean over ranks hides who sets the pace: a pipeline's slowest stage, or a straggler that stands out
// beyond what the clocks can be wrong by.
std::string BoundedBy(const CrossRankCommunication& cross) {
  if (cross.pipeline) {
    const PipelineStage& slowest = StageNumbered(*cross.pipeline, cross.pipeline->slowest_stage);
    return fmt::format("stage {} (ranks {}) bounds the step", slowest.stage, RankRanges(slowest.ranks));
  }
  if (cross.straggler_rank && cross.straggler_stands_out && !cross.straggler_within_clock_uncertainty) {
    return fmt::format("rank {} arrives last at the collectives and the others wait for it", *cross.straggler_rank);
  }
  return "";
}

}  // namespace

AdvisorResult CombineAdvice(std::vector<RankAdviceDraft> ranks, const std::vector<const RankCommunication*>& comm,
                            const AdvisorConfig& config, const CrossRankCommunication* cross) {
  AdvisorResult result;
  std::map<std::string_view, Finding> merged;  // by id (pooled)
  RankGains gains;
  std::array<double, 7> job_times{};
  bool units_healthy = true;
  result.ranks.reserve(ranks.size());
  // A rank without a complete step (cut off before its first one ended) has nothing to average; when no
  // rank has one, all count, and every mean is zero.
  const auto with_steps = static_cast<size_t>(std::count_if(
      ranks.begin(), ranks.end(), [](const RankAdviceDraft& draft) { return draft.advice.split.steps > 0; }));
  result.mean_ranks = with_steps > 0 ? with_steps : ranks.size();
  const auto in_mean = [&](const RankAdviceDraft& draft) { return with_steps == 0 || draft.advice.split.steps > 0; };
  std::vector<const RankMoeLoad*> loads;
  for (const RankAdviceDraft& draft : ranks) loads.push_back(&draft.moe);
  MoeBalance moe = BalanceAcrossRanks(loads);
  AddAllToAllBytes(ranks, comm, &moe);
  for (size_t i = 0; i < ranks.size(); ++i) {
    RankAdviceDraft& draft = ranks[i];
    if (SplitOutGpuPipelineWait(cross, i < comm.size() ? comm[i] : nullptr, &draft.advice.split)) {
      RecheckExposedCommunication(draft.advice.split, config, &draft.findings);
    }
    std::vector<Finding> findings =
        RankFindings(draft, i < comm.size() ? comm[i] : nullptr, config, cross, moe.ranks.empty() ? nullptr : &moe);
    std::vector<RuleFinding>().swap(draft.findings);  // moved out: freed now, not after the last rank
    CapGains(draft.advice.split, &findings);
    for (Finding& finding : findings) {
      finding.ranks = {draft.advice.rank};
      finding.evidence_rank = draft.advice.rank;
      gains.Add(finding, draft.advice.rank);
      MergeInto(finding, &merged);
    }
    if (in_mean(draft)) {
      const std::array<double, 7> times = BottleneckTimes(draft.advice.split);
      for (size_t b = 0; b < times.size(); ++b) job_times[b] += times[b];
      AddToMean(draft.advice.split, result.mean_ranks, &result.mean_split);
    }
    // The compute units come first (Utilizations); a draft read from a damaged summary may have none.
    const bool units_known = !draft.advice.utilizations.empty() && draft.advice.utilizations.front().value_pct;
    units_healthy = units_healthy && units_known && !draft.advice.utilizations.front().Below();
    result.step_ns = std::max(result.step_ns, draft.advice.split.step_ns);
    result.ranks.push_back(std::move(draft.advice));
  }
  for (auto& [id, finding] : merged) result.findings.push_back(std::move(finding));
  if (cross != nullptr && cross->pipeline) NameStagesOfFindings(*cross->pipeline, comm, &result.findings);
  KeepWaitNotExplained(gains, ranks.size(), &result.findings);
  std::stable_sort(result.findings.begin(), result.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.estimated_gain_ns > b.estimated_gain_ns; });
  // Per-rank caps do not bound findings from different ranks together: cap the sum by the slowest step.
  double step_left = result.step_ns;
  for (Finding& finding : result.findings) {
    if (finding.estimated_gain_ns > step_left)
      finding.gain_cut = "capped at the slowest step's time other findings leave";
    finding.estimated_gain_ns = std::min(finding.estimated_gain_ns, step_left);
    step_left -= finding.estimated_gain_ns;
    NoteOthersMedian(gains, ranks.size(), &finding);
  }
  // The verdict speaks of one rank's mean step: average the ranks' times per bottleneck.
  for (double& t : job_times) t /= static_cast<double>(std::max<size_t>(result.mean_ranks, 1));
  result.dominant = Largest(job_times);
  const bool big_finding =
      !result.findings.empty() && result.findings.front().estimated_gain_ns >= kNoneGainShare * result.step_ns;
  if (result.dominant == Bottleneck::kCompute && units_healthy && !big_finding) result.dominant = Bottleneck::kNone;
  result.dominant_reason = DescribeVerdict(result.dominant, job_times, result.mean_ranks);
  if (result.dominant == Bottleneck::kCommunication && cross != nullptr) {
    result.dominant_reason += StragglerShareOfCommunication(*cross);
  }
  if (cross != nullptr && cross->pipeline) result.dominant_reason += PipelineNote(*cross->pipeline);
  if (cross != nullptr) result.bounded_by = BoundedBy(*cross);
  result.dominant_reason += OneOffNote(result.findings);
  return result;
}

AdvisorResult RunAdvisor(const std::vector<RankInputs>& ranks, const AdvisorConfig& config,
                         const CrossRankCommunication* cross) {
  std::vector<RankAdviceDraft> drafts;
  std::vector<const RankCommunication*> comm;
  drafts.reserve(ranks.size());
  for (const RankInputs& input : ranks) {
    drafts.push_back(AdviseRank(input, config));
    comm.push_back(input.comm);
  }
  return CombineAdvice(std::move(drafts), comm, config, cross);
}

}  // namespace tuneprof

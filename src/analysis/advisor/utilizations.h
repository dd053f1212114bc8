#pragma once
// The tuning guide's three utilizations (compute units, memory bandwidth, communication bandwidth), each
// in its own file (compute_units_check.cc, memory_bandwidth_check.cc, communication_bandwidth_check.cc),
// and the wording they share.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/platform.h"

namespace tuneprof {

// The three checks of one rank, a figure above its peak made unknown (it cannot be).
std::vector<UtilizationCheck> Utilizations(const RankEvidence& rank, const AdvisorConfig& config);

// The platform the device figures were measured on: also NPU where Ascend kernel_details are present,
// whatever the trace says of its devices.
Platform MeasuredPlatformOf(const RankEvidence& rank);

// The capture options an unknown GPU utilization points to. Nsight Systems samples SM activity and DRAM
// throughput per GPU with --gpu-metrics-devices (GPU_METRICS rows); torch.profiler records each
// kernel's launch configuration with the CUDA activity, and NCCL message sizes on its kernels.
inline constexpr std::string_view kGpuMetricsOption =
    "nsys profile --gpu-metrics-devices=all samples it (GPU_METRICS), then nsys export --type sqlite";
inline constexpr std::string_view kCudaActivity =
    "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) or nsys profile "
    "--trace=cuda,nvtx";
// What measures anything at all on a CPU-only trace: the device's activity, in the terms of the profiler
// that wrote the trace (torch_npu's on a torch_npu trace, PyTorch's otherwise).
std::string DeviceActivity(const RankEvidence& rank);

// A check with nothing measured yet: its name, threshold, label and what it says while nothing is.
UtilizationCheck StartCheck(std::string name, double threshold_pct, std::string label, std::string measured_as);

// "GPU 0" / "GPUs 0, 1" (as the trace numbers them); "the GPU" when the trace does not number it.
std::string GpuList(const std::vector<int64_t>& ids);

// The chip the figures are against and how it was chosen, when the trace did not name it.
std::string ChipLabel(const HardwareSelection* hardware);

// A family's figure (the variant unknown) in words: "; assumed Ascend 910B, variant unknown: the highest
// of its variants' 960-1420 GB/s, so the utilization is a lower bound"; "" for a single chip.
std::string FamilyRangeNote(const HardwareSelection* hardware, SourcedValue HardwareProfile::*field);

// How the chip was chosen, or what to pass when it is unknown.
std::string HardwareHow(const HardwareSelection* hardware);

// A figure about the device's kernels (units, their memory traffic) speaks for the step only where
// computing is its largest part.
// `part`: "compute" for the units, "kernels" for the kernels' memory traffic (the same time, named for
// what the figure measures).
void MarkImmaterialCompute(const RankComputeUnits& compute, std::string_view part, UtilizationCheck* check);

// The copies' bandwidth speaks for the step only where exposed copies are its largest part.
void MarkImmaterialCopies(const StepBreakdown& total, UtilizationCheck* check);

// The collectives' bandwidth speaks for the step only where exposed communication is its largest part,
// as the copies' does for copies.
void MarkImmaterialCommunication(const StepBreakdown& total, UtilizationCheck* check);

}  // namespace tuneprof

// memory.peak_near_capacity: the allocator's peak (reserved, else allocated) above 90 % of the device's
// memory: the next larger batch or sequence runs out of memory, and the caching allocator starts to
// free and re-reserve (cudaFree synchronizes the device). No time is claimed: it is headroom.
// memory.fragmentation: reserved memory not allocated at the peak, above 20 % of reserved and 1 GiB:
// the caching allocator holds segments it cannot reuse for the blocks asked of it (PyTorch's CUDA
// memory notes; torch_npu's tuning guide: expandable segments). Gain: the allocator calls inside the
// steps (memory_timeline.h StepMemory::allocator_call_ns), which expandable segments avoid.
#include <fmt/format.h>

#include <algorithm>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Device memory as the trace states it (deviceProperties totalGlobalMem), else the chip's profile.
double CapacityBytes(const RankEvidence& rank, const DeviceMemory& memory) {
  for (const Device& device : rank.trace->devices()) {
    if (device.total_memory_bytes > 0 && DeviceLabel(device) == memory.device) {
      return static_cast<double>(device.total_memory_bytes);
    }
  }
  const HardwareProfile* profile = rank.hardware ? rank.hardware->profile : nullptr;
  if (profile != nullptr && profile->kind != "cpu" && profile->memory_gb.value) return *profile->memory_gb.value * 1e9;
  return 0;
}

bool IsAccelerator(const DeviceMemory& memory) { return memory.device.rfind("cpu", 0) != 0; }

int64_t PeakBytes(const DeviceMemory& memory) {
  return memory.peak_reserved_bytes > 0 ? memory.peak_reserved_bytes : memory.peak_allocated_bytes;
}

void PeakNearCapacity(const RankEvidence& rank, const DeviceMemory& memory, const AdvisorConfig& config,
                      std::vector<Finding>* out) {
  const double capacity = CapacityBytes(rank, memory);
  const int64_t peak = PeakBytes(memory);
  if (capacity <= 0 || peak <= 0) return;
  const double pct = 100 * static_cast<double>(peak) / capacity;
  const double threshold = config.Get(threshold::kMemoryPeakPct);
  if (pct < threshold) return;
  Finding f = NewFinding("memory.peak_near_capacity", rank, config);
  f.title = fmt::format("{} peaks at {:.1f} % of its memory ({:.2f} of {:.2f} GiB)", memory.device, pct,
                        static_cast<double>(peak) / kGiB, capacity / kGiB);
  f.value = pct;
  f.AddNumber("peak_bytes", static_cast<double>(peak), "B");
  f.AddNumber("capacity_bytes", capacity, "B");
  if (!memory.peak_op.empty()) f.AddText("op_at_peak", memory.peak_op);
  if (memory.peak_step != kNoId) f.AddNumber("step_at_peak", static_cast<double>(memory.peak_step), "step");
  if (!memory.holders.empty()) f.AddText("largest_holder", memory.holders.front().op);
  out->push_back(std::move(f));
}

void Fragmentation(const RankEvidence& rank, const DeviceMemory& memory, const AdvisorConfig& config,
                   std::vector<Finding>* out) {
  if (!memory.fragmentation_ratio || memory.fragmentation_bytes <= 0) return;
  const double pct = 100 * *memory.fragmentation_ratio;
  const double threshold = config.Get(threshold::kFragmentationPct);
  if (pct < threshold ||
      static_cast<double>(memory.fragmentation_bytes) < config.Get(threshold::kFragmentationMinGib) * kGiB) {
    return;
  }
  int64_t allocator_ns = 0;
  for (const StepMemory& step : memory.steps) allocator_ns += std::max<int64_t>(step.allocator_call_ns, 0);
  Finding f = NewFinding("memory.fragmentation", rank, config);
  f.title = fmt::format("{}: {:.1f} % of reserved memory is not allocated at the peak ({:.2f} GiB): fragmentation",
                        memory.device, pct, static_cast<double>(memory.fragmentation_bytes) / kGiB);
  f.value = pct;
  f.uncapped_gain_ns = PerStep(rank, static_cast<double>(allocator_ns));
  f.AddNumber("fragmentation_bytes", static_cast<double>(memory.fragmentation_bytes), "B");
  f.AddNumber("peak_reserved_bytes", static_cast<double>(memory.peak_reserved_bytes), "B");
  f.AddNumber("peak_allocated_bytes", static_cast<double>(memory.peak_allocated_bytes), "B");
  f.AddNumber("allocator_calls_us_per_step", PerStep(rank, static_cast<double>(allocator_ns)) / 1e3, "us");
  out->push_back(std::move(f));
}

}  // namespace

void RuleMemoryCapacity(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.memory == nullptr) return;
  for (const DeviceMemory& memory : rank.memory->devices) {
    if (!IsAccelerator(memory)) continue;
    PeakNearCapacity(rank, memory, config, out);
    Fragmentation(rank, memory, config, out);
  }
}

}  // namespace tuneprof

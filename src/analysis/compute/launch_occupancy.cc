#include "analysis/compute/launch_occupancy.h"

#include <algorithm>
#include <cmath>

namespace tuneprof {
namespace {

constexpr int64_t kWarpSize = 32;
constexpr int64_t kRegisterAllocationUnit = 256;   // registers per warp are allocated in these
constexpr int64_t kSubPartitions = 4;              // each SM's register file is split over these
constexpr int64_t kSharedAllocationUnit = 128;     // bytes
constexpr int64_t kReservedSharedPerBlock = 1024;  // bytes, from compute capability 8.0 on
constexpr int64_t kReservedSharedFromMajor = 8;

int64_t RoundUp(int64_t value, int64_t unit) { return (value + unit - 1) / unit * unit; }

int64_t FromProfile(const SourcedValue& value, double scale = 1) {
  return value.value ? static_cast<int64_t>(std::llround(*value.value * scale)) : kNoId;
}

// The device's value when it has one, else the profile's; records where it came from.
int64_t Pick(int64_t device_value, int64_t profile_value, SmLimits* limits) {
  if (device_value != kNoId && device_value > 0) {
    limits->from_device = true;
    return device_value;
  }
  if (profile_value != kNoId && profile_value > 0) {
    limits->from_profile = true;
    return profile_value;
  }
  return kNoId;
}

}  // namespace

int64_t LaunchDimsProduct(const int64_t (&dims)[3]) {
  if (dims[0] == kNoId || dims[1] == kNoId || dims[2] == kNoId) return kNoId;
  int64_t product = 0;
  if (__builtin_mul_overflow(dims[0], dims[1], &product) || __builtin_mul_overflow(product, dims[2], &product)) {
    return kNoId;
  }
  return product;
}

bool SmLimits::CanEstimateOccupancy() const {
  return max_threads_per_sm != kNoId && max_blocks_per_sm != kNoId && registers_per_sm != kNoId &&
         shared_memory_per_sm != kNoId;
}

SmLimits ResolveSmLimits(const Device* device, const HardwareProfile* profile) {
  SmLimits limits;
  const Device none;
  const Device& d = device ? *device : none;
  const HardwareProfile empty;
  const HardwareProfile& p = profile ? *profile : empty;
  limits.sm_count = Pick(d.num_sms, FromProfile(p.sm_count), &limits);
  limits.max_threads_per_sm = Pick(d.max_threads_per_sm, FromProfile(p.max_threads_per_sm), &limits);
  limits.max_blocks_per_sm = Pick(d.max_blocks_per_sm, FromProfile(p.max_blocks_per_sm), &limits);
  limits.registers_per_sm = Pick(d.regs_per_sm, FromProfile(p.registers_per_sm), &limits);
  limits.shared_memory_per_sm = Pick(d.shared_mem_per_sm, FromProfile(p.shared_memory_per_sm_kib, 1024), &limits);
  const int64_t profile_major =
      p.compute_capability.value ? static_cast<int64_t>(std::floor(*p.compute_capability.value)) : kNoId;
  limits.compute_major = d.compute_major != kNoId ? d.compute_major : profile_major;
  return limits;
}

std::optional<int64_t> ResidentBlocksPerSm(const KernelInfo& info, const SmLimits& limits) {
  const int64_t threads = LaunchDimsProduct(info.block);
  if (threads == kNoId || threads <= 0 || !limits.CanEstimateOccupancy()) return std::nullopt;
  // A block past any GPU's limits is never resident (and the arithmetic below stays within int64).
  constexpr int64_t kBeyondAnyGpu = int64_t{1} << 40;
  if (threads > kBeyondAnyGpu || info.registers_per_thread > kBeyondAnyGpu ||
      info.shared_memory_bytes > kBeyondAnyGpu) {
    return 0;
  }
  const int64_t warps = RoundUp(threads, kWarpSize) / kWarpSize;
  int64_t resident = std::min(limits.max_blocks_per_sm, limits.max_threads_per_sm / kWarpSize / warps);
  if (info.registers_per_thread != kNoId && info.registers_per_thread > 0) {
    const int64_t registers_per_warp = RoundUp(info.registers_per_thread * kWarpSize, kRegisterAllocationUnit);
    const int64_t warps_per_partition = limits.registers_per_sm / kSubPartitions / registers_per_warp;
    resident = std::min(resident, warps_per_partition * kSubPartitions / warps);
  }
  int64_t shared = info.shared_memory_bytes == kNoId ? 0 : info.shared_memory_bytes;
  if (limits.compute_major != kNoId && limits.compute_major >= kReservedSharedFromMajor) {
    shared += kReservedSharedPerBlock;
  }
  if (shared > 0) resident = std::min(resident, limits.shared_memory_per_sm / RoundUp(shared, kSharedAllocationUnit));
  return std::max<int64_t>(resident, 0);
}

std::optional<double> EstimateAchievedOccupancy(const KernelInfo& info, double blocks_per_sm, const SmLimits& limits) {
  if (blocks_per_sm < 0) return std::nullopt;
  const std::optional<int64_t> resident = ResidentBlocksPerSm(info, limits);
  if (!resident) return std::nullopt;
  const double blocks = std::min(blocks_per_sm, static_cast<double>(*resident));
  return blocks * static_cast<double>(LaunchDimsProduct(info.block)) / static_cast<double>(limits.max_threads_per_sm);
}

}  // namespace tuneprof

#pragma once
// Occupancy from a kernel's launch configuration, as Kineto computes its `est. achieved occupancy %`
// for every kernel it records (libkineto DeviceProperties kernelOccupancy), so that exports without
// Kineto's args (Nsight Systems KERNEL rows: grid, block, registers per thread, static and dynamic
// shared memory) get the same figure:
//
//   blocks per SM      = grid blocks / SMs
//   resident blocks    = the CUDA occupancy calculator's blocks per SM for this block size, registers
//                        and shared memory: min(max blocks per SM, warp limit, register limit,
//                        shared-memory limit)
//   est. occupancy     = min(blocks per SM, resident blocks) × threads per block / max threads per SM
//
// The occupancy calculator's limits, with the allocation rules it applies:
//   warps:          floor(max threads per SM / 32 / warps per block), warps per block rounded up
//   registers:      registers of a warp rounded up to 256; the register file is split over 4 SM
//                   sub-partitions, so floor(registers per SM / 4 / registers per warp) warps fit in
//                   each, and the block limit is those warps × 4 / warps per block
//   shared memory:  static + dynamic + the 1 KiB the runtime reserves per block from compute capability
//                   8.0 on, rounded up to 128 B, against the SM's largest carveout (the calculator's
//                   default when the launch sets no carveout preference, as Kineto leaves it)
// The limits are the device's own where the trace describes it (nsys TARGET_INFO_GPU, Kineto
// deviceProperties), else those of the chip's profile (hardware_profile.h); unknown without either.
#include <cstdint>
#include <optional>
#include <string>

#include "analysis/core/hardware_profile.h"
#include "model/trace.h"

namespace tuneprof {

struct SmLimits {
  int64_t sm_count = kNoId;
  int64_t max_threads_per_sm = kNoId;
  int64_t max_blocks_per_sm = kNoId;
  int64_t registers_per_sm = kNoId;
  int64_t shared_memory_per_sm = kNoId;  // bytes
  int64_t compute_major = kNoId;
  bool from_device = false;   // some limit came from the trace's device properties
  bool from_profile = false;  // some limit came from the chip profile

  // Every limit the occupancy estimate needs is known.
  bool CanEstimateOccupancy() const;
};

// The device's properties first, the profile's for what the device does not say.
// The blocks of a grid, or the threads of a block; unknown when a dimension is, or when the dimensions
// of a damaged trace multiply past int64.
int64_t LaunchDimsProduct(const int64_t (&dims)[3]);

SmLimits ResolveSmLimits(const Device* device, const HardwareProfile* profile);

// The occupancy calculator's resident blocks per SM for this launch; nullopt when the block size or a
// limit is unknown.
std::optional<int64_t> ResidentBlocksPerSm(const KernelInfo& info, const SmLimits& limits);

// Kineto's estimate, 0..1; nullopt when it cannot be computed.
std::optional<double> EstimateAchievedOccupancy(const KernelInfo& info, double blocks_per_sm, const SmLimits& limits);

}  // namespace tuneprof

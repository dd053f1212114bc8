#include "analysis/compute/launch_occupancy.h"

#include <gtest/gtest.h>

#include <limits>

namespace tuneprof {
namespace {

// Compute capability 9.0's limits (the H100 SXM profile's): 2048 threads, 32 blocks, 64 Ki registers,
// 228 KiB of shared memory per SM, 132 SMs.
HardwareProfile Hopper() {
  HardwareProfile p;
  p.name = "test Hopper";
  p.sm_count.value = 132;
  p.max_threads_per_sm.value = 2048;
  p.max_blocks_per_sm.value = 32;
  p.registers_per_sm.value = 65536;
  p.shared_memory_per_sm_kib.value = 228;
  p.compute_capability.value = 9.0;
  return p;
}

KernelInfo Launch(int64_t threads, int64_t registers, int64_t shared_bytes) {
  KernelInfo info;
  info.grid[0] = 1000;
  info.grid[1] = info.grid[2] = 1;
  info.block[0] = threads;
  info.block[1] = info.block[2] = 1;
  info.registers_per_thread = registers;
  info.shared_memory_bytes = shared_bytes;
  return info;
}

TEST(LaunchOccupancyTest, LaunchDimsProductIsUnknownForAnUnknownOrOverflowingDimension) {
  const int64_t grid[3] = {4, 3, 2};
  EXPECT_EQ(LaunchDimsProduct(grid), 24);
  const int64_t unknown[3] = {4, kNoId, 2};
  EXPECT_EQ(LaunchDimsProduct(unknown), kNoId);
  const int64_t huge[3] = {std::numeric_limits<int64_t>::max() / 2, 3, 1};
  EXPECT_EQ(LaunchDimsProduct(huge), kNoId);
  const int64_t huge_last[3] = {1 << 20, 1 << 20, int64_t{1} << 30};
  EXPECT_EQ(LaunchDimsProduct(huge_last), kNoId);
}

TEST(LaunchOccupancyTest, LimitsComeFromTheProfileWhenTheTraceHasNoDevice) {
  const HardwareProfile hopper = Hopper();
  const SmLimits limits = ResolveSmLimits(nullptr, &hopper);
  EXPECT_EQ(limits.sm_count, 132);
  EXPECT_EQ(limits.shared_memory_per_sm, 228 * 1024);
  EXPECT_EQ(limits.compute_major, 9);
  EXPECT_TRUE(limits.from_profile);
  EXPECT_FALSE(limits.from_device);
  EXPECT_TRUE(limits.CanEstimateOccupancy());
}

// The device's own properties (nsys TARGET_INFO_GPU of an RTX 3080) win over any profile.
TEST(LaunchOccupancyTest, DevicePropertiesWinOverTheProfile) {
  Device d;
  d.num_sms = 68;
  d.max_threads_per_sm = 1536;
  d.max_blocks_per_sm = 16;
  d.regs_per_sm = 65536;
  d.shared_mem_per_sm = 102400;
  d.compute_major = 8;
  const HardwareProfile hopper = Hopper();
  const SmLimits limits = ResolveSmLimits(&d, &hopper);
  EXPECT_EQ(limits.sm_count, 68);
  EXPECT_EQ(limits.max_threads_per_sm, 1536);
  EXPECT_EQ(limits.max_blocks_per_sm, 16);
  EXPECT_TRUE(limits.from_device);
  EXPECT_FALSE(limits.from_profile);
  // 128 threads = 4 warps: 48 / 4 = 12 blocks by warps (16 by the block cap, 32 by registers, 100 by the
  // reserved 1 KiB of shared memory); the grid of 1 block is 1/68 of a block per SM.
  KernelInfo one_block = Launch(128, 16, 0);
  EXPECT_EQ(ResidentBlocksPerSm(one_block, limits), 12);
  EXPECT_DOUBLE_EQ(*EstimateAchievedOccupancy(one_block, 1.0 / 68, limits), (1.0 / 68) * 128 / 1536);
}

TEST(LaunchOccupancyTest, EachLimitOfTheOccupancyCalculator) {
  const HardwareProfile hopper = Hopper();
  const SmLimits limits = ResolveSmLimits(nullptr, &hopper);
  // 256 threads, 32 registers: 8 warps; 64 / 8 = 8 by warps, 16 warps per sub-partition x 4 / 8 = 8 by
  // registers: 8 blocks, the SM full.
  EXPECT_EQ(ResidentBlocksPerSm(Launch(256, 32, 0), limits), 8);
  EXPECT_DOUBLE_EQ(*EstimateAchievedOccupancy(Launch(256, 32, 0), 100, limits), 1.0);
  // 128 registers: 4096 per warp, 4 warps per sub-partition = 16 warps = 4 blocks of 4 warps.
  EXPECT_EQ(ResidentBlocksPerSm(Launch(128, 128, 0), limits), 4);
  EXPECT_DOUBLE_EQ(*EstimateAchievedOccupancy(Launch(128, 128, 0), 100, limits), 4.0 * 128 / 2048);
  // 168 registers = 5376 per warp (a multiple of 256): 3 warps per sub-partition = 12 = one block of
  // 384 threads; 221,500 B of shared memory (+1 KiB reserved, rounded to 128 B) also fit once.
  EXPECT_EQ(ResidentBlocksPerSm(Launch(384, 168, 221500), limits), 1);
  // Shared memory alone: 40,000 B + 1 KiB -> 41,088 B per block, 233,472 / 41,088 = 5 blocks.
  EXPECT_EQ(ResidentBlocksPerSm(Launch(64, 16, 40000), limits), 5);
  // 33 threads take 2 warps: 32 blocks by the block cap, not 64 / 2.
  EXPECT_EQ(ResidentBlocksPerSm(Launch(33, 16, 0), limits), 32);
}

// A grid smaller than the SMs: Kineto's min(blocks per SM, resident) keeps the fraction.
TEST(LaunchOccupancyTest, SmallGridsAreCappedByTheirBlocksPerSm) {
  const HardwareProfile hopper = Hopper();
  const SmLimits limits = ResolveSmLimits(nullptr, &hopper);
  EXPECT_DOUBLE_EQ(*EstimateAchievedOccupancy(Launch(256, 32, 0), 0.5, limits), 0.5 * 256 / 2048);
}

TEST(LaunchOccupancyTest, UnknownWithoutLimitsOrBlockSize) {
  HardwareProfile partial = Hopper();
  partial.max_blocks_per_sm.value.reset();
  EXPECT_FALSE(ResolveSmLimits(nullptr, &partial).CanEstimateOccupancy());
  EXPECT_FALSE(EstimateAchievedOccupancy(Launch(256, 32, 0), 1, ResolveSmLimits(nullptr, &partial)));
  EXPECT_FALSE(EstimateAchievedOccupancy(Launch(256, 32, 0), 1, ResolveSmLimits(nullptr, nullptr)));
  const HardwareProfile hopper = Hopper();
  KernelInfo no_block = Launch(256, 32, 0);
  no_block.block[0] = kNoId;
  EXPECT_FALSE(EstimateAchievedOccupancy(no_block, 1, ResolveSmLimits(nullptr, &hopper)));
  EXPECT_FALSE(EstimateAchievedOccupancy(Launch(256, 32, 0), -1, ResolveSmLimits(nullptr, &hopper)));
}

// A block whose dimensions multiply past int64 (a damaged trace) has no size to estimate from.
TEST(LaunchOccupancyTest, BlockPastInt64IsUnknown) {
  const HardwareProfile hopper = Hopper();
  KernelInfo huge = Launch(int64_t{1} << 40, 32, 0);
  huge.block[1] = huge.block[2] = int64_t{1} << 40;
  EXPECT_FALSE(EstimateAchievedOccupancy(huge, 1, ResolveSmLimits(nullptr, &hopper)));
  // Registers or shared memory past any GPU's: no block resident, without overflowing on the way.
  EXPECT_EQ(
      *ResidentBlocksPerSm(Launch(256, std::numeric_limits<int64_t>::max(), 0), ResolveSmLimits(nullptr, &hopper)), 0);
  EXPECT_EQ(
      *ResidentBlocksPerSm(Launch(256, 32, std::numeric_limits<int64_t>::max()), ResolveSmLimits(nullptr, &hopper)), 0);
}

}  // namespace
}  // namespace tuneprof

// memory.peak_near_capacity and memory.fragmentation on a hand-filled memory analysis of one GPU whose
// trace states its memory: where each threshold fires and what the findings say.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof::rule_test {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// One step on GPU 0, whose 16 GiB the trace states (deviceProperties' totalGlobalMem).
Trace GpuOf16Gib() {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  Device gpu;
  gpu.type = DeviceType::kGpu;
  gpu.id = 0;
  gpu.total_memory_bytes = 16 * kGiB;
  t.mutable_builder()->AddDevice(gpu);
  return t.Finish();
}

// GPU 0's allocator: its peak reserved and allocated bytes, and two steps' allocator calls.
DeviceMemory Allocator(int64_t reserved, int64_t allocated) {
  DeviceMemory d;
  d.device = "cuda:0";
  d.peak_reserved_bytes = reserved;
  d.peak_allocated_bytes = allocated;
  d.fragmentation_bytes = reserved - allocated;
  d.fragmentation_ratio = static_cast<double>(reserved - allocated) / static_cast<double>(reserved);
  for (int64_t step : {1, 2}) {
    StepMemory s;
    s.step = step;
    s.allocator_call_ns = Us(300);
    d.steps.push_back(s);
  }
  return d;
}

// The findings of the rule alone on `device` of GPU 0 over two steps.
AdvisorResult Findings(const DeviceMemory& device) {
  const Trace trace = GpuOf16Gib();
  MemoryAnalysis memory;
  memory.devices.push_back(device);
  RuleAlone alone;
  alone.rank.trace = &trace;
  alone.rank.memory = &memory;
  return alone.Run(RuleMemoryCapacity);
}

TEST(MemoryCapacity, ReservedPeakAboveNinetyPercentOfTheStatedMemory) {
  const AdvisorResult findings = Findings(Allocator(15 * kGiB, 15 * kGiB));
  const Finding* f = Find(findings, "memory.peak_near_capacity");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->value.value_or(-1), 100.0 * 15 / 16);
  EXPECT_DOUBLE_EQ(Number(*f, "peak_bytes"), 15.0 * kGiB);
  EXPECT_DOUBLE_EQ(Number(*f, "capacity_bytes"), 16.0 * kGiB);
  EXPECT_EQ(Find(findings, "memory.fragmentation"), nullptr);  // nothing reserved is left unallocated
}

TEST(MemoryCapacity, BelowNinetyPercentIsHeadroom) {
  EXPECT_EQ(Find(Findings(Allocator(14 * kGiB, 14 * kGiB)), "memory.peak_near_capacity"), nullptr);
}

TEST(MemoryCapacity, ReservedButUnallocatedAboveBothThresholdsIsFragmentation) {
  const AdvisorResult findings = Findings(Allocator(10 * kGiB, 6 * kGiB));
  EXPECT_EQ(Find(findings, "memory.peak_near_capacity"), nullptr);
  const Finding* f = Find(findings, "memory.fragmentation");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->value.value_or(-1), 40);
  EXPECT_DOUBLE_EQ(Number(*f, "fragmentation_bytes"), 4.0 * kGiB);
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(300));  // the allocator's calls per step
  EXPECT_DOUBLE_EQ(Number(*f, "allocator_calls_us_per_step"), 300);
}

TEST(MemoryCapacity, FragmentationUnderOneGibOrTwentyPercentIsNot) {
  EXPECT_EQ(Find(Findings(Allocator(kGiB + kGiB / 2, kGiB)), "memory.fragmentation"), nullptr);  // 0.5 GiB
  EXPECT_EQ(Find(Findings(Allocator(10 * kGiB, 9 * kGiB)), "memory.fragmentation"), nullptr);    // 10 %
}

}  // namespace
}  // namespace tuneprof::rule_test

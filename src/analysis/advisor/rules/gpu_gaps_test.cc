// idle.gpu_gaps_per_device through the advisor, on kernels of several GPUs built the way the importers
// build them (Nsight Systems exports are one rank of several devices).
#include <gtest/gtest.h>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/two_gpus_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(GpuGaps, GapOnOneOfTwoDevicesIsFoundPerDevice) {
  const Trace trace = two_gpus::TwoGpusOneStarved();
  const AdvisorResult result = AdviseWith(trace);
  // The union of both devices has no gap: only the per-device rule sees GPU 1 starve.
  EXPECT_EQ(Find(result, "idle.gpu_gaps"), nullptr);
  const Finding* gaps = Find(result, "idle.gpu_gaps_per_device");
  ASSERT_NE(gaps, nullptr);
  ExpectNumbers(*gaps, {{"gaps", 1}, {"longest_gap_us", 720000}});
}

TEST(GpuGaps, OneDeviceOfKernelsOnlyIsLeftToTheUnionRules) {
  const Trace trace = two_gpus::OneGpuWithAGap();
  const AdvisorResult result = AdviseWith(trace);
  EXPECT_NE(Find(result, "idle.gpu_gaps"), nullptr);
  EXPECT_EQ(Find(result, "idle.gpu_gaps_per_device"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

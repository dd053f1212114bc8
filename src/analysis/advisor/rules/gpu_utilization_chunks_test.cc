// idle.gpu_time_util_per_device through the advisor, on kernels of several GPUs built the way the
// importers build them (Nsight Systems exports are one rank of several devices).
#include <gtest/gtest.h>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/two_gpus_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(GpuUtilizationChunks, LowTimeUtilizationChunksArePerDevice) {
  const Trace trace = two_gpus::TwoGpusOneStarved();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* low = Find(result, "idle.gpu_time_util_per_device");
  ASSERT_NE(low, nullptr);
  // 1000 ms in 30 chunks of 33.333 ms; the hole is 140..860 ms: chunks 5..24 lie inside it, chunks 4
  // (133.3..166.7 ms) and 25 (833.3..866.7 ms) are busy 6.7 ms each (20 %), chunks 3 and 26 fully: 22 low.
  EXPECT_EQ(Number(*low, "low_chunks"), 22);
  EXPECT_NE(low->title.find("GPU 1"), std::string::npos);
}

TEST(GpuUtilizationChunks, OneDeviceOfKernelsOnlyIsLeftToTheUnionRules) {
  const Trace trace = two_gpus::OneGpuWithAGap();
  const AdvisorResult result = AdviseWith(trace);
  EXPECT_EQ(Find(result, "idle.gpu_time_util_per_device"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

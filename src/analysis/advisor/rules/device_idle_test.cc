// idle.low_utilization on hand-built traces.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(RuleFamilies, LowDeviceUtilizationChunks) {
  HandBuiltTrace t;
  StepWithKernel(&t, 3000, 100);
  t.Kernel("gemm", Us(2900), Us(100));
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "idle.low_utilization");
  ASSERT_NE(f, nullptr);
  // 3000 us in 30 chunks of 100 us: the first and last are busy, the 28 between are idle.
  ExpectNumbers(*f, {{"low_chunks", 28}, {"idle_in_low_chunks_us", 2800}});
  EXPECT_NEAR(Number(*f, "busy_pct"), 100.0 * 200 / 3000, 1e-9);
  EXPECT_EQ(Text(*f, "low_ranges"), "0.100-2.900 ms");
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(2800));
  EXPECT_EQ(Find(result, "idle.gpu_gaps"), nullptr);  // 2.8 ms is far below the 500 ms gap threshold
}

// The same idle chunks while a kernel launched at the start waits to run: the device waits on something
// the trace does not show, which a larger batch does not fix.
TEST(RuleFamilies, LowUtilizationWithWorkQueuedIsItsOwnCause) {
  HandBuiltTrace t;
  StepWithKernel(&t, 3000, 100);
  t.Launch(Us(50), 7);
  t.Kernel("gemm", Us(2900), Us(100), 7);
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "idle.low_utilization");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "idle_with_work_queued_us"), 2800);
  EXPECT_NE(f->strategy.find("waits on events, other streams or work not in the trace"), std::string::npos);
  EXPECT_EQ(f->apis.front().view().find("batch_size"), std::string::npos);
}

}  // namespace
}  // namespace tuneprof::rule_test

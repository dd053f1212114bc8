// data.slow_dataloader on a hand-built trace.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(RuleFamilies, DataLoaderHoldsUpTheStep) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 0, Us(150));
  t.Kernel("gemm", Us(100), Us(900));  // hides the loader's last 50 us
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "data.slow_dataloader");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 15, {{"dataloader_us_per_step", 150}, {"exposed_dataloader_us_per_step", 100}});
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(100));
  EXPECT_DOUBLE_EQ(result.ranks[0].split.part(TimePart::kData), Us(100));
}

}  // namespace
}  // namespace tuneprof::rule_test

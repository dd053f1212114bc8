// fusion.optimizer_foreach on hand-built optimizer steps.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(RuleFamilies, PerParameterOptimizerLoop) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, "Optimizer.step#AdamW.step", Us(100), Us(800));
  // Three parameters, each updated by aten::mul_ then aten::add_, each op launching one kernel.
  const double kernel_us[6] = {10, 20, 12, 25, 14, 30};
  for (int j = 0; j < 6; ++j) {
    const double at = 110 + 120.0 * j;
    t.Host(EventKind::kHostOp, j % 2 == 0 ? "aten::mul_" : "aten::add_", Us(at), Us(100));
    t.Launch(Us(at + 10), j + 1);
    t.Kernel("vectorized_elementwise_kernel", Us(at + 20), Us(kernel_us[j]), j + 1);
  }
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "fusion.optimizer_foreach");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Text(*f, "optimizer"), "Optimizer.step#AdamW.step");
  ExpectNumbers(*f, {{"ops_per_step", 6}, {"distinct_ops", 2}});
  EXPECT_DOUBLE_EQ(Number(*f, "optimizer_us_per_step"), 111);  // 10+20+12+25+14+30
  // mul_: (3 - 1) x 10 us; add_: (3 - 1) x 20 us.
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(60));
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(60));
}

TEST(RuleFamilies, ForeachOptimizerIsQuiet) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kUserAnnotation, "Optimizer.step#AdamW.step", Us(100), Us(800));
  for (int j = 0; j < 6; ++j) {
    const double at = 110 + 120.0 * j;
    t.Host(EventKind::kHostOp, j == 0 ? "aten::_foreach_mul_" : "aten::add_", Us(at), Us(100));
    t.Launch(Us(at + 10), j + 1);
    t.Kernel("vectorized_elementwise_kernel", Us(at + 20), Us(10), j + 1);
  }
  const Trace trace = t.Finish();
  EXPECT_EQ(Find(AdviseWith(trace), "fusion.optimizer_foreach"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

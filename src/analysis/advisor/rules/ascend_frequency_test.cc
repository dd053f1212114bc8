// compute.ai_core_frequency: fires below the clock's maximum, quiet at it.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(PeerRules, AiCoreFrequencyBelowMax) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("a", Us(100), Us(200));  // 100..300 at 1800 MHz
  t.Kernel("b", Us(400), Us(200));  // 400..600: half at 1800, half at 1500 -> 1650 MHz, 8.3 % below
  t.Kernel("c", Us(700), Us(100));  // 700..800 at 1500 MHz, 16.7 % below
  t.mutable_builder()->AddCounterSample(ProcessKey{5, false}, "AI Core Freq/MHz", Us(500), 1500);
  t.mutable_builder()->AddCounterSample(ProcessKey{5, false}, "AI Core Freq/MHz", 0, 1800);
  const Trace trace = t.Finish();
  const HardwareProfile chip = Ascend910B2();
  for (const HardwareProfile* profile : {&chip, static_cast<const HardwareProfile*>(nullptr)}) {
    const AdvisorResult result = AdviseOnChip(trace, profile);  // max 1800 from the profile, or the highest sample
    const Finding* f = Find(result, "compute.ai_core_frequency");
    ASSERT_NE(f, nullptr);
    ExpectNumbers(*f, {{"slowed_tasks", 2}, {"slowed_task_us", 300}});
    const double lost_us = 200.0 * 150 / 1800 + 100.0 * 300 / 1800;
    EXPECT_NEAR(Number(*f, "lost_us"), lost_us, 1e-9);
    EXPECT_NEAR(*f->value, 100 * lost_us / 300, 1e-9);
    ExpectNumbers(*f, {{"max_frequency_mhz", 1800}, {"min_frequency_mhz", 1500}});
    EXPECT_NEAR(f->uncapped_gain_ns, lost_us * 1e3, 1e-6);
  }
}

TEST(PeerRules, AiCoreFrequencyAtMaxIsQuiet) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Kernel("a", Us(100), Us(200));
  t.mutable_builder()->AddCounterSample(ProcessKey{5, false}, "AI Core Freq/MHz", 0, 1800);
  t.mutable_builder()->AddCounterSample(ProcessKey{5, false}, "AI Core Freq/MHz", Us(900), 1720);  // 4.4 % below
  const Trace trace = t.Finish();
  EXPECT_EQ(Find(AdviseOnChip(trace), "compute.ai_core_frequency"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

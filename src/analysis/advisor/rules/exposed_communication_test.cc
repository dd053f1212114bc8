// communication.exposed on hand-built traces: the exposed time and the modules that launched it.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(RuleFamilies, ExposedCommunication) {
  HandBuiltTrace t;
  StepWithKernel(&t, 1000, 500);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(400), Us(400), kNoId, 9);  // 400..800
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "communication.exposed");
  ASSERT_NE(f, nullptr);
  // Communication 400 us, 100 us of it under the GEMM: 300 us exposed = 30 % of the step.
  ExpectFinding(*f, 30, {{"exposed_communication_us", 300}, {"communication_us", 400}, {"overlapped_us", 100}});
  ExpectNumbers(*f, {{"overlap_pct", 25}});
  EXPECT_DOUBLE_EQ(Number(*f, "compute_not_overlapping_us"), 400);  // 500 - 100
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(300));                  // min(300, 400)
  EXPECT_EQ(result.ranks[0].dominant, Bottleneck::kCompute);        // 500 us compute vs 300 us exposed
}

// The exposed part of each collective counts for the module that launched it: 300 us of the all-reduce
// launched in `Net_0.Tp_0`, 100 us of one launched outside every module; the one under the GEMM is hidden.
TEST(RuleFamilies, ExposedCommunicationNamesTheModulesThatLaunchedIt) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kPythonFunction, "nn.Module: Net_0", 0, Us(900));
  t.Host(EventKind::kPythonFunction, "nn.Module: Hidden_0", Us(1), Us(10));
  t.Launch(Us(2), 1);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(100), Us(200), 1, 9);  // under the GEMM
  t.Launch(Us(20), 2);
  t.Kernel("gemm", 0, Us(500), 2);
  t.Host(EventKind::kPythonFunction, "nn.Module: Tp_0", Us(30), Us(10));
  t.Launch(Us(32), 3);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(400), Us(400), 3, 9);  // 300 us exposed
  t.Launch(Us(950), 4);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(850), Us(100), 4, 9);  // outside modules
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "communication.exposed");
  ASSERT_NE(f, nullptr);
  ExpectModules(*f, {{"Net_0.Tp_0", 0.75}});
}

}  // namespace
}  // namespace tuneprof::rule_test

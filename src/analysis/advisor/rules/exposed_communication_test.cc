// communication.exposed on hand-built traces: the exposed time and the modules that launched it.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/rules.h"

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

// torch_npu: where communication.json's Idle Time holds most of the HCCL ops' elapse, the finding says what it
// is and sends the user to the late peer; a small idle share adds nothing.
TEST(RuleFamilies, ExposedCommunicationExplainsHcclIdleTime) {
  RankBreakdown breakdown;
  breakdown.total.communication_ns = Us(600);
  breakdown.total.computing_ns = Us(100);
  RankCommunication comm;
  AscendCommOp op;
  op.elapse_ms = 0.6;
  op.transit_ms = 0.05;
  op.wait_ms = 0.05;
  op.idle_ms = 0.5;
  comm.ascend_ops.push_back(op);
  AscendCommOp total = op;  // the file's "Total Op Info": not counted twice
  total.total = true;
  comm.ascend_ops.push_back(total);
  RankEvidence rank;
  rank.breakdown = &breakdown;
  rank.comm = &comm;
  rank.split.steps = 1;
  rank.split.step_ns = Us(1000);
  rank.split.part_ns[static_cast<size_t>(TimePart::kCommunication)] = Us(600);
  std::vector<Finding> findings;
  RuleExposedCommunication(rank, AdvisorConfig(), &findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NEAR(Number(findings[0], "hccl_idle_ms_total"), 0.5, 1e-9);
  EXPECT_NEAR(Number(findings[0], "hccl_idle_pct_of_elapse"), 100 * 0.5 / 0.6, 1e-9);
  EXPECT_NE(Text(findings[0], "hccl_idle").find("Idle = Elapse - Transit - Wait"), std::string::npos);
  EXPECT_NE(findings[0].strategy.find("Notify Wait"), std::string::npos);

  comm.ascend_ops[0].idle_ms = 0.2;  // a third of the elapse: not what the op is made of
  comm.ascend_ops[0].transit_ms = 0.35;
  findings.clear();
  RuleExposedCommunication(rank, AdvisorConfig(), &findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].strategy.find("Notify Wait"), std::string::npos);
  for (const Evidence& e : findings[0].evidence) EXPECT_NE(e.label, "hccl_idle");
}

}  // namespace
}  // namespace tuneprof::rule_test

// host.sync_apis on hand-built traces: the synchronize calls inside the steps, their modules, two
// threads at once.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

// Starts `t` with step 1 over [0, 1000 us) and a GEMM launched at 10 us that runs from 20 us for `gemm_us`.
void StepWithLaunchedGemm(HandBuiltTrace* t, double gemm_us) {
  t->Step(1, 0, Us(1000));
  t->Launch(Us(10), 1);
  t->Kernel("gemm", Us(20), Us(gemm_us), 1);
}

// The host.sync_apis finding of the advice on `t`; nullopt (a failure) where the advisor raised none.
std::optional<Finding> SyncFinding(HandBuiltTrace& t) { return FindRaised(AdviseWith(t.Finish()), "host.sync_apis"); }

TEST(RuleFamilies, SynchronizeCallsOnTheHost) {
  HandBuiltTrace t;
  StepWithLaunchedGemm(&t, 300);
  t.Host(EventKind::kRuntime, "cudaDeviceSynchronize", Us(20), Us(300));
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(400), Us(20));
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "host.sync_apis");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kHost);
  ExpectNumbers(*f, {{"sync_calls", 2}, {"sync_us_per_step", 320}});
  EXPECT_DOUBLE_EQ(*f->value, 32);
  EXPECT_EQ(Text(*f, "calls"), "cudaDeviceSynchronize x1 (300.0 us), cudaStreamSynchronize x1 (20.0 us)");
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, std::min(320e3, result.ranks[0].split.part(TimePart::kHostWait)));
}

// The synchronize a script calls after its profiled loop is no step's.
// The waits count for the module open around each call: 300 us in `Net_0.Head_0`, 100 us in `Net_0`
// itself, 20 us outside every module (5 %: not named).
TEST(RuleFamilies, SynchronizeCallsNameTheModulesThatMadeThem) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kPythonFunction, "nn.Module: Net_0", Us(5), Us(800));
  t.Host(EventKind::kPythonFunction, "nn.Module: Head_0", Us(15), Us(400));
  t.Launch(Us(16), 1);
  t.Kernel("gemm", Us(20), Us(300), 1);
  t.Host(EventKind::kRuntime, "cudaDeviceSynchronize", Us(20), Us(300));
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(500), Us(100));
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(900), Us(20));
  const std::optional<Finding> f = SyncFinding(t);
  ASSERT_TRUE(f.has_value());
  ExpectModules(*f, {{"Net_0.Head_0", 300.0 / 420}, {"Net_0", 100.0 / 420}});
}

TEST(RuleFamilies, SynchronizeAfterTheLastStepIsNotCounted) {
  HandBuiltTrace t;
  StepWithLaunchedGemm(&t, 300);
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(900), Us(200));  // half of it inside the step
  t.Host(EventKind::kRuntime, "cudaDeviceSynchronize", Us(1200), Us(2000));
  const std::optional<Finding> f = SyncFinding(t);
  ASSERT_TRUE(f.has_value());
  ExpectNumbers(*f, {{"sync_calls", 1}, {"sync_us_per_step", 100}});
  EXPECT_EQ(Text(*f, "calls"), "cudaStreamSynchronize x1 (100.0 us)");
}

// Two threads waiting at once wait once: the union per process, never more than the step.
TEST(RuleFamilies, SynchronizeCallsOnTwoThreadsAtOnce) {
  HandBuiltTrace t;
  StepWithLaunchedGemm(&t, 900);
  t.Host(EventKind::kRuntime, "cudaStreamSynchronize", Us(20), Us(900));
  t.HostThread(2, EventKind::kRuntime, "cudaStreamSynchronize", Us(50), Us(900));
  const std::optional<Finding> f = SyncFinding(t);
  ASSERT_TRUE(f.has_value());
  // The union: [20, 950) us, not 1,800 us.
  ExpectFinding(*f, 93, {{"sync_calls", 2}, {"sync_us_per_step", 930}});
}

}  // namespace
}  // namespace tuneprof::rule_test

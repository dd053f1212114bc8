// host.op_compile, communication.sync_batchnorm, host.synchronize_stream, host.gc and
// memory.allocator_api on hand-built host calls, each quiet below its threshold.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

// `count` host API events named `name`, `dur_us` each, 10 us apart, in one 100 ms step.
Trace HostCalls(std::string_view name, int count, double dur_us) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(100000));
  t.Kernel("k", Us(50000), Us(1000));
  for (int i = 0; i < count; ++i) t.Host(EventKind::kRuntime, name, Us(10.0 + i * (dur_us + 10)), Us(dur_us));
  return t.Finish();
}

TEST(PeerRules, OperatorsCompiledOnline) {
  const Trace trace = HostCalls("AscendCL@aclopCompileAndExecute", 20, 50);
  const AdvisorResult result = AdviseOnChip(trace);
  const Finding* f = Find(result, "host.op_compile");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 20, {{"compile_us", 1000}});
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(1000));
  EXPECT_LE(f->estimated_gain_ns, result.ranks[0].split.part(TimePart::kHostWait));
  // The db's CANN_API spells it without the level prefix.
  EXPECT_NE(Find(AdviseOnChip(HostCalls("aclopCompileAndExecute", 20, 50)), "host.op_compile"), nullptr);
  EXPECT_EQ(Find(AdviseOnChip(HostCalls("AscendCL@aclopCompileAndExecute", 19, 50)), "host.op_compile"), nullptr);
}

TEST(PeerRules, SyncBatchNorm) {
  const Trace trace = HostCalls("SyncBatchNorm", 21, 5);
  const AdvisorResult advice = AdviseOnChip(trace);
  const Finding* f = Find(advice, "communication.sync_batchnorm");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"syncbn_events", 21}, {"syncbn_us", 105}});
  EXPECT_EQ(Find(AdviseOnChip(HostCalls("SyncBatchNorm", 20, 5)), "communication.sync_batchnorm"), nullptr);
}

// `launches` Node@launch calls, the first `synced` of them each followed by a synchronize.
Trace Launches(int launches, int synced) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(10000));
  t.Kernel("k", Us(9000), Us(500));
  for (int i = 0; i < launches; ++i) {
    t.Host(EventKind::kRuntime, "Node@launch", Us(100.0 * i), Us(10));
    if (i < synced)
      t.Host(EventKind::kRuntime, "AscendCL@aclrtSynchronizeStreamWithTimeout", Us(100.0 * i + 20), Us(30));
  }
  return t.Finish();
}

TEST(PeerRules, SynchronizeStreamAfterEveryLaunch) {
  const Trace trace = Launches(4, 3);
  const AdvisorResult result = AdviseOnChip(trace);
  const Finding* f = Find(result, "host.synchronize_stream");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 75, {{"launches", 4}, {"synchronizes", 3}, {"launch_then_synchronize", 3}});
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, result.ranks[0].split.part(TimePart::kHostWait));
  EXPECT_EQ(Find(AdviseOnChip(Launches(4, 2)), "host.synchronize_stream"), nullptr);  // 50 %: not above
}

TEST(PeerRules, LongGarbageCollections) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(10000));
  t.Kernel("k", Us(5000), Us(500));
  t.Host(EventKind::kOther, "GC", Us(100), Us(1500));
  t.Host(EventKind::kOther, "GC", Us(2000), Us(999));  // below 1000 us
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseOnChip(trace);
  const Finding* f = Find(result, "host.gc");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"gc_events", 1}, {"gc_us", 1500}, {"longest_gc_us", 1500}});
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(1500));
  EXPECT_EQ(Find(AdviseOnChip(HostCalls("GC", 3, 999)), "host.gc"), nullptr);
}

TEST(PeerRules, AllocatorApiTime) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(100000));
  t.Kernel("k", Us(50000), Us(1000));
  t.Host(EventKind::kRuntime, "AscendCL@aclMallocMemInner", Us(100), Us(6000));
  t.Host(EventKind::kRuntime, "AscendCL@aclrtFree", Us(7000), Us(4000));
  t.Host(EventKind::kRuntime, "AscendCL@aclrtFreePhysical", Us(12000), Us(1000));
  t.Host(EventKind::kRuntime, "AscendCL@aclrtFreeHost", Us(14000), Us(9000));  // not a device free
  const Trace trace = t.Finish();
  const AdvisorResult advice = AdviseOnChip(trace);
  const Finding* f = Find(advice, "memory.allocator_api");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 11, {{"allocator_calls", 3}, {"allocator_us", 11000}});
  EXPECT_EQ(Find(AdviseOnChip(HostCalls("AscendCL@aclMallocMemInner", 2, 5000)), "memory.allocator_api"),
            nullptr);  // 10 ms
}

}  // namespace
}  // namespace tuneprof::rule_test

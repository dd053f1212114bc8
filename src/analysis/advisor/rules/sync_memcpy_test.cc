// host.sync_memcpy through the advisor, on copies and memsets built the way the nsys importer builds them.
#include <gtest/gtest.h>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

constexpr int64_t kMsOfCopies = 1000000;

TEST(SyncMemcpy, SynchronousMemcpyAndPinnedMemsetAreFound) {
  HandBuiltTrace t;
  t.Step(1, 0, 10 * kMsOfCopies);
  t.Host(EventKind::kRuntime, "cudaMemcpy", Us(10), Us(500), 1);
  const uint32_t copy = t.Device(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", Us(20), Us(480), 1);
  t.Host(EventKind::kRuntime, "cudaMemcpyAsync", Us(600), Us(5), 2);
  t.Device(EventKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", Us(610), Us(50), 2);
  t.Host(EventKind::kRuntime, "cudaMemset", Us(700), Us(40), 3);
  const uint32_t pinned_set = t.Device(EventKind::kMemset, "Memset (Pinned)", Us(710), Us(20), 3);
  t.Host(EventKind::kRuntime, "cudaMemset", Us(800), Us(4), 4);
  const uint32_t device_set = t.Device(EventKind::kMemset, "Memset (Device)", Us(805), Us(2), 4);
  CopyInfo info;
  info.event = copy;
  info.direction = CopyDirection::kHostToDevice;
  info.src = MemoryKind::kPageable;
  t.mutable_builder()->AddCopyInfo(info);
  CopyInfo set;
  set.event = pinned_set;
  set.dst = MemoryKind::kPinned;
  t.mutable_builder()->AddCopyInfo(set);
  set.event = device_set;
  set.dst = MemoryKind::kDevice;  // cudaMemset on device memory does not block the host
  t.mutable_builder()->AddCopyInfo(set);
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "host.sync_memcpy");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"sync_copy_calls", 2}, {"sync_copy_us_per_step", 540}});
}

TEST(SyncMemcpy, AsyncCopiesOnlyFireNothing) {
  HandBuiltTrace t;
  t.Host(EventKind::kRuntime, "cudaMemcpyAsync", 0, Us(5), 1);
  t.Device(EventKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", Us(10), Us(50), 1);
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  EXPECT_EQ(Find(result, "host.sync_memcpy"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

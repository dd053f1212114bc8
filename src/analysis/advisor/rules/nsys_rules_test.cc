// The nsys expert-system rules (rules/sync_memcpy.cc, gpu_gaps.cc, gpu_utilization_chunks.cc) through
// the advisor, on traces built the way the importers build them.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

constexpr int64_t kMs = 1000000;

// A kernel on stream 7 of GPU `device` (Kineto numbers GPU processes by ordinal, as the nsys importer does).
void AddKernel(HandBuiltTrace* t, int64_t device, int64_t ts_ns, int64_t dur_ns) {
  TraceBuilder* builder = t->mutable_builder();
  EventRecord r;
  r.ts_ns = ts_ns;
  r.dur_ns = dur_ns;
  r.track = builder->TrackFor(ProcessKey{device, false}, ProcessKey{7, false});
  r.name = builder->Intern("gemm");
  r.category = builder->Intern("kernel");
  r.kind = EventKind::kKernel;
  builder->AddEvent(r);
}

// GPU 0 busy all along in 1 ms kernels; GPU 1 busy at both ends with a 720 ms hole in the middle.
Trace TwoGpusOneStarved() {
  HandBuiltTrace t;
  for (int64_t ms = 0; ms < 1000; ++ms) AddKernel(&t, 0, ms * kMs, kMs);
  for (int64_t ms = 0; ms < 140; ++ms) {
    AddKernel(&t, 1, ms * kMs, kMs);
    AddKernel(&t, 1, (860 + ms) * kMs, kMs);
  }
  return t.Finish();
}

TEST(NsysRules, GapOnOneOfTwoDevicesIsFoundPerDevice) {
  const Trace trace = TwoGpusOneStarved();
  const AdvisorResult result = AdviseWith(trace);
  // The union of both devices has no gap: only the per-device rule sees GPU 1 starve.
  EXPECT_EQ(Find(result, "idle.gpu_gaps"), nullptr);
  const Finding* gaps = Find(result, "idle.gpu_gaps_per_device");
  ASSERT_NE(gaps, nullptr);
  ExpectNumbers(*gaps, {{"gaps", 1}, {"longest_gap_us", 720000}});
}

TEST(NsysRules, LowTimeUtilizationChunksArePerDevice) {
  const Trace trace = TwoGpusOneStarved();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* low = Find(result, "idle.gpu_time_util_per_device");
  ASSERT_NE(low, nullptr);
  // 1000 ms in 30 chunks of 33.333 ms; the hole is 140..860 ms: chunks 5..24 lie inside it, chunks 4
  // (133.3..166.7 ms) and 25 (833.3..866.7 ms) are busy 6.7 ms each (20 %), chunks 3 and 26 fully: 22 low.
  EXPECT_EQ(Number(*low, "low_chunks"), 22);
  EXPECT_NE(low->title.find("GPU 1"), std::string::npos);
}

TEST(NsysRules, OneDeviceOfKernelsOnlyIsLeftToTheUnionRules) {
  HandBuiltTrace t;
  t.Kernel("gemm", 0, kMs);
  t.Kernel("gemm", 800 * kMs, kMs);
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  EXPECT_NE(Find(result, "idle.gpu_gaps"), nullptr);
  EXPECT_EQ(Find(result, "idle.gpu_gaps_per_device"), nullptr);
  EXPECT_EQ(Find(result, "idle.gpu_time_util_per_device"), nullptr);
}

TEST(NsysRules, SynchronousMemcpyAndPinnedMemsetAreFound) {
  HandBuiltTrace t;
  t.Step(1, 0, 10 * kMs);
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

TEST(NsysRules, AsyncCopiesOnlyFireNothing) {
  HandBuiltTrace t;
  t.Host(EventKind::kRuntime, "cudaMemcpyAsync", 0, Us(5), 1);
  t.Device(EventKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", Us(10), Us(50), 1);
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);
  EXPECT_EQ(Find(result, "host.sync_memcpy"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

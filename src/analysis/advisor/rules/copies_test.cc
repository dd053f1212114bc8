// memory.exposed_memcpy and memory.pageable_memcpy on a hand-built trace.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(RuleFamilies, PageableAndExposedCopies) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  const uint32_t pageable = t.Device(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 0, Us(200), kNoId, 8);
  const uint32_t pinned = t.Device(EventKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", Us(300), Us(50), kNoId, 8);
  t.Kernel("gemm", Us(400), Us(500));
  CopyInfo info;
  info.event = pageable;
  info.bytes = 4'000'000;
  info.direction = CopyDirection::kHostToDevice;
  info.src = MemoryKind::kPageable;
  info.dst = MemoryKind::kDevice;
  t.mutable_builder()->AddCopyInfo(info);
  info.event = pinned;
  info.bytes = 2'000'000;
  info.src = MemoryKind::kPinned;
  t.mutable_builder()->AddCopyInfo(info);
  const Trace trace = t.Finish();
  const AdvisorResult result = AdviseWith(trace);

  const Finding* pageable_f = Find(result, "memory.pageable_memcpy");
  ASSERT_NE(pageable_f, nullptr);
  ExpectNumbers(*pageable_f, {{"pageable_copies", 1}, {"pageable_bytes", 4e6}, {"pageable_us", 200}});
  EXPECT_DOUBLE_EQ(Number(*pageable_f, "pageable_h2d_gb_per_s"), 20);  // 4 MB / 200 us
  EXPECT_DOUBLE_EQ(Number(*pageable_f, "pinned_h2d_gb_per_s"), 40);    // 2 MB / 50 us
  // At the pinned copy's 40 GB/s the 4 MB take 100 us: 100 us saved.
  EXPECT_DOUBLE_EQ(pageable_f->uncapped_gain_ns, Us(100));

  const Finding* exposed = Find(result, "memory.exposed_memcpy");
  ASSERT_NE(exposed, nullptr);
  EXPECT_DOUBLE_EQ(*exposed->value, 25);  // 250 us of copies, none under the GEMM
  EXPECT_DOUBLE_EQ(Number(*exposed, "exposed_memcpy_us"), 250);
  EXPECT_DOUBLE_EQ(exposed->estimated_gain_ns, Us(250));  // min(250, 500 us of compute)
  // Both save from the same 250 us of exposed copies: the larger takes it all, the other is capped to 0.
  EXPECT_DOUBLE_EQ(pageable_f->estimated_gain_ns, 0);
}

}  // namespace
}  // namespace tuneprof::rule_test

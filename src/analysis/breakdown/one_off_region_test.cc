#include "analysis/breakdown/one_off_region.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// 8 ms of set-up, then three iterations of forward + backward.
void AddIterations(HandBuiltTrace* t, int64_t from_us) {
  for (int k = 0; k < 3; ++k) {
    t->Host(EventKind::kUserAnnotation, "forward", Us(from_us + 1000 * k), Us(400));
    t->Host(EventKind::kUserAnnotation, "backward", Us(from_us + 1000 * k + 500), Us(400));
  }
}

TEST(OneOffRegionTest, ASetUpBeforeTheIterationsIsOne) {
  HandBuiltTrace t;
  t.Host(EventKind::kUserAnnotation, "ddp_init", 0, Us(8000));
  t.Host(EventKind::kUserAnnotation, "build_buckets", Us(100), Us(2000));  // inside it, once, shorter
  AddIterations(&t, 8000);
  const std::optional<OneOffRegion> region = FindOneOffRegion(t.Finish());
  ASSERT_TRUE(region.has_value());
  EXPECT_EQ(region->name, "ddp_init");
  EXPECT_EQ(region->start_ns, 0);
  EXPECT_EQ(region->dur_ns, Us(8000));
  EXPECT_EQ(region->trace_span_ns, Us(10900));
}

TEST(OneOffRegionTest, ARangeAroundTheLoopIsNone) {
  HandBuiltTrace t;
  t.Host(EventKind::kUserAnnotation, "train", 0, Us(3000));  // once, but the iterations are inside it
  AddIterations(&t, 0);
  EXPECT_FALSE(FindOneOffRegion(t.Finish()).has_value());
}

TEST(OneOffRegionTest, AShortOrRepeatedRangeIsNone) {
  HandBuiltTrace short_one;
  short_one.Host(EventKind::kUserAnnotation, "log", 0, Us(100));  // under a tenth of the span
  AddIterations(&short_one, 200);
  EXPECT_FALSE(FindOneOffRegion(short_one.Finish()).has_value());

  HandBuiltTrace numbered;  // request#0, request#1: one range, run twice
  numbered.Host(EventKind::kUserAnnotation, "request#0", 0, Us(4000));
  numbered.Host(EventKind::kUserAnnotation, "request#1", Us(4000), Us(4000));
  AddIterations(&numbered, 8000);
  EXPECT_FALSE(FindOneOffRegion(numbered.Finish()).has_value());

  HandBuiltTrace repeated;
  repeated.Host(EventKind::kUserAnnotation, "eval", 0, Us(4000));
  repeated.Host(EventKind::kUserAnnotation, "eval", Us(20000), Us(4000));
  AddIterations(&repeated, 8000);
  EXPECT_FALSE(FindOneOffRegion(repeated.Finish()).has_value());
}

}  // namespace
}  // namespace tuneprof

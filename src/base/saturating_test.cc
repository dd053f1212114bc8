#include "base/saturating.h"

#include <gtest/gtest.h>

#include <limits>

namespace tuneprof {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(SaturatingAddTest, AddsInRangeAndStopsAtEitherEnd) {
  EXPECT_EQ(SaturatingAdd(2, 3), 5);
  EXPECT_EQ(SaturatingAdd(9200000031765000000, 9200000000000000000), kMax);
  EXPECT_EQ(SaturatingAdd(kMin + 1, -5), kMin);
  EXPECT_EQ(SaturatingAdd(kMax, kMin), -1);
}

}  // namespace
}  // namespace tuneprof

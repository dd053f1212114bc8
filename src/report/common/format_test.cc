#include "report/common/format.h"

#include <gtest/gtest.h>

#include "model/trace.h"

namespace tuneprof {
namespace {

TEST(FormatTest, BytesInBinaryUnitsWithTwoDecimals) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(3 * 1024 * 1024), "3.00 MiB");
  EXPECT_EQ(FormatBytes(-2048), "-2.00 KiB");
  EXPECT_EQ(FormatBytes(int64_t{5} << 30), "5.00 GiB");
  EXPECT_EQ(FormatBytes(kNoId), "unknown");
}

TEST(FormatTest, DurationInTheLargestUnitAtLeastOne) {
  EXPECT_EQ(FormatDuration(7), "7 ns");
  EXPECT_EQ(FormatDuration(56'000), "56.000 us");
  EXPECT_EQ(FormatDuration(177'633'189), "177.633 ms");
  EXPECT_EQ(FormatDuration(1'234'000'000), "1.234 s");
}

TEST(FormatTest, TimeUnits) {
  EXPECT_DOUBLE_EQ(Micros(1'500), 1.5);
  EXPECT_DOUBLE_EQ(Millis(2'500'000), 2.5);
}

}  // namespace
}  // namespace tuneprof

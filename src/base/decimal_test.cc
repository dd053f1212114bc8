#include "base/decimal.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

int64_t Ns(std::string_view text) {
  int64_t ns = -42;
  EXPECT_TRUE(ParseMicrosToNanos(text, &ns)) << text;
  return ns;
}

TEST(DecimalTest, TorchNpuStringTimestampKeepsNanoseconds) {
  EXPECT_EQ(Ns("1736408883704643.212"), 1736408883704643212);
}

TEST(DecimalTest, KinetoRelativeMicrosWithThreeDecimals) {
  EXPECT_EQ(Ns("4458676983543.183"), 4458676983543183);
  EXPECT_EQ(Ns("0.001"), 1);
  EXPECT_EQ(Ns("12"), 12000);
}

TEST(DecimalTest, TrailingTabAndBlanksAreIgnored) { EXPECT_EQ(Ns("1736408883704643.212\t"), 1736408883704643212); }

TEST(DecimalTest, ExponentFormsAreExact) {
  EXPECT_EQ(Ns("1.712195495505583e15"), 1712195495505583000);
  EXPECT_EQ(Ns("2.5E-3"), 3);  // 2.5 ns rounds half away from zero
  EXPECT_EQ(Ns("-2.5E-3"), -3);
}

TEST(DecimalTest, DigitsPastNanosecondsRound) {
  EXPECT_EQ(Ns("1.0004"), 1000);
  EXPECT_EQ(Ns("1.0005"), 1001);
  EXPECT_EQ(Ns("0.0000000000000000000000000000000000000000001"), 0);
}

TEST(DecimalTest, RejectsGarbageAndOverflow) {
  int64_t ns = 0;
  EXPECT_FALSE(ParseMicrosToNanos("", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("abc", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("1.2.3", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("1e", &ns));
  EXPECT_FALSE(ParseMicrosToNanos("99999999999999999999", &ns));  // 20 digits of us overflow int64 ns
  EXPECT_FALSE(ParseMicrosToNanos("1e999999", &ns));
}

TEST(DecimalTest, Int64Bounds) {
  int64_t v = 0;
  EXPECT_TRUE(ParseInt64("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(ParseInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_FALSE(ParseInt64("10159970886766084423", &v));
  EXPECT_FALSE(ParseInt64("12a", &v));
}

}  // namespace
}  // namespace tuneprof

#include "report/common/format.h"

#include <gtest/gtest.h>

#include <vector>

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

TEST(FormatTest, CellsOfMaybeMissingValues) {
  EXPECT_EQ(NumberCell(12.345, 2), "12.35");
  EXPECT_EQ(NumberCell(std::nullopt, 2), "-");
  EXPECT_EQ(PercentCell(0.1234), "12.3%");
  EXPECT_EQ(PercentCell(std::nullopt), "-");
  EXPECT_DOUBLE_EQ(*AsPercent(0.25), 25.0);
  EXPECT_FALSE(AsPercent(std::nullopt));
  EXPECT_EQ(PercentNumberCell(0.1234), "12.3");
  EXPECT_EQ(PercentNumberCell(0.5, 2), "50.00");
  EXPECT_EQ(PercentNumberCell(std::nullopt), "-");
  EXPECT_EQ(ChangePercent(1.26), "+1.3%");
  EXPECT_EQ(ChangePercent(-0.44), "-0.4%");
  EXPECT_EQ(ChangePercent(std::nullopt), "unknown");
}

TEST(FormatTest, GroupedThousands) {
  EXPECT_EQ(Grouped(1234567.85, 1), "1,234,567.9");
  EXPECT_EQ(Grouped(-1234.0, 0), "-1,234");
  EXPECT_EQ(Grouped(-0.01, 1), "0.0");
  EXPECT_EQ(Grouped(999, 0), "999");
}

TEST(FormatTest, TimeUnits) {
  EXPECT_DOUBLE_EQ(Micros(1'500), 1.5);
  EXPECT_DOUBLE_EQ(Micros(2.5), 0.0025);  // a mean keeps its fraction of a nanosecond
  EXPECT_DOUBLE_EQ(Millis(2'500'000), 2.5);
  EXPECT_DOUBLE_EQ(MillisFromMicros(2'500), 2.5);
  EXPECT_EQ(MillisText(12'345'678), "12.346");
}

TEST(FormatTest, WrapTextBreaksAtSpacesAndKeepsLongWordsWhole) {
  EXPECT_EQ(WrapText("pass --hardware to override", 12, "  hw: ", "      "),
            "  hw: pass\n      --hardware\n      to override\n");
  EXPECT_EQ(WrapText("short", 12, "> ", "  "), "> short\n");
  // A word longer than the width runs past it; no empty line, no cut.
  EXPECT_EQ(WrapText("torch.profiler.profile(record_shapes=True) now", 10, "", "  "),
            "torch.profiler.profile(record_shapes=True)\n  now\n");
  EXPECT_EQ(WrapText("", 10, "a", "b"), "");
}

TEST(FormatTest, MeanOverRanksSaysWhoIsLeftOut) {
  EXPECT_EQ(MeanOverRanks(4, 4), "mean over 4 ranks");
  EXPECT_EQ(MeanOverRanks(1022, 1024), "mean over 1022 of 1024 ranks");
}

TEST(FormatTest, ValueRangeSaysOneValueOnce) {
  EXPECT_EQ(ValueRange(2.7861, 2.8039, 3, "ms per step"), "2.786-2.804 ms per step");
  EXPECT_EQ(ValueRange(58.31, 58.34, 1, "%"), "58.3 %");
  EXPECT_EQ(ValueRange(0.4, 0.7, 3, ""), "0.400-0.700");
}

TEST(FormatTest, FoldedOverRanksNamesTheRanksOnce) {
  const std::vector<int64_t> many = {0, 1, 2, 4, 5};
  const std::vector<std::string> figures = {"2.786-2.804 ms per step", "58.3 %"};
  EXPECT_EQ(FoldedOverRanks(many, "exposed communication", figures),
            "ranks 0-2,4,5: exposed communication: 2.786-2.804 ms per step, 58.3 %");
  const std::vector<int64_t> one = {3};
  EXPECT_EQ(FoldedOverRanks(one, "waits", {}), "rank 3: waits");
}

TEST(FormatTest, ExactMicrosKeepsEveryNanosecondAndTheSign) {
  EXPECT_EQ(ExactMicros(0), "0.000");
  EXPECT_EQ(ExactMicros(1234567), "1234.567");
  EXPECT_EQ(ExactMicros(-1250), "-1.250");
  EXPECT_EQ(ExactMicros(INT64_MIN), "-9223372036854775.808");
  EXPECT_EQ(ExactMicros(9007199254740993), "9007199254740.993");  // past a double's exact integers
}

TEST(FormatTest, MebibytesAndFitAndPercentWithItsUnknownWord) {
  EXPECT_EQ(MiBText(1572864), "1.5");
  EXPECT_EQ(MiBText(kNoId), "unknown");
  EXPECT_DOUBLE_EQ(Mebibytes(3145728), 3.0);
  EXPECT_EQ(Fit("abcdef", 6), "abcdef");
  EXPECT_EQ(Fit("abcdefg", 6), "abc...");
  EXPECT_EQ(PercentCell(0.1234), "12.3%");
  EXPECT_EQ(PercentCell(std::nullopt), "-");
  EXPECT_EQ(PercentCell(std::nullopt, 1, kUnknownText), "unknown");
  EXPECT_EQ(NumberCell(2.0 / 3, 3), "0.667");
  EXPECT_EQ(NumberCell(std::nullopt, 3, kUnknownText), "unknown");
}

}  // namespace
}  // namespace tuneprof

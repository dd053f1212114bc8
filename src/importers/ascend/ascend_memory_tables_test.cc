// memory_record.csv on small inline files: the 2025 header (7 columns), the 2023 one (5 columns),
// tab-suffixed timestamps, empty cells, and exact MB -> byte conversion.
#include "importers/ascend/ascend_memory_tables.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "importers/ascend/ascend_csv_for_test.h"

namespace tuneprof {
namespace {

Trace Records(std::string text, Status* status) {
  return ascend_csv::ReadTable("memory_record.csv", std::move(text), ReadMemoryRecord, status);
}

// As Records, for a text the reader must accept.
Trace Records(std::string text) {
  return ascend_csv::ReadGoodTable("memory_record.csv", std::move(text), ReadMemoryRecord);
}

TEST(MemoryRecordTest, ReadsComponentsTimesAndExactBytes) {
  const Trace trace = Records(
      "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n"
      "APP,1736405443756384.100\t,,2109.6015625,,,NPU:0\n"
      "PTA,1736405443871259.720\t,954.37060546875,1452.0,954.37060546875,1431569360,NPU:0\n");
  ASSERT_EQ(trace.npu_memory_records().size(), 2u);
  const NpuMemoryRecord& app = trace.npu_memory_records()[0];
  EXPECT_EQ(trace.str(app.component), "APP");
  EXPECT_EQ(app.ts_ns, 1736405443756384100);
  EXPECT_EQ(app.total_allocated_bytes, kNoId);  // empty cell: unknown, not 0
  EXPECT_EQ(app.total_reserved_bytes, 2212077568);
  const NpuMemoryRecord& pta = trace.npu_memory_records()[1];
  EXPECT_EQ(pta.total_allocated_bytes, 1000730112);  // 954.37060546875 * 2^20
  EXPECT_EQ(pta.total_reserved_bytes, 1452LL * 1048576);
  EXPECT_EQ(pta.total_active_bytes, 1000730112);
  EXPECT_EQ(trace.str(pta.device), "NPU:0");
}

TEST(MemoryRecordTest, Reads2023FiveColumnFiles) {
  const Trace trace = Records(
      "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Device Type\n"
      "PTA,1700000000000000.5\t,1.5,2.0,NPU:3\n");
  ASSERT_EQ(trace.npu_memory_records().size(), 1u);
  EXPECT_EQ(trace.npu_memory_records()[0].total_allocated_bytes, 1572864);
  EXPECT_EQ(trace.npu_memory_records()[0].total_active_bytes, kNoId);
}

TEST(MemoryRecordTest, AnotherTableIsAnError) {
  Status status;
  Records("Step,Computing\n1,2\n", &status);
  EXPECT_FALSE(status.ok());
}

Trace OperatorRows(std::string text, Status* status) {
  return ascend_csv::ReadTable("operator_memory.csv", std::move(text), ReadOperatorMemory, status);
}

// As OperatorRows, for a text the reader must accept.
Trace OperatorRows(std::string text) {
  return ascend_csv::ReadGoodTable("operator_memory.csv", std::move(text), ReadOperatorMemory);
}

constexpr std::string_view kOperatorMemoryHeader =
    "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),"
    "Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total "
    "Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type\n";

TEST(OperatorMemoryTest, ReadsSizesTimesReleasesAndTheAllocatorOfEachRow) {
  const Trace trace =
      OperatorRows(std::string(kOperatorMemoryHeader) +
                   // Rows of torch_npu's level1 sample: held past the window, released, and a graph-engine row.
                   "aten::empty_strided,18816.5,1736408883694624.810\t,,,,,954.3701171875,1452.0,954.3701171875,,,,"
                   "897357296,NPU:0\n"
                   "aten::_convolution,25009.5,1736408883702735.700\t,1736408883736793.940\t,1736408883736793.430\t,"
                   "34058.240\t,34057.730\t,978.7939453125,1452.0,978.7939453125,977.6123046875,1452.0,977.6123046875,"
                   "897357296,NPU:0\n"
                   "cann::Conv2D1,24256.0,1736408883704712.300\t,1736408883704740.420\t,,28.12,,73.0625,74.75,,23.75,"
                   "74.75,,,NPU:0\n");
  const std::vector<NpuOperatorMemory>& rows = trace.npu_operator_memory();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(trace.str(rows[0].op), "aten::empty_strided");
  EXPECT_EQ(rows[0].bytes, 19268096);  // 18816.5 * 2^10
  EXPECT_EQ(rows[0].alloc_ns, 1736408883694624810);
  EXPECT_EQ(rows[0].release_ns, kNoId);
  EXPECT_TRUE(rows[0].from_pta);
  EXPECT_EQ(trace.str(rows[0].device), "NPU:0");
  EXPECT_EQ(rows[1].bytes, 25609728);
  EXPECT_EQ(rows[1].release_ns, 1736408883736793940);
  EXPECT_EQ(rows[2].bytes, 24838144);
  EXPECT_FALSE(rows[2].from_pta);
}

TEST(OperatorMemoryTest, FilesWithoutStreamPtrTellTheGraphEngineByItsCannPrefix) {
  const Trace trace = OperatorRows(
      "Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Allocation Total Allocated(MB),"
      "Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device Type\n"
      "cann::Graph_70,192,1695115378723902.5,1695115378723939.2,36.73,0.25,242.0,0.0625,242.0,NPU:0\n"
      "aten::mm,64,1695115378723903.5,,,0.25,242.0,,,NPU:0\n");
  ASSERT_EQ(trace.npu_operator_memory().size(), 2u);
  EXPECT_FALSE(trace.npu_operator_memory()[0].from_pta);
  EXPECT_EQ(trace.npu_operator_memory()[0].bytes, 196608);
  EXPECT_EQ(trace.npu_operator_memory()[0].release_ns, 1695115378723939200);
  EXPECT_TRUE(trace.npu_operator_memory()[1].from_pta);
}

TEST(OperatorMemoryTest, ARowWithoutSizeOrAllocationTimeIsSkippedWithAWarningNamingIt) {
  const Trace trace = OperatorRows(std::string(kOperatorMemoryHeader) +
                                   "aten::add,lots,1736408883694624.810\t,,,,,,,,,,,1,NPU:0\n"
                                   "aten::mul,2.0,,,,,,,,,,,,1,NPU:0\n"
                                   "aten::sub,-4.0,1736408883694625.000\t,,,,,,,,,,,1,NPU:0\n");
  ASSERT_EQ(trace.npu_operator_memory().size(), 1u);
  EXPECT_EQ(trace.npu_operator_memory()[0].bytes, -4096);  // kept: a release from before the window
  ASSERT_EQ(trace.metadata().warnings.size(), 2u);
  EXPECT_NE(trace.metadata().warnings[0].find("operator_memory.csv"), std::string::npos);
  EXPECT_NE(trace.metadata().warnings[0].find("Size(KB)"), std::string::npos);
  EXPECT_NE(trace.metadata().warnings[1].find("Allocation Time(us)"), std::string::npos);
}

TEST(OperatorMemoryTest, AnotherTableIsAnError) {
  Status status;
  OperatorRows("Component,Timestamp(us),Total Allocated(MB)\nPTA,1,2\n", &status);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("operator_memory"), std::string::npos);
}

TEST(ParseMebibytesTest, RejectsWhatIsNotANumber) {
  int64_t bytes = 0;
  EXPECT_TRUE(ParseMebibytes("0.0000009536743164062500", &bytes));
  EXPECT_EQ(bytes, 1);
  EXPECT_FALSE(ParseMebibytes("12MB", &bytes));
  EXPECT_FALSE(ParseMebibytes("", &bytes));
}

}  // namespace
}  // namespace tuneprof

namespace tuneprof {
namespace {

// strtold's answer, which the integer conversion of the usual cells must match exactly.
int64_t ByStrtold(const std::string& text, long double unit) {
  char* end = nullptr;
  return std::llround(std::strtold(text.c_str(), &end) * unit);
}

TEST(ParseMebibytesTest, IntegerConversionMatchesStrtold) {
  std::mt19937_64 random(45);
  std::vector<std::string> texts = {"0",
                                    "0.0",
                                    "400.5",
                                    "25722.0",
                                    "1.",
                                    ".5",
                                    "0.000000477",
                                    "0.000000476",
                                    "1048575.999999999",
                                    "1048576",
                                    "999999.999999999",
                                    "007.25"};
  for (int i = 0; i < 20000; ++i) {
    const uint64_t whole = random() % (i % 2 ? 1000000 : 1000);
    const int fraction_digits = static_cast<int>(random() % 10);
    std::string text = std::to_string(whole);
    if (fraction_digits > 0) {
      text += '.';
      for (int d = 0; d < fraction_digits; ++d) text += static_cast<char>('0' + random() % 10);
    }
    texts.push_back(text);
  }
  for (const std::string& text : texts) {
    int64_t mebibytes = 0;
    int64_t kibibytes = 0;
    ASSERT_TRUE(ParseMebibytes(text, &mebibytes)) << text;
    ASSERT_TRUE(ParseKibibytes(text, &kibibytes)) << text;
    EXPECT_EQ(mebibytes, ByStrtold(text, 1048576.0L)) << text;
    EXPECT_EQ(kibibytes, ByStrtold(text, 1024.0L)) << text;
  }
}

TEST(ParseMebibytesTest, HalfWayBytesRoundAwayFromZero) {
  int64_t bytes = 0;
  ASSERT_TRUE(ParseKibibytes("0.00048828125", &bytes));  // 0.5 bytes: more digits than the integer path takes
  EXPECT_EQ(bytes, 1);
  ASSERT_TRUE(ParseKibibytes("1.0009765625", &bytes));  // 1024.5 bytes
  EXPECT_EQ(bytes, 1025);
  ASSERT_TRUE(ParseMebibytes("0.5", &bytes));
  EXPECT_EQ(bytes, 524288);
}

}  // namespace
}  // namespace tuneprof

// memory_record.csv on small inline files: the 2025 header (7 columns), the 2023 one (5 columns),
// tab-suffixed timestamps, empty cells, and exact MB -> byte conversion.
#include "importers/ascend/ascend_memory_tables.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

Trace Records(std::string text, Status* status) {
  Trace trace = TraceBuilder("test").Finish();
  SideTableBuilder out(&trace);
  auto csv = CsvReader::FromText("memory_record.csv", std::move(text));
  EXPECT_TRUE(csv.ok()) << csv.status().message();
  if (!csv.ok()) return trace;
  *status = ReadMemoryRecord(&csv.value(), &out);
  return trace;
}

TEST(MemoryRecordTest, ReadsComponentsTimesAndExactBytes) {
  Status status;
  const Trace trace = Records(
      "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n"
      "APP,1736405443756384.100\t,,2109.6015625,,,NPU:0\n"
      "PTA,1736405443871259.720\t,954.37060546875,1452.0,954.37060546875,1431569360,NPU:0\n",
      &status);
  ASSERT_TRUE(status.ok()) << status.message();
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
  Status status;
  const Trace trace = Records(
      "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Device Type\n"
      "PTA,1700000000000000.5\t,1.5,2.0,NPU:3\n",
      &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(trace.npu_memory_records().size(), 1u);
  EXPECT_EQ(trace.npu_memory_records()[0].total_allocated_bytes, 1572864);
  EXPECT_EQ(trace.npu_memory_records()[0].total_active_bytes, kNoId);
}

TEST(MemoryRecordTest, AnotherTableIsAnError) {
  Status status;
  Records("Step,Computing\n1,2\n", &status);
  EXPECT_FALSE(status.ok());
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

#include "analysis/compute/memory_traffic.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "text_cases.h"

namespace tuneprof {
namespace {

TEST(MemoryTrafficTest, DtypeSizesAsTorchNpuSpellsThem) {
  const test_support::TextCase<int64_t> kCases[] = {
      {"FLOAT", 4}, {"FLOAT16", 2}, {"DT_BF16", 2}, {"INT64", 8}, {"BOOL", 1}, {"N/A", 0}, {"", 0},
  };
  test_support::ExpectEachCase(NpuDtypeBytes, kCases);
}

TEST(MemoryTrafficTest, TensorBytesFromShapesAndTypes) {
  // Conv2D's three inputs: an NC1HWC0 activation, a FRACTAL_Z weight, a bias.
  EXPECT_EQ(NpuTensorBytes("32,1,224,224,8;121,4,16,8;64", "FLOAT;FLOAT;FLOAT"),
            4.0 * (32 * 224 * 224 * 8 + 121 * 4 * 16 * 8 + 64));
  EXPECT_EQ(NpuTensorBytes("", "INT64"), 8.0);                   // a scalar
  EXPECT_EQ(NpuTensorBytes("4,4;", "FLOAT16;UNDEFINED"), 32.0);  // an absent optional input
  EXPECT_FALSE(NpuTensorBytes("4,4;8", "FLOAT"));                // lists that do not pair up
  EXPECT_FALSE(NpuTensorBytes("4,4", "COMPLEX32_UNKNOWN"));      // a type of unknown size
  EXPECT_FALSE(NpuTensorBytes("4,x", "FLOAT"));
}

TEST(MemoryTrafficTest, RecordShapesOperatorsCountOnlyWhereEveryOccurrenceIsOutermost) {
  RankOpFlops flops;
  OpFlopsRow linear{
      .name = "aten::linear", .count = 2, .outermost = 2, .bytes = 4e6, .time_ns = 2000, .device_time = true};
  OpFlopsRow addmm{
      .name = "aten::addmm", .count = 2, .outermost = 0, .bytes = 4e6, .time_ns = 2000, .device_time = true};
  OpFlopsRow add{.name = "aten::add", .count = 1, .outermost = 1, .bytes = 1e6, .time_ns = 1000, .device_time = true};
  OpFlopsRow host_only{.name = "aten::mul", .count = 3, .outermost = 3, .bytes = 1e6, .time_ns = 500};
  flops.ops = {linear, addmm, add, host_only};
  HardwareProfile chip;
  chip.memory_gb_per_s.value = 2000;
  const MemoryTrafficEstimate t = EstimateShapeMemoryTraffic(flops, &chip);
  EXPECT_EQ(t.source, "record_shapes");
  EXPECT_EQ(t.ops, 3u);          // linear twice and add; addmm is nested under linear
  EXPECT_EQ(t.ops_unknown, 3u);  // mul has host time only
  EXPECT_DOUBLE_EQ(t.bytes, 5e6);
  EXPECT_EQ(t.time_ns, 3000);
  ASSERT_TRUE(t.achieved_gb_per_s);
  EXPECT_NEAR(*t.achieved_gb_per_s, 5e6 / 3000, 1e-9);  // bytes per ns = GB/s
  EXPECT_EQ(t.peak_source, "memory_gb_per_s");
  EXPECT_NEAR(*t.utilization, 5e6 / 3000 / 2000, 1e-12);
  EXPECT_FALSE(EstimateShapeMemoryTraffic(flops, nullptr).utilization);
}

}  // namespace
}  // namespace tuneprof

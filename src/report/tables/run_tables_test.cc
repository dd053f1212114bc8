#include "report/tables/run_tables.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

std::vector<std::string> Strings(const DataColumn& column) {
  std::vector<std::string> values;
  for (int32_t code : column.codes) values.push_back(column.categories[static_cast<size_t>(code)]);
  return values;
}

TEST(RunTablesTest, EventsNestHostRangesAndInternNamesOnce) {
  HandBuiltTrace t;
  const uint32_t step = t.Step(1, Us(0), Us(100));
  const uint32_t op = t.Host(EventKind::kHostOp, "aten::mm", Us(10), Us(50));
  const uint32_t launch = t.Host(EventKind::kRuntime, "cudaLaunchKernel", Us(20), Us(5), 7);
  t.Host(EventKind::kHostOp, "aten::mm", Us(70), Us(10));
  const uint32_t kernel = t.Kernel("gemm", Us(30), Us(40), 7);
  std::vector<Trace> traces;
  traces.push_back(t.Finish());
  RunTablesInput input;
  input.traces = &traces;
  const DataTable events = BuildTable("events", input);
  ASSERT_EQ(events.rows(), 5u);
  const DataColumn& index = *events.Find("index");
  const DataColumn& parent = *events.Find("parent");
  const DataColumn& depth = *events.Find("depth");
  auto row_of = [&](uint32_t event) {
    for (size_t r = 0; r < events.rows(); ++r) {
      if (index.ints[r] == event) return r;
    }
    return events.rows();
  };
  EXPECT_EQ(parent.ints[row_of(step)], -1);
  EXPECT_EQ(depth.ints[row_of(step)], 0);
  EXPECT_EQ(parent.ints[row_of(op)], step);
  EXPECT_EQ(parent.ints[row_of(launch)], op);
  EXPECT_EQ(depth.ints[row_of(launch)], 2);
  EXPECT_EQ(parent.ints[row_of(kernel)], launch);  // device work hangs under its launch, as in HTA
  EXPECT_EQ(depth.ints[row_of(kernel)], 3);
  EXPECT_EQ(events.Find("index_correlation")->ints[row_of(kernel)], launch);
  EXPECT_EQ(events.Find("index_correlation")->ints[row_of(launch)], kernel);
  EXPECT_EQ(events.Find("iteration")->ints[row_of(op)], 1);
  EXPECT_EQ(events.Find("iteration")->ints[row_of(kernel)], 1);  // its launch's step
  EXPECT_EQ(events.Find("correlation")->ints[row_of(kernel)], 7);
  EXPECT_EQ(events.Find("ts")->ints[row_of(kernel)], 30);  // µs from the run's first event, as HTA
  EXPECT_EQ(events.Find("ts_ns")->ints[row_of(kernel)], Us(30));
  const DataColumn& names = *events.Find("name");
  EXPECT_EQ(names.categories.size(), 4u);  // aten::mm twice, one category
  EXPECT_EQ(Strings(names)[row_of(op)], "aten::mm");
}

TEST(RunTablesTest, KernelsCarryTheirStreamAndAbsentLaunchConfiguration) {
  HandBuiltTrace t;
  t.Kernel("k", Us(0), Us(5));
  std::vector<Trace> traces;
  traces.push_back(t.Finish());
  RunTablesInput input;
  input.traces = &traces;
  const DataTable kernels = BuildTable("kernels", input);
  ASSERT_EQ(kernels.rows(), 1u);
  EXPECT_EQ(kernels.Find("grid_x")->ints[0], -1);
  EXPECT_TRUE(kernels.Find("grid_x")->has_null_value);
  EXPECT_TRUE(std::isnan(kernels.Find("achieved_occupancy")->floats[0]));
}

TEST(RunTablesTest, TablesWithoutTheirAnalysesAreEmptyNotMissing) {
  std::vector<Trace> traces;
  RunTablesInput input;
  input.traces = &traces;
  for (const std::string& name : RunTableNames()) {
    const DataTable table = BuildTable(name, input);
    EXPECT_EQ(table.name, name);
    EXPECT_FALSE(table.columns.empty()) << name;
    EXPECT_EQ(table.rows(), 0u) << name;
  }
}

}  // namespace
}  // namespace tuneprof

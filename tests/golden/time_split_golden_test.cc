// Golden: the advisor's step split (src/analysis/advisor/time_split.h) on every shared Kineto trace and two
// torch_npu rank directories: the parts add up to the mean step within 1 ns and none is negative.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/advisor/time_split.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/host_op_tree.h"
#include "importers/import.h"
#include "golden_files.h"
#include "test_corpus.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

const fs::path kTimeSplitTraces = fs::path(TUNEPROF_SHARED_DIR) / "traces";

// Files in the Kineto folders that are not profiler traces (HTA's inputs of other kinds).
bool IsNotATrace(const fs::path& path) {
  const std::string name = path.filename().string();
  return name == "memory_timeline.raw.gz" || name == "benchmark_simple_add_et.json.gz";
}

std::vector<std::string> Inputs() {
  std::vector<std::string> inputs;
  for (const char* folder : {"kineto/hta", "torch-cpu/kineto26"}) {
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(kTimeSplitTraces / folder, error);
         it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (error) break;
      const std::string name = it->path().filename().string();
      if (!it->is_regular_file() || IsNotATrace(it->path())) continue;
      if (name.ends_with(".json") || name.ends_with(".json.gz"))
        inputs.push_back(fs::relative(it->path(), kTimeSplitTraces).string());
    }
  }
  std::sort(inputs.begin(), inputs.end());
  for (const char* rank : {"ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
                           "ascend/msinsight/test/data/pytorch/db/level2/rank1_ascend_pt"}) {
    inputs.push_back(rank);
  }
  return inputs;
}

class TimeSplitGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TimeSplitGoldenTest, PartsSumToTheStepAndNoneIsNegative) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path path = kTimeSplitTraces / GetParam();
  ASSERT_TRUE(fs::exists(path)) << path;
  auto trace = ImportFile(path.string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const RankBreakdown breakdown = ComputeTimeBreakdown(*trace);
  const HostOpTree tree = BuildHostOpTree(*trace);
  const TimeSplit split = SplitStepTime(*trace, breakdown, tree, TinyOpLimits{});
  EXPECT_EQ(split.steps, breakdown.steps.size());
  double sum = 0;
  for (size_t p = 0; p < split.part_ns.size(); ++p) {
    EXPECT_GE(split.part_ns[p], 0) << TimePartName(static_cast<TimePart>(p));
    sum += split.part_ns[p];
  }
  EXPECT_NEAR(sum, split.step_ns, 1.0);
  EXPECT_GE(split.step_ns, 0);
  if (split.steps > 0) {
    EXPECT_GT(split.step_ns, 0);
  }
  EXPECT_GE(split.compute_bound_share, 0);
  EXPECT_LE(split.compute_bound_share, 1);
  std::printf("  %-70s steps %3llu step %12.0f ns  sum %12.0f ns\n", GetParam().c_str(),
              static_cast<unsigned long long>(split.steps), split.step_ns, sum);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, TimeSplitGoldenTest, ::testing::ValuesIn(Inputs()), golden::PathTestName);

}  // namespace
}  // namespace tuneprof

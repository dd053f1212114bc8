// Golden tests: the torch_npu split (Computing, Communication(Not Overlapped), Overlapped,
// Communication, Free per step) recomputed from trace_view.json's device tasks, against the
// step_trace_time.csv torch_npu wrote beside it. One test per rank directory under
// ../shared/traces/ascend/ that holds both files. Tolerance: 1 % of the step's Stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "importers/import.h"
#include "golden_files.h"
#include "test_corpus.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

const fs::path kAscendTraces = fs::path(TUNEPROF_SHARED_DIR) / "traces" / "ascend";
constexpr double kStepShare = 0.01;

// torch_npu writes plain CSV (no quoted commas in this file); absolute times may end with a tab.
std::string Trim(std::string text) {
  auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
  text.erase(text.begin(), std::find_if_not(text.begin(), text.end(), blank));
  text.erase(std::find_if_not(text.rbegin(), text.rend(), blank).base(), text.end());
  return text;
}

std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) fields.push_back(Trim(field));
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// One step_trace_time.csv, columns looked up by name (the header differs between versions).
class StepTraceCsv {
 public:
  explicit StepTraceCsv(const fs::path& path) {
    std::ifstream in(path);
    std::string line;
    if (std::getline(in, line)) header_ = SplitFields(line);
    while (std::getline(in, line)) {
      if (!Trim(line).empty()) rows_.push_back(SplitFields(line));
    }
  }

  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  bool Has(std::string_view column) const { return std::find(header_.begin(), header_.end(), column) != header_.end(); }

  std::string Get(const std::vector<std::string>& row, std::string_view column) const {
    auto it = std::find(header_.begin(), header_.end(), column);
    const size_t index = static_cast<size_t>(it - header_.begin());
    return it == header_.end() || index >= row.size() ? std::string() : row[index];
  }
  double Number(const std::vector<std::string>& row, std::string_view column) const {
    return std::stod(Get(row, column));
  }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::vector<std::string> RankDirectories() {
  std::vector<std::string> dirs;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(kAscendTraces, error); it != fs::recursive_directory_iterator();
       it.increment(error)) {
    if (error) break;
    const fs::path output = it->path();
    if (output.filename() != "ASCEND_PROFILER_OUTPUT") continue;
    if (fs::exists(output / "step_trace_time.csv") && fs::exists(output / "trace_view.json")) {
      dirs.push_back(fs::relative(output.parent_path(), kAscendTraces).string());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// The csv's step id: a number, or empty / "None" when torch_npu saw no ProfilerStep.
std::optional<int64_t> StepOf(const std::string& cell) {
  if (cell.empty() || cell == "None") return std::nullopt;
  return std::stoll(cell);
}

// The steps of the device a row names (Device_id), or the rank's when it drives one device.
const std::vector<StepBreakdown>* StepsOfDevice(const RankBreakdown& rank, const std::string& device_cell) {
  if (rank.devices.empty() || device_cell.empty()) return &rank.steps;
  const int64_t id = std::stoll(device_cell);
  for (const DeviceTimeBreakdown& device : rank.devices) {
    if (device.id == id) return &device.steps;
  }
  return nullptr;
}

const StepBreakdown* FindStep(const std::vector<StepBreakdown>& steps, std::optional<int64_t> number) {
  for (const StepBreakdown& step : steps) {
    if (step.step == number) return &step;
  }
  return nullptr;
}

class AscendStepTraceGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AscendStepTraceGoldenTest, SplitMatchesStepTraceTime) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path output = kAscendTraces / GetParam() / "ASCEND_PROFILER_OUTPUT";
  auto trace = ImportFile((output / "trace_view.json").string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const RankBreakdown ours = ComputeTimeBreakdown(*trace);
  EXPECT_EQ(ours.definitions, StepDefinitions::kTorchNpu);

  const StepTraceCsv csv(output / "step_trace_time.csv");
  ASSERT_FALSE(csv.rows().empty());
  for (const std::vector<std::string>& row : csv.rows()) {
    const std::string step_cell = csv.Get(row, "Step").empty() ? csv.Get(row, "Step Id") : csv.Get(row, "Step");
    SCOPED_TRACE("device " + csv.Get(row, "Device_id") + " step " + step_cell);
    const std::vector<StepBreakdown>* steps = StepsOfDevice(ours, csv.Get(row, "Device_id"));
    ASSERT_NE(steps, nullptr);
    const StepBreakdown* step = FindStep(*steps, StepOf(step_cell));
    ASSERT_NE(step, nullptr);

    const double tolerance = kStepShare * csv.Number(row, "Stage");
    auto expect = [&](std::string_view column, int64_t ours_ns) {
      const double theirs = csv.Number(row, column);
      EXPECT_NEAR(ours_ns / 1e3, theirs, tolerance) << column;
      // Printed so that the golden numbers can be read off the test log.
      std::printf("  %-32s ours %14.3f  csv %14.3f  diff %8.3f us\n", std::string(column).c_str(), ours_ns / 1e3,
                  theirs, ours_ns / 1e3 - theirs);
    };
    expect("Computing", step->computing_ns);
    expect("Communication(Not Overlapped)", step->communication_not_overlapped_ns);
    expect("Overlapped", step->overlapped_ns);
    expect("Communication", step->communication_ns);
    expect("Free", step->free_ns);
    expect("Stage", step->wall_ns);
    if (csv.Has("Bubble")) expect("Bubble", step->bubble_ns);
    if (csv.Has("Preparing") && step->preparing_ns != kNoId) expect("Preparing", step->preparing_ns);
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTorchNpuRanks, AscendStepTraceGoldenTest, ::testing::ValuesIn(RankDirectories()),
                         golden::PathTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AscendStepTraceGoldenTest);

TEST(AscendStepTraceGoldenDataTest, SharedRanksArePresent) {
  TUNEPROF_REQUIRE_CORPUS();
  if (RankDirectories().empty()) GTEST_SKIP() << "no torch_npu rank directories under " << kAscendTraces;
  SUCCEED();
}

}  // namespace
}  // namespace tuneprof

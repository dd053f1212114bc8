// Golden tests: `--semantics hta` against HTA's own outputs on the shared Kineto samples
// (../shared/reference/expected/hta/<dir>/, produced by the HTA commit named in its README). Every
// directory holding temporal_breakdown.csv and comm_comp_overlap.csv is one test; its traces are the
// files listed under "trace_files" in its run_meta.json (paths relative to ../shared).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/hta_breakdown.h"
#include "analysis/time_breakdown.h"
#include "importers/import.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = TUNEPROF_SHARED_DIR;
const fs::path kExpected = kShared / "reference" / "expected" / "hta";

constexpr double kMicrosTolerance = 1.0;
constexpr double kPercentTolerance = 0.01;

std::string ReadWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// pandas' CSV: fields with commas, quotes or newlines are quoted, quotes doubled inside.
class CsvTable {
 public:
  explicit CsvTable(const fs::path& path) {
    std::vector<std::vector<std::string>> records = Parse(ReadWholeFile(path));
    if (records.empty()) return;
    header_ = std::move(records.front());
    rows_.assign(std::make_move_iterator(records.begin() + 1), std::make_move_iterator(records.end()));
  }

  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

  // The field of `row` under `column`; "" when absent.
  std::string Get(const std::vector<std::string>& row, std::string_view column) const {
    auto it = std::find(header_.begin(), header_.end(), column);
    const size_t index = static_cast<size_t>(it - header_.begin());
    return it == header_.end() || index >= row.size() ? std::string() : row[index];
  }

 private:
  static std::vector<std::vector<std::string>> Parse(const std::string& text) {
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> record;
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quoted) {
        if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          field += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        record.push_back(std::move(field));
        field.clear();
      } else if (c == '\n') {
        record.push_back(std::move(field));
        field.clear();
        records.push_back(std::move(record));
        record.clear();
      } else if (c != '\r') {
        field += c;
      }
    }
    if (!field.empty() || !record.empty()) {
      record.push_back(std::move(field));
      records.push_back(std::move(record));
    }
    return records;
  }

  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// run_meta.json: "trace_files": {"0": "traces/...", "1": "traces/..."} (rank -> path under shared/).
std::map<int64_t, std::string> TraceFilesByRank(const fs::path& run_meta) {
  const std::string text = ReadWholeFile(run_meta);
  std::map<int64_t, std::string> files;
  const size_t start = text.find("\"trace_files\"");
  if (start == std::string::npos) return files;
  const size_t end = text.find('}', start);
  const std::string block = text.substr(start, end - start);
  const std::regex entry(R"re("(-?\d+)"\s*:\s*"([^"]+)")re");
  for (auto it = std::sregex_iterator(block.begin(), block.end(), entry); it != std::sregex_iterator(); ++it) {
    files[std::stoll((*it)[1].str())] = (*it)[2].str();
  }
  return files;
}

std::vector<std::string> DirectoriesWithHtaBreakdowns() {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(kExpected, error)) {
    const fs::path dir = entry.path();
    if (fs::exists(dir / "temporal_breakdown.csv") && fs::exists(dir / "comm_comp_overlap.csv") &&
        fs::exists(dir / "run_meta.json")) {
      names.push_back(dir.filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Imports a directory's traces in rank order, as one HTA run.
std::vector<Trace> ImportRun(const fs::path& dir) {
  std::vector<Trace> traces;
  for (const auto& [rank, relative] : TraceFilesByRank(dir / "run_meta.json")) {
    auto trace = ImportFile((kShared / relative).string());
    EXPECT_TRUE(trace.ok()) << relative << ": " << trace.status().message();
    if (trace.ok()) traces.push_back(std::move(trace).value());
  }
  return traces;
}

const HtaRankBreakdown* FindRank(const std::vector<HtaRankBreakdown>& ranks, int64_t rank) {
  for (const HtaRankBreakdown& r : ranks) {
    if (r.rank == rank) return &r;
  }
  return nullptr;
}

class HtaGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = kExpected / GetParam();
    traces_ = ImportRun(dir_);
    ASSERT_FALSE(traces_.empty());
    ours_ = ComputeHtaBreakdown(traces_);
  }

  fs::path dir_;
  std::vector<Trace> traces_;
  std::vector<HtaRankBreakdown> ours_;
};

TEST_P(HtaGoldenTest, TemporalBreakdownMatches) {
  const CsvTable expected(dir_ / "temporal_breakdown.csv");
  ASSERT_FALSE(expected.rows().empty());
  for (const std::vector<std::string>& row : expected.rows()) {
    const int64_t rank = std::stoll(expected.Get(row, "rank"));
    const HtaRankBreakdown* ours = FindRank(ours_, rank);
    ASSERT_NE(ours, nullptr) << "rank " << rank;
    ASSERT_TRUE(ours->temporal.has_value()) << "rank " << rank;
    const HtaTemporalBreakdown& t = *ours->temporal;
    auto value = [&](std::string_view column) { return std::stod(expected.Get(row, column)); };
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_NEAR(t.idle_us, value("idle_time(us)"), kMicrosTolerance);
    EXPECT_NEAR(t.compute_us, value("compute_time(us)"), kMicrosTolerance);
    EXPECT_NEAR(t.non_compute_us, value("non_compute_time(us)"), kMicrosTolerance);
    EXPECT_NEAR(t.kernel_time_us, value("kernel_time(us)"), kMicrosTolerance);
    EXPECT_NEAR(t.idle_pct, value("idle_time_pctg"), kPercentTolerance);
    EXPECT_NEAR(t.compute_pct, value("compute_time_pctg"), kPercentTolerance);
    EXPECT_NEAR(t.non_compute_pct, value("non_compute_time_pctg"), kPercentTolerance);
  }
}

TEST_P(HtaGoldenTest, CommCompOverlapMatches) {
  const CsvTable expected(dir_ / "comm_comp_overlap.csv");
  ASSERT_FALSE(expected.rows().empty());
  for (const std::vector<std::string>& row : expected.rows()) {
    const int64_t rank = std::stoll(expected.Get(row, "rank"));
    const HtaRankBreakdown* ours = FindRank(ours_, rank);
    ASSERT_NE(ours, nullptr) << "rank " << rank;
    const std::string cell = expected.Get(row, "comp_comm_overlap_pctg");
    if (cell.empty()) {  // pandas writes NaN as an empty cell
      EXPECT_FALSE(ours->comm_comp_overlap_pct.has_value()) << "rank " << rank;
    } else {
      ASSERT_TRUE(ours->comm_comp_overlap_pct.has_value()) << "rank " << rank;
      EXPECT_NEAR(*ours->comm_comp_overlap_pct, std::stod(cell), kPercentTolerance) << "rank " << rank;
    }
  }
}

// The rows HTA kept (gpu_events_after_load.csv) are exactly the ones we measure.
TEST_P(HtaGoldenTest, KeptGpuEventCountMatches) {
  const fs::path path = dir_ / "gpu_events_after_load.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  const CsvTable kept(path);
  std::map<int64_t, uint64_t> per_rank;
  for (const std::vector<std::string>& row : kept.rows()) ++per_rank[std::stoll(kept.Get(row, "rank"))];
  for (const HtaRankBreakdown& ours : ours_) {
    EXPECT_EQ(ours.gpu_events, per_rank[ours.rank]) << "rank " << ours.rank;
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(SharedKinetoSamples, HtaGoldenTest, ::testing::ValuesIn(DirectoriesWithHtaBreakdowns()),
                         TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HtaGoldenTest);

TEST(HtaGoldenDataTest, ReferenceOutputsArePresent) {
  if (DirectoriesWithHtaBreakdowns().empty()) GTEST_SKIP() << "no HTA reference outputs under " << kExpected;
  SUCCEED();
}

// On trace_filter HTA keeps exactly one step (551) of whole-µs events, so there our default semantics
// measure the same thing on that step: wall = HTA's kernel_time, free = idle, computing = compute
// (the trace has no syncs and no kernel our rules and HTA's regexes type differently).
TEST(HtaGoldenCrossCheckTest, DefaultSemanticsAgreeOnTheStepHtaKeeps) {
  const fs::path dir = kExpected / "trace_filter";
  if (!fs::exists(dir / "temporal_breakdown.csv")) GTEST_SKIP() << "no " << dir;
  const std::vector<Trace> traces = ImportRun(dir);
  const CsvTable expected(dir / "temporal_breakdown.csv");
  for (const Trace& trace : traces) {
    const RankBreakdown ours = ComputeTimeBreakdown(trace);
    ASSERT_GE(ours.steps.size(), 2u);
    const StepBreakdown& kept = ours.steps.front();  // HTA drops the last of the two steps
    for (const std::vector<std::string>& row : expected.rows()) {
      if (std::stoll(expected.Get(row, "rank")) != ours.rank) continue;
      SCOPED_TRACE("rank " + std::to_string(ours.rank));
      EXPECT_NEAR(kept.wall_ns / 1e3, std::stod(expected.Get(row, "kernel_time(us)")), kMicrosTolerance);
      EXPECT_NEAR(kept.free_ns / 1e3, std::stod(expected.Get(row, "idle_time(us)")), kMicrosTolerance);
      EXPECT_NEAR(kept.computing_ns / 1e3, std::stod(expected.Get(row, "compute_time(us)")), kMicrosTolerance);
    }
  }
}

}  // namespace
}  // namespace tuneprof

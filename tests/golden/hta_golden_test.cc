// Golden tests: `--semantics hta` against HTA's own outputs on the shared Kineto samples
// (../shared/reference/expected/hta/<dir>/, produced by the HTA commit named in its README). Every
// directory holding temporal_breakdown.csv and comm_comp_overlap.csv is one test; its traces are the
// files listed under "trace_files" in its run_meta.json (paths relative to ../shared).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/hta/hta_breakdown.h"
#include "analysis/hta/hta_idle_time.h"
#include "analysis/hta/hta_kernels.h"
#include "analysis/hta/hta_launches.h"
#include "importers/import.h"
#include "golden_files.h"
#include "test_corpus.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = TUNEPROF_SHARED_DIR;
const fs::path kExpected = kShared / "reference" / "expected" / "hta";

constexpr double kMicrosTolerance = 1.0;
constexpr double kPercentTolerance = 0.01;
// The issue asks for 0.1 %; these figures come out exact (to float noise), so the tests hold them there.
constexpr double kRelativeTolerance = 1e-9;
// idle_interval_stats.csv is rounded to 2 decimals by HTA; ours are not.
constexpr double kTwoDecimals = 0.005 + 1e-9;

void ExpectWithinShare(double ours, double expected, std::string_view what, double absolute = 1e-9) {
  EXPECT_NEAR(ours, expected, std::max(std::abs(expected) * kRelativeTolerance, absolute)) << what;
}

using golden::ReadWholeFile;

// pandas' CSV: fields with commas, quotes or newlines are quoted, quotes doubled inside.
class CsvTable {
 public:
  explicit CsvTable(const fs::path& path) {
    std::vector<std::vector<std::string>> records = golden::PandasCsvRecords(ReadWholeFile(path));
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

// One sample's traces and breakdown, imported once for all the checks on it (a dozen per sample; the
// largest sample takes seconds to import under the sanitizers).
struct ImportedSample {
  std::vector<Trace> traces;
  std::vector<HtaRankBreakdown> breakdown;
};

const ImportedSample& Sample(const fs::path& dir) {
  static std::map<std::string, ImportedSample> cache;
  auto [it, inserted] = cache.try_emplace(dir.string());
  if (inserted) {
    it->second.traces = ImportRun(dir);
    if (!it->second.traces.empty()) it->second.breakdown = ComputeHtaBreakdown(it->second.traces);
  }
  return it->second;
}

class HtaGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  // A skip here skips the test body too: the tests below need not require the corpus again.
  void SetUp() override {
    TUNEPROF_REQUIRE_CORPUS();
    dir_ = kExpected / GetParam();
    const ImportedSample& sample = Sample(dir_);
    ASSERT_FALSE(sample.traces.empty());
    traces_ = &sample.traces;
    ours_ = sample.breakdown;
  }

  // Calls check(table, row, ours) for each row of the sample's `csv_name`, `ours` being that row's rank;
  // stops at the first fatal failure, as an ASSERT in the caller's own loop would.
  template <typename Check>
  void ForEachRankRow(std::string_view csv_name, const Check& check) const {
    const CsvTable expected(dir_ / csv_name);
    ASSERT_FALSE(expected.rows().empty());
    for (const std::vector<std::string>& row : expected.rows()) {
      const int64_t rank = std::stoll(expected.Get(row, "rank"));
      const HtaRankBreakdown* ours = FindRank(ours_, rank);
      ASSERT_NE(ours, nullptr) << "rank " << rank;
      check(expected, row, *ours);
      if (HasFatalFailure()) return;
    }
  }

  fs::path dir_;
  const std::vector<Trace>* traces_ = nullptr;
  std::vector<HtaRankBreakdown> ours_;
};

TEST_P(HtaGoldenTest, TemporalBreakdownMatches) {
  auto check = [](const CsvTable& expected, const std::vector<std::string>& row, const HtaRankBreakdown& ours) {
    const int64_t rank = ours.rank;
    ASSERT_TRUE(ours.temporal.has_value()) << "rank " << rank;
    const HtaTemporalBreakdown& t = *ours.temporal;
    auto value = [&](std::string_view column) { return std::stod(expected.Get(row, column)); };
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_NEAR(t.idle_us, value("idle_time(us)"), kMicrosTolerance);
    EXPECT_NEAR(t.compute_us, value("compute_time(us)"), kMicrosTolerance);
    EXPECT_NEAR(t.non_compute_us, value("non_compute_time(us)"), kMicrosTolerance);
    EXPECT_NEAR(t.kernel_time_us, value("kernel_time(us)"), kMicrosTolerance);
    EXPECT_NEAR(t.idle_pct, value("idle_time_pctg"), kPercentTolerance);
    EXPECT_NEAR(t.compute_pct, value("compute_time_pctg"), kPercentTolerance);
    EXPECT_NEAR(t.non_compute_pct, value("non_compute_time_pctg"), kPercentTolerance);
  };
  ForEachRankRow("temporal_breakdown.csv", check);
}

TEST_P(HtaGoldenTest, CommCompOverlapMatches) {
  auto check = [](const CsvTable& expected, const std::vector<std::string>& row, const HtaRankBreakdown& ours) {
    const int64_t rank = ours.rank;
    const std::string cell = expected.Get(row, "comp_comm_overlap_pctg");
    if (cell.empty()) {  // pandas writes NaN as an empty cell
      EXPECT_FALSE(ours.comm_comp_overlap_pct.has_value()) << "rank " << rank;
    } else {
      ASSERT_TRUE(ours.comm_comp_overlap_pct.has_value()) << "rank " << rank;
      EXPECT_NEAR(*ours.comm_comp_overlap_pct, std::stod(cell), kPercentTolerance) << "rank " << rank;
    }
  };
  ForEachRankRow("comm_comp_overlap.csv", check);
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

// ---- kernel types, kernel statistics, idle time, launches, queue length.

TEST_P(HtaGoldenTest, KernelTypeBreakdownMatches) {
  const fs::path path = dir_ / "kernel_type_breakdown.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  const CsvTable expected(path);
  const HtaKernelBreakdown ours = ComputeHtaKernelBreakdown(*traces_, kHtaDefaultNumKernels);
  ASSERT_EQ(ours.types.size(), expected.rows().size());
  for (const std::vector<std::string>& row : expected.rows()) {
    const std::string type = expected.Get(row, "kernel_type");
    auto it = std::find_if(ours.types.begin(), ours.types.end(),
                           [&](const HtaKernelTypeShare& s) { return s.kernel_type == type; });
    ASSERT_NE(it, ours.types.end()) << type;
    ExpectWithinShare(it->sum_us, std::stod(expected.Get(row, "sum")), type);
    EXPECT_NEAR(it->percentage, std::stod(expected.Get(row, "percentage")), 0.1) << type;
  }
}

// Every (rank, type, name) row of one of HTA's kernel tables, with sum/max/min/stddev/mean.
void ExpectKernelTableMatches(const fs::path& path, const HtaKernelBreakdown& ours) {
  const CsvTable expected(path);
  ASSERT_EQ(ours.kernels.size(), expected.rows().size()) << path;
  for (const std::vector<std::string>& row : expected.rows()) {
    const std::string name = expected.Get(row, "name");
    const std::string type = expected.Get(row, "kernel_type");
    const int64_t rank = std::stoll(expected.Get(row, "rank"));
    auto it = std::find_if(ours.kernels.begin(), ours.kernels.end(), [&](const HtaKernelStats& s) {
      return s.name == name && s.kernel_type == type && s.rank == rank;
    });
    ASSERT_NE(it, ours.kernels.end()) << rank << " " << type << " " << name;
    SCOPED_TRACE(std::to_string(rank) + " " + type + " " + name.substr(0, 80));
    ExpectWithinShare(it->sum_us, std::stod(expected.Get(row, "sum (us)")), "sum");
    ExpectWithinShare(it->max_us, std::stod(expected.Get(row, "max (us)")), "max");
    ExpectWithinShare(it->min_us, std::stod(expected.Get(row, "min (us)")), "min");
    ExpectWithinShare(it->mean_us, std::stod(expected.Get(row, "mean (us)")), "mean");
    ExpectWithinShare(it->stddev_us, std::stod(expected.Get(row, "stddev")), "stddev");
  }
}

TEST_P(HtaGoldenTest, KernelBreakdownAllMatches) {
  const fs::path path = dir_ / "kernel_breakdown_all.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  ExpectKernelTableMatches(path, ComputeHtaKernelBreakdown(*traces_, std::numeric_limits<uint64_t>::max()));
}

TEST_P(HtaGoldenTest, KernelBreakdownTop10Matches) {
  const fs::path path = dir_ / "kernel_breakdown_top10.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  ExpectKernelTableMatches(path, ComputeHtaKernelBreakdown(*traces_, kHtaDefaultNumKernels));
}

// The (rank, stream, idle category) a row of HTA's idle tables is about.
struct IdleRowKey {
  IdleRowKey(const CsvTable& table, const std::vector<std::string>& row)
      : rank(std::stoll(table.Get(row, "rank"))),
        stream(std::stoll(table.Get(row, "stream"))),
        category(table.Get(row, "idle_category")) {}

  // Our row for the same key; nullptr when we have none.
  const HtaIdleRow* Find(const std::vector<HtaIdleRow>& rows) const {
    for (const HtaIdleRow& r : rows) {
      if (r.rank == rank && r.stream == stream && HtaIdleCategoryName(r.category) == category) return &r;
    }
    return nullptr;
  }

  std::string Label() const { return std::to_string(rank) + " stream " + std::to_string(stream) + " " + category; }

  int64_t rank;
  int64_t stream;
  std::string category;
};

// Calls check(table, row, ours) for each row of HTA's idle table at `path`, `ours` being our idle row of
// the same (rank, stream, category) in `traces`, within a trace naming that key; with `same_count` we must
// also have no row HTA lacks. Stops at the first fatal failure, as an ASSERT in the caller's own loop would.
template <typename Check>
void ForEachIdleRow(const fs::path& path, const std::vector<Trace>& traces, bool same_count, const Check& check) {
  const CsvTable expected(path);
  const std::vector<HtaIdleRow> ours = ComputeHtaIdleTime(traces);
  if (same_count) {
    ASSERT_EQ(ours.size(), expected.rows().size());
  }
  for (const std::vector<std::string>& row : expected.rows()) {
    const IdleRowKey key(expected, row);
    const HtaIdleRow* r = key.Find(ours);
    ASSERT_NE(r, nullptr) << key.Label();
    SCOPED_TRACE(key.Label());
    check(expected, row, *r);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST_P(HtaGoldenTest, IdleTimeBreakdownMatches) {
  const fs::path path = dir_ / "idle_time_breakdown.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  ForEachIdleRow(path, *traces_, true, [](const CsvTable& expected, const auto& row, const HtaIdleRow& r) {
    ExpectWithinShare(r.idle_us, std::stod(expected.Get(row, "idle_time")), "idle_time");
    const std::string ratio = expected.Get(row, "idle_time_ratio");
    if (ratio.empty()) {
      EXPECT_FALSE(r.ratio.has_value());
    } else {
      ASSERT_TRUE(r.ratio.has_value());
      EXPECT_NEAR(*r.ratio, std::stod(ratio), 0.01);
    }
  });
}

// A describe() cell: empty = NaN = absent.
void ExpectDescribeCell(bool present, double ours, const std::string& cell, std::string_view what,
                        double absolute = 1e-9) {
  if (cell.empty()) {
    EXPECT_FALSE(present) << what;
    return;
  }
  ASSERT_TRUE(present) << what;
  ExpectWithinShare(ours, std::stod(cell), what, absolute);
}

TEST_P(HtaGoldenTest, IdleIntervalStatsMatch) {
  const fs::path path = dir_ / "idle_interval_stats.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  ForEachIdleRow(path, *traces_, false, [](const CsvTable& expected, const auto& row, const HtaIdleRow& r) {
    const HtaDescribe& d = r.intervals;
    EXPECT_EQ(d.count, static_cast<uint64_t>(std::stod(expected.Get(row, "count"))));
    const bool any = d.count > 0;
    ExpectDescribeCell(any, d.mean, expected.Get(row, "mean"), "mean", kTwoDecimals);
    ExpectDescribeCell(d.has_std, d.std, expected.Get(row, "std"), "std", kTwoDecimals);
    ExpectDescribeCell(any, d.min, expected.Get(row, "min"), "min", kTwoDecimals);
    ExpectDescribeCell(any, d.p25, expected.Get(row, "25%"), "25%", kTwoDecimals);
    ExpectDescribeCell(any, d.p50, expected.Get(row, "50%"), "50%", kTwoDecimals);
    ExpectDescribeCell(any, d.p75, expected.Get(row, "75%"), "75%", kTwoDecimals);
    ExpectDescribeCell(any, d.max, expected.Get(row, "max"), "max", kTwoDecimals);
  });
}

// Every (rank, correlation) row: the same joins, durations and clipped delays.
TEST_P(HtaGoldenTest, KernelLaunchStatsMatch) {
  const fs::path path = dir_ / "cuda_kernel_launch_stats.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  const CsvTable expected(path);
  const HtaLaunchAnalysis ours = ComputeHtaLaunches(*traces_);
  ASSERT_EQ(ours.launches.size(), expected.rows().size());
  std::map<std::pair<int64_t, int64_t>, std::vector<const HtaLaunchRow*>> by_key;
  for (const HtaLaunchRow& r : ours.launches) by_key[{r.rank, r.correlation}].push_back(&r);
  size_t mismatches = 0;
  for (const std::vector<std::string>& row : expected.rows()) {
    const std::pair<int64_t, int64_t> key(std::stoll(expected.Get(row, "rank")),
                                          std::stoll(expected.Get(row, "correlation")));
    auto it = by_key.find(key);
    ASSERT_NE(it, by_key.end()) << "rank " << key.first << " correlation " << key.second;
    const double cpu = std::stod(expected.Get(row, "cpu_duration"));
    const double gpu = std::stod(expected.Get(row, "gpu_duration"));
    const double delay = std::stod(expected.Get(row, "launch_delay"));
    const bool found = std::any_of(it->second.begin(), it->second.end(), [&](const HtaLaunchRow* r) {
      return std::abs(r->cpu_duration_us - cpu) < 1e-6 && std::abs(r->gpu_duration_us - gpu) < 1e-6 &&
             std::abs(r->launch_delay_us - delay) < 1e-6;
    });
    mismatches += !found;
  }
  EXPECT_EQ(mismatches, 0u);
}

// queue_length_summary.csv: three header lines, then rank,stream,count,mean,std,min,25%,50%,75%,max.
TEST_P(HtaGoldenTest, QueueLengthSummaryMatches) {
  const fs::path path = dir_ / "queue_length_summary.csv";
  if (!fs::exists(path)) GTEST_SKIP() << "no " << path;
  const CsvTable table(path);
  const HtaLaunchAnalysis ours = ComputeHtaLaunches(*traces_);
  std::vector<std::vector<std::string>> rows;
  for (const std::vector<std::string>& row : table.rows()) {
    if (row.size() == 10 && !row[0].empty() && std::isdigit(static_cast<unsigned char>(row[0][0]))) rows.push_back(row);
  }
  ASSERT_EQ(ours.queues.size(), rows.size());
  for (const std::vector<std::string>& row : rows) {
    const int64_t rank = std::stoll(row[0]);
    const int64_t stream = std::stoll(row[1]);
    auto it = std::find_if(ours.queues.begin(), ours.queues.end(),
                           [&](const HtaQueueLength& q) { return q.rank == rank && q.stream == stream; });
    ASSERT_NE(it, ours.queues.end()) << rank << " " << stream;
    SCOPED_TRACE("rank " + std::to_string(rank) + " stream " + std::to_string(stream));
    const HtaDescribe& d = it->queue_length;
    EXPECT_EQ(d.count, static_cast<uint64_t>(std::stod(row[2])));
    ExpectWithinShare(d.mean, std::stod(row[3]), "mean");
    ExpectDescribeCell(d.has_std, d.std, row[4], "std");
    ExpectWithinShare(d.min, std::stod(row[5]), "min");
    ExpectWithinShare(d.p25, std::stod(row[6]), "25%");
    ExpectWithinShare(d.p50, std::stod(row[7]), "50%");
    ExpectWithinShare(d.p75, std::stod(row[8]), "75%");
    ExpectWithinShare(d.max, std::stod(row[9]), "max");
  }
}

INSTANTIATE_TEST_SUITE_P(SharedKinetoSamples, HtaGoldenTest, ::testing::ValuesIn(DirectoriesWithHtaBreakdowns()),
                         golden::PathTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HtaGoldenTest);

TEST(HtaGoldenDataTest, ReferenceOutputsArePresent) {
  TUNEPROF_REQUIRE_CORPUS();
  TUNEPROF_REQUIRE_SHARED("reference");
  if (DirectoriesWithHtaBreakdowns().empty()) GTEST_SKIP() << "no HTA reference outputs under " << kExpected;
  SUCCEED();
}

// On trace_filter HTA keeps exactly one step (551) of whole-µs events, so there our default semantics
// measure the same thing on that step: wall = HTA's kernel_time, free = idle, computing = compute
// (the trace has no syncs and no kernel our rules and HTA's regexes type differently).
TEST(HtaGoldenCrossCheckTest, DefaultSemanticsAgreeOnTheStepHtaKeeps) {
  TUNEPROF_REQUIRE_CORPUS();
  TUNEPROF_REQUIRE_SHARED("reference");
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

// Golden tests: the per-operator diff (src/analysis/compare/operator_diff.h) against HTA's TraceDiff on the
// shared Kineto pairs (../shared/reference/expected/hta/{diff_trace_diff,diff_trace_compare}, made by
// run_hta_trace_diff.py there: compare_traces on the first rank and first iteration of each side, for
// GPU, CPU and ALL, and ops_diff for GPU). Counts must match exactly; durations are whole µs in these
// traces, so sums must match to the nanosecond.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/compare/operator_diff.h"
#include "importers/import.h"
#include "golden_files.h"
#include "test_corpus.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

const fs::path kHtaDiffExpected = fs::path(TUNEPROF_SHARED_DIR) / "reference" / "expected" / "hta";
const fs::path kHtaDiffTraces = fs::path(TUNEPROF_SHARED_DIR) / "traces" / "kineto" / "hta";

using golden::PandasCsvRecords;
using golden::ReadWholeFile;

struct HtaRow {
  double control_counts = 0;
  double control_us = 0;
  double test_counts = 0;
  double test_us = 0;
  std::string change;  // counts_change_categories
};

std::map<std::string, HtaRow> ReadCompareTraces(const fs::path& path) {
  const auto records = PandasCsvRecords(ReadWholeFile(path));
  std::map<std::string, HtaRow> rows;
  EXPECT_FALSE(records.empty()) << path;
  if (records.empty()) return rows;
  EXPECT_EQ(records.front().size(), 8u) << path;
  for (size_t r = 1; r < records.size(); ++r) {
    const auto& f = records[r];
    if (f.size() != 8) {
      ADD_FAILURE() << path << " row " << r;
      continue;
    }
    rows[f[0]] = HtaRow{std::stod(f[1]), std::stod(f[2]), std::stod(f[3]), std::stod(f[4]), f[7]};
  }
  return rows;
}

// ops_diff_GPU.json: {"added": [names], "deleted": [...], ...}; names are JSON strings.
std::map<std::string, std::set<std::string>> ReadOpsDiff(const fs::path& path) {
  const std::string text = ReadWholeFile(path);
  std::map<std::string, std::set<std::string>> lists;
  std::string current_key, token;
  bool in_array = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') in_array = true;
    if (text[i] == ']') in_array = false;
    if (text[i] != '"') continue;
    token.clear();
    for (++i; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;  // the names hold no \u escapes
      token += text[i];
    }
    if (in_array) {
      lists[current_key].insert(token);
    } else {
      current_key = token;
      lists[current_key];
    }
  }
  return lists;
}

Trace ImportOne(const fs::path& directory) {
  auto traces = ImportPaths({directory.string()});
  EXPECT_TRUE(traces.ok()) << traces.status().message();
  EXPECT_EQ(traces->size(), 1u);
  return std::move(traces->front());
}

// compare_traces(ALL) groups CPU and GPU rows together by name.
OperatorTotals Merged(const OperatorTotals& a, const OperatorTotals& b) {
  std::map<std::string, OperatorTotals::Entry> by_name;
  for (const OperatorTotals* totals : {&a, &b}) {
    for (const OperatorTotals::Entry& entry : totals->entries) {
      OperatorTotals::Entry& merged = by_name[entry.name];
      merged.name = entry.name;
      merged.count += entry.count;
      merged.total_ns += entry.total_ns;
    }
  }
  OperatorTotals result;
  result.steps = a.steps;
  for (auto& [name, entry] : by_name) result.entries.push_back(entry);
  return result;
}

std::string_view HtaCategory(OperatorChange change) {
  switch (change) {
    case OperatorChange::kAdded:
    case OperatorChange::kIncreased:
      return "+";
    case OperatorChange::kRemoved:
    case OperatorChange::kDecreased:
      return "-";
    case OperatorChange::kUnchanged:
      return "=";
  }
  return "?";
}

void ExpectSameAsHta(const OperatorDiff& diff, const fs::path& csv) {
  const std::map<std::string, HtaRow> expected = ReadCompareTraces(csv);
  ASSERT_FALSE(expected.empty()) << csv;
  EXPECT_EQ(diff.ops.size(), expected.size()) << csv;
  EXPECT_EQ(diff.before_steps, 1u);
  EXPECT_EQ(diff.after_steps, 1u);
  for (const OperatorDelta& op : diff.ops) {
    auto it = expected.find(op.name);
    if (it == expected.end()) {
      ADD_FAILURE() << csv.filename() << ": HTA has no row " << op.name;
      continue;
    }
    const HtaRow& row = it->second;
    EXPECT_EQ(op.before_count, row.control_counts) << op.name;
    EXPECT_EQ(op.after_count, row.test_counts) << op.name;
    EXPECT_NEAR(op.before_ns, row.control_us * 1000, 1e-6) << op.name;
    EXPECT_NEAR(op.after_ns, row.test_us * 1000, 1e-6) << op.name;
    EXPECT_EQ(HtaCategory(op.change), row.change) << op.name;
  }
}

struct DiffCase {
  const char* expected_dir;
  const char* control;
  const char* test;
};

class CompareHtaDiffTest : public ::testing::TestWithParam<DiffCase> {};

TEST_P(CompareHtaDiffTest, MatchesCompareTracesAndOpsDiff) {
  TUNEPROF_REQUIRE_CORPUS();
  TUNEPROF_REQUIRE_SHARED("reference");
  const DiffCase& c = GetParam();
  const fs::path expected = kHtaDiffExpected / c.expected_dir;
  const Trace control = ImportOne(kHtaDiffTraces / c.control);
  const Trace test = ImportOne(kHtaDiffTraces / c.test);

  const OperatorTotals control_gpu = CollectOperators(control, OperatorScope::kDevice, StepSelection::kFirst);
  const OperatorTotals test_gpu = CollectOperators(test, OperatorScope::kDevice, StepSelection::kFirst);
  const OperatorDiff gpu = DiffOperators(control_gpu, test_gpu, OperatorScope::kDevice);
  ExpectSameAsHta(gpu, expected / "compare_traces_GPU.csv");

  const OperatorTotals control_cpu = CollectOperators(control, OperatorScope::kHostAll, StepSelection::kFirst);
  const OperatorTotals test_cpu = CollectOperators(test, OperatorScope::kHostAll, StepSelection::kFirst);
  ExpectSameAsHta(DiffOperators(control_cpu, test_cpu, OperatorScope::kHostAll), expected / "compare_traces_CPU.csv");
  ExpectSameAsHta(DiffOperators(Merged(control_cpu, control_gpu), Merged(test_cpu, test_gpu), OperatorScope::kHostAll),
                  expected / "compare_traces_ALL.csv");

  // ops_diff(GPU): HTA's "deleted" is our "removed".
  const auto lists = ReadOpsDiff(expected / "ops_diff_GPU.json");
  std::map<std::string, std::set<std::string>> ours;
  for (const char* key : {"added", "deleted", "increased", "decreased", "unchanged"}) ours[key];
  for (const OperatorDelta& op : gpu.ops) {
    const std::string_view name = OperatorChangeName(op.change);
    ours[name == "removed" ? "deleted" : std::string(name)].insert(op.name);
  }
  EXPECT_EQ(ours, lists);
}

INSTANTIATE_TEST_SUITE_P(Hta, CompareHtaDiffTest,
                         ::testing::Values(DiffCase{"diff_trace_diff", "trace_diff/control", "trace_diff/test"},
                                           DiffCase{"diff_trace_compare", "trace_compare/base", "trace_compare/test"}),
                         [](const auto& test_info) { return std::string(test_info.param.expected_dir); });

}  // namespace
}  // namespace tuneprof

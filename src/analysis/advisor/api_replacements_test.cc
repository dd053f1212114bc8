// The API-replacement table: versions ordered as CANN and torch_npu release them, rows complete, and
// docs/advisor.md listing exactly the table's rows.
#include "analysis/advisor/api_replacements.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "analysis/advisor/fusion_patterns.h"

namespace tuneprof {
namespace {

TEST(ApiReplacements, VersionsOrderReleaseCandidatesBeforeTheRelease) {
  EXPECT_LT(*CompareVersions("8.0.RC1", "8.0.RC3"), 0);
  EXPECT_LT(*CompareVersions("8.0.RC3", "8.0.0"), 0);
  EXPECT_LT(*CompareVersions("8.0.0", "8.1.RC1"), 0);
  EXPECT_LT(*CompareVersions("7.0.RC1", "7.0.0"), 0);
  EXPECT_GT(*CompareVersions("10.0.0", "9.0.0"), 0);
  EXPECT_EQ(*CompareVersions("2.1.0", "2.1.0+cpu"), 0);
  EXPECT_EQ(*CompareVersions("2.1", "2.1.0"), 0);
  EXPECT_GT(*CompareVersions("2.1.0.post8", "1.11.0"), 0);
  EXPECT_FALSE(CompareVersions("", "8.0.0").has_value());
}

TEST(ApiReplacements, ReadsTheRunsVersionsFromTheProducersSettings) {
  TraceMetadata metadata;
  metadata.entries = {{"profiler_info.CANN_Version", "8.0.RC2"}, {"profiler_info.torch_npu_version", "2.1.0"}};
  const RunVersions run = ReadRunVersions(metadata);
  EXPECT_EQ(run.cann, "8.0.RC2");
  EXPECT_EQ(run.torch_npu, "2.1.0");
  EXPECT_TRUE(ReadRunVersions(TraceMetadata()).cann.empty());
}

TEST(ApiReplacements, EveryRowIsComplete) {
  std::set<std::string_view> patterns;
  for (const FusionPattern& p : FusionLibrary()) patterns.insert(p.id);
  for (const ApiReplacement& row : ApiReplacementTable()) {
    EXPECT_FALSE(row.api.empty());
    EXPECT_FALSE(row.pattern.empty()) << row.api;
    EXPECT_TRUE(CompareVersions(row.min_cann, "6.0.0").has_value()) << row.api;
    EXPECT_TRUE(CompareVersions(row.min_torch_npu, "1.0.0").has_value()) << row.api;
    EXPECT_FALSE(row.source.empty()) << row.api;
    if (!row.reported_by.empty()) {
      EXPECT_TRUE(patterns.contains(row.reported_by)) << row.api;
    } else if (row.match == ReplacementMatch::kOpSequence) {
      EXPECT_FALSE(row.steps.empty()) << row.api;
    }
  }
}

std::string DocRow(const ApiReplacement& row) {
  return fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |", row.api,
                     row.match == ReplacementMatch::kOptimizerStep ? "optimizer step" : "operator sequence",
                     row.pattern, row.min_cann, row.min_torch_npu, row.source,
                     row.reported_by.empty() ? "this rule" : fmt::format("`{}`", row.reported_by));
}

// The table rows of the "API replacements" section (up to the next heading).
std::set<std::string> DocumentedRows() {
  std::ifstream in(std::string(TUNEPROF_SOURCE_DIR) + "/docs/advisor.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  std::set<std::string> rows;
  const size_t start = doc.find("\n### API replacements (`fusion.api_replacement`)\n");
  if (start == std::string::npos) return rows;
  const size_t end = doc.find("\n#", start + 1);
  std::istringstream section(doc.substr(start, end == std::string::npos ? std::string::npos : end - start));
  for (std::string line; std::getline(section, line);) {
    if (line.starts_with("| `")) rows.insert(line);
  }
  return rows;
}

TEST(ApiReplacements, DocsListEveryRowAndNoOther) {
  const std::set<std::string> documented = DocumentedRows();
  ASSERT_FALSE(documented.empty()) << "docs/advisor.md has no API replacements table";
  std::set<std::string> table;
  for (const ApiReplacement& row : ApiReplacementTable()) {
    table.insert(DocRow(row));
    EXPECT_TRUE(documented.contains(DocRow(row))) << "docs/advisor.md lacks the row " << DocRow(row);
  }
  for (const std::string& row : documented) EXPECT_TRUE(table.contains(row)) << "no table row for " << row;
}

}  // namespace
}  // namespace tuneprof

// The API-replacement table: versions ordered as CANN and torch_npu release them, rows complete, and
// docs/advisor.md listing exactly the table's rows.
#include "analysis/advisor/api_replacements.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <set>
#include <vector>

#include "analysis/advisor/fusion_patterns.h"
#include "analysis/core/doc_table_for_test.h"

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

// The section ends at the next heading of any level.
TEST(ApiReplacements, DocsListEveryRowAndNoOther) {
  std::vector<std::string> rows;
  for (const ApiReplacement& row : ApiReplacementTable()) rows.push_back(DocRow(row));
  ExpectDocumentedRows("advisor.md", "### API replacements (`fusion.api_replacement`)", rows, "#");
}

}  // namespace
}  // namespace tuneprof

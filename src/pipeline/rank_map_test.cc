#include "pipeline/rank_map.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneprof {
namespace {

std::vector<std::string> Said(MappedFileStatus* file) {
  std::vector<std::string> warnings;
  EXPECT_TRUE(CollectMapWarnings({"a.json"}, {"a.json"}, {file}, &warnings).ok());
  return warnings;
}

// A lone rank needs no rank number: the warning with that id is left unsaid, whatever its words, and a
// warning that only reads like it is said.
TEST(CollectMapWarningsTest, ALoneRankLeavesOutTheNoRankWarningByItsId) {
  MappedFileStatus file;
  file.warnings = {"a.json: no rank number (reworded)", "a.json: no rank in the trace; assuming rank 0"};
  file.warning_ids = {{WarningId::kNoRank, 0}};
  file.rank_ids = {0};
  EXPECT_EQ(Said(&file), (std::vector<std::string>{"a.json: no rank in the trace; assuming rank 0"}));
}

// A rank whose breakdown says it has no device timeline does not also say that its timeline file is missing.
TEST(CollectMapWarningsTest, TheBreakdownSaysAMissingTimelineInsteadOfTheImport) {
  MappedFileStatus file;
  file.warnings = {"dir/trace_view.json: not there", "dir: something else"};
  file.warning_ids = {{WarningId::kMissingTimeline, 0}};
  file.breakdown_warnings = {RankLines{"dir", {"dir: without a timeline"}, {{WarningId::kNoDeviceTimeline, 0}}}};
  file.rank_ids = {0};
  EXPECT_EQ(Said(&file), (std::vector<std::string>{"dir: something else", "dir: without a timeline"}));
}

TEST(CollectMapWarningsTest, WithoutTheBreakdownsIdTheImportSaysItself) {
  MappedFileStatus file;
  file.warnings = {"dir/trace_view.json: not there"};
  file.warning_ids = {{WarningId::kMissingTimeline, 0}};
  file.breakdown_warnings = {RankLines{"dir", {"dir: no device timeline; in the words alone"}, {}}};
  file.rank_ids = {0};
  EXPECT_EQ(Said(&file), (std::vector<std::string>{"dir/trace_view.json: not there",
                                                   "dir: no device timeline; in the words alone"}));
}

// Where no breakdown says it (info, memory), the first rank without its timeline file says so in full and
// the others are one line, however many they are.
TEST(CollectMapWarningsTest, MissingTimelinesOfManyRanksAreFolded) {
  std::vector<MappedFileStatus> files(4);
  std::vector<MappedFileStatus*> statuses;
  std::vector<std::string> names;
  for (size_t r = 0; r < files.size(); ++r) {
    names.push_back("r" + std::to_string(r));
    files[r].warnings = {names[r] + "/trace_view.json: missing; no timeline for " + names[r]};
    files[r].warning_ids = {{WarningId::kMissingTimeline, 0}};
    files[r].rank_ids = {static_cast<int64_t>(r)};
    statuses.push_back(&files[r]);
  }
  std::vector<std::string> warnings;
  ASSERT_TRUE(CollectMapWarnings({"run"}, names, statuses, &warnings).ok());
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "r0/trace_view.json: missing; no timeline for r0",
                          "r1 and 2 more ranks: no timeline either (its timeline file is missing, as for r0)"}));
}

// A summary file holds the lines of every rank it was made from: they fold as the ranks' own files do, each
// named by the rank directory its line names, not by the summary file.
TEST(CollectMapWarningsTest, MissingTimelinesInOneSummaryFileAreFoldedToo) {
  MappedFileStatus file;
  for (const char* rank : {"r0", "r1", "r2"}) {
    file.warning_ids.push_back({WarningId::kMissingTimeline, file.warnings.size()});
    file.warnings.push_back(std::string(rank) + "/trace_view.json: missing; no timeline for " + rank + " (export it)");
    file.warnings.push_back(std::string(rank) + ": 1 row dropped");
  }
  file.rank_ids = {0, 1, 2};
  std::vector<std::string> warnings;
  ASSERT_TRUE(CollectMapWarnings({"run.tps"}, {"run.tps"}, {&file}, &warnings).ok());
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "r0/trace_view.json: missing; no timeline for r0 (export it)", "r0: 1 row dropped",
                          "r1: 1 row dropped", "r2: 1 row dropped",
                          "r1 and 1 more rank: no timeline either (its timeline file is missing, as for r0)"}));
}

}  // namespace
}  // namespace tuneprof

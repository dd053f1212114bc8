#include "pipeline/run_analyses.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneprof {
namespace {

// The files a caller listed are checked after the paths it was given, as when the check lists them itself.
TEST(RefuseSummariesTest, ListedFilesAreCheckedAfterThePaths) {
  EXPECT_TRUE(RefuseSummaries({"run"}, {"run/rank0.json", "run/rank1.json.gz"}, "export").ok());

  const Status listed = RefuseSummaries({"run"}, {"run/rank0.json", "run/rank1.tps"}, "export");
  EXPECT_FALSE(listed.ok());
  EXPECT_NE(listed.message().find("run/rank1.tps"), std::string::npos) << listed.message();
  EXPECT_NE(listed.message().find("export"), std::string::npos) << listed.message();

  const Status given = RefuseSummaries({"a.tps"}, {"b.tps"}, "report --compare");
  EXPECT_NE(given.message().find("a.tps"), std::string::npos) << given.message();
}

// Without a list the check lists the paths itself: a path that cannot be listed is left to the import.
TEST(RefuseSummariesTest, ListsThePathsItselfWithoutAList) {
  EXPECT_TRUE(RefuseSummaries(std::vector<std::string>{"no/such/path.json"}, "export").ok());
  EXPECT_FALSE(RefuseSummaries(std::vector<std::string>{"no/such/run.tps"}, "export").ok());
}

}  // namespace
}  // namespace tuneprof

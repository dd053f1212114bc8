#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {
namespace {

TEST(WarningIdTest, AWarningIsFoundByItsIdNotItsWords) {
  TraceMetadata meta;
  meta.warnings.push_back("first");
  AddWarning(&meta, WarningId::kNoRank, "first");  // the same words, another warning
  meta.warnings.push_back("last");
  EXPECT_FALSE(IsWarning(meta, 0, WarningId::kNoRank));
  EXPECT_TRUE(IsWarning(meta, 1, WarningId::kNoRank));
  EXPECT_FALSE(IsWarning(meta, 2, WarningId::kNoRank));
  EXPECT_FALSE(IsWarning(meta, 3, WarningId::kNoRank));  // past the end
}

TEST(WarningIdTest, DroppingOneKeepsTheOthersInOrder) {
  TraceMetadata meta;
  meta.warnings.push_back("a");
  AddWarning(&meta, WarningId::kNoRank, "no rank");
  meta.warnings.push_back("b");
  AddWarning(&meta, WarningId::kNoRank, "no rank again");
  DropWarnings(&meta, WarningId::kNoRank);
  EXPECT_EQ(meta.warnings, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(meta.warning_ids.empty());
  DropWarnings(&meta, WarningId::kNoRank);  // none left: nothing changes
  EXPECT_EQ(meta.warnings, (std::vector<std::string>{"a", "b"}));
}

TEST(WarningIdTest, AWarningAddedAfterADropIsFoundAtItsNewPlace) {
  TraceMetadata meta;
  AddWarning(&meta, WarningId::kNoRank, "no rank");
  meta.warnings.push_back("a");
  DropWarnings(&meta, WarningId::kNoRank);
  AddWarning(&meta, WarningId::kNoRank, "no rank");
  ASSERT_EQ(meta.warnings, (std::vector<std::string>{"a", "no rank"}));
  EXPECT_TRUE(IsWarning(meta, 1, WarningId::kNoRank));
  EXPECT_FALSE(IsWarning(meta, 0, WarningId::kNoRank));
}

}  // namespace
}  // namespace tuneprof

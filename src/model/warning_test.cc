#include "model/warning.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneprof {
namespace {

TEST(WarningLinesTest, ALineIsFoundByItsIdNotItsWords) {
  const std::vector<IdentifiedWarning> ids = {{WarningId::kMissingTimeline, 1}};
  EXPECT_TRUE(HasWarning(ids, WarningId::kMissingTimeline));
  EXPECT_FALSE(HasWarning(ids, WarningId::kNoRank));
  EXPECT_TRUE(IsWarningLine(ids, 1, WarningId::kMissingTimeline));
  EXPECT_FALSE(IsWarningLine(ids, 0, WarningId::kMissingTimeline));
}

TEST(WarningLinesTest, DroppingLinesKeepsTheOthersAndTheirIds) {
  std::vector<std::string> lines = {"a", "no rank", "b", "no rank again", "no timeline"};
  std::vector<IdentifiedWarning> ids = {
      {WarningId::kNoRank, 1}, {WarningId::kNoRank, 3}, {WarningId::kMissingTimeline, 4}};
  DropWarningLines(&lines, &ids, WarningId::kNoRank);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "no timeline"}));
  EXPECT_EQ(ids, (std::vector<IdentifiedWarning>{{WarningId::kMissingTimeline, 2}}));
  DropWarningLines(&lines, &ids, WarningId::kNoRank);  // none left: nothing changes
  EXPECT_EQ(lines.size(), 3u);
}

TEST(WarningLinesTest, AppendedIdsFollowTheirLines) {
  std::vector<IdentifiedWarning> into = {{WarningId::kNoRank, 0}};
  AppendWarningIds({{WarningId::kCutOff, 0}, {WarningId::kNoRank, 2}}, 5, &into);
  EXPECT_EQ(into, (std::vector<IdentifiedWarning>{
                      {WarningId::kNoRank, 0}, {WarningId::kCutOff, 5}, {WarningId::kNoRank, 7}}));
}

}  // namespace
}  // namespace tuneprof

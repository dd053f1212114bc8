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

// A run's first line of a kind is kept whole where the others fold into one line counting them.
TEST(WarningLinesTest, DroppingAllButTheFirstKeepsTheFirstInTheLinesOrder) {
  std::vector<std::string> lines = {"no timeline 0", "a", "no timeline 1", "no timeline 2"};
  std::vector<IdentifiedWarning> ids = {{WarningId::kMissingTimeline, 3},
                                        {WarningId::kMissingTimeline, 0},
                                        {WarningId::kCutOff, 1},
                                        {WarningId::kMissingTimeline, 2}};
  EXPECT_EQ(WarningLinesWithId(ids, WarningId::kMissingTimeline), (std::vector<size_t>{0, 2, 3}));
  DropWarningLines(&lines, &ids, WarningId::kMissingTimeline, 1);
  EXPECT_EQ(lines, (std::vector<std::string>{"no timeline 0", "a"}));
  EXPECT_EQ(ids, (std::vector<IdentifiedWarning>{{WarningId::kMissingTimeline, 0}, {WarningId::kCutOff, 1}}));
  DropWarningLines(&lines, &ids, WarningId::kMissingTimeline, 1);  // the one kept stays
  EXPECT_EQ(lines.size(), 2u);
}

TEST(WarningLinesTest, AppendedIdsFollowTheirLines) {
  std::vector<IdentifiedWarning> into = {{WarningId::kNoRank, 0}};
  AppendWarningIds({{WarningId::kCutOff, 0}, {WarningId::kNoRank, 2}}, 5, &into);
  EXPECT_EQ(into, (std::vector<IdentifiedWarning>{
                      {WarningId::kNoRank, 0}, {WarningId::kCutOff, 5}, {WarningId::kNoRank, 7}}));
}

}  // namespace
}  // namespace tuneprof

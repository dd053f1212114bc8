#include "base/rank_ranges.h"

#include <gtest/gtest.h>

#include <vector>

namespace tuneprof {
namespace {

TEST(RankRangesTest, JoinConsecutiveIds) {
  EXPECT_EQ(RankRanges(std::vector<int64_t>{}), "");
  EXPECT_EQ(RankRanges(std::vector<int64_t>{3}), "3");
  EXPECT_EQ(RankRanges(std::vector<int64_t>{0, 1}), "0,1");
  EXPECT_EQ(RankRanges(std::vector<int64_t>{5, 0, 1, 2, 2, 9, 7, 8}), "0-2,5,7-9");
  std::vector<int64_t> all_but_three;
  for (int64_t r = 0; r < 1024; ++r) {
    if (r != 3) all_but_three.push_back(r);
  }
  EXPECT_EQ(RankRanges(all_but_three), "0-2,4-1023");
}

TEST(ParseRankListTest, ReadsEitherBracketPairAndRefusesAnythingElse) {
  EXPECT_EQ(ParseRankList("[0, 1, 2]", "[]"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(ParseRankList("(8, 9,10)", "()"), (std::vector<int64_t>{8, 9, 10}));
  EXPECT_TRUE(ParseRankList("(0, 1)", "[]").empty());  // the other pair is not a rank list
  EXPECT_TRUE(ParseRankList("[0, x]", "[]").empty());
  EXPECT_TRUE(ParseRankList("[-1]", "[]").empty());
  EXPECT_TRUE(ParseRankList("[99999999999999999999999]", "[]").empty());  // beyond any job, never overflowing
  EXPECT_TRUE(ParseRankList("", "[]").empty());
}

}  // namespace
}  // namespace tuneprof

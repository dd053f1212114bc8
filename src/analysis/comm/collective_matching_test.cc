#include "analysis/comm/collective_matching.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/comm/collective_for_test.h"

namespace tuneprof {
namespace {

// `members` is kept by view, as the importer's pool keeps it: a literal outlives the test.
Collective MatchingKernel(CollectiveType type, std::string group, std::string_view members, int64_t sequence,
                          P2pDirection direction = P2pDirection::kUnknown) {
  Collective c = comm_test::CollectiveAt(type, std::move(group), sequence);
  c.group_ranks = members;
  c.direction = direction;
  return c;
}

// A two-rank group's send / recv and every other collective pair by (group, sequence); the send / recv of a
// communicator of three ranks by its peer: rank 1's receive from rank 0 and its send to rank 2 are two
// transfers with two ranks each, not one of three.
TEST(CollectiveMatchingTest, SequenceForCollectivesPeerForLargerCommunicators) {
  std::vector<RankCommunication> ranks(3);
  for (int64_t r = 0; r < 3; ++r) ranks[static_cast<size_t>(r)].rank = r;
  constexpr std::string_view chain = "[0, 1, 2]";
  ranks[0].collectives = {MatchingKernel(CollectiveType::kAllReduce, "0", chain, 0),
                          MatchingKernel(CollectiveType::kSendRecv, "7", chain, 0, P2pDirection::kSend)};
  ranks[1].collectives = {MatchingKernel(CollectiveType::kAllReduce, "0", chain, 0),
                          MatchingKernel(CollectiveType::kSendRecv, "7", chain, 0, P2pDirection::kRecv),
                          MatchingKernel(CollectiveType::kSendRecv, "7", chain, 1, P2pDirection::kSend)};
  ranks[2].collectives = {MatchingKernel(CollectiveType::kAllReduce, "0", chain, 0),
                          MatchingKernel(CollectiveType::kSendRecv, "7", chain, 0, P2pDirection::kRecv)};
  const auto matched = MatchAcrossRanks(ranks);
  ASSERT_EQ(matched.size(), 3u);
  const auto all_reduce = matched.find(CollectiveMatchKey{"0", 0, kNoId, kNoId});
  ASSERT_NE(all_reduce, matched.end());
  EXPECT_EQ(all_reduce->second.size(), 3u);
  EXPECT_FALSE(all_reduce->second[0].by_peer);
  for (const auto& [low, high] : {std::pair<int64_t, int64_t>{0, 1}, {1, 2}}) {
    const auto pair = matched.find(CollectiveMatchKey{"7", 0, low, high});
    ASSERT_NE(pair, matched.end());
    ASSERT_EQ(pair->second.size(), 2u);
    EXPECT_TRUE(pair->second[0].by_peer);
    EXPECT_EQ(pair->second[0].rank_index, static_cast<size_t>(low));
    EXPECT_EQ(pair->second[1].rank_index, static_cast<size_t>(high));
  }
}

}  // namespace
}  // namespace tuneprof

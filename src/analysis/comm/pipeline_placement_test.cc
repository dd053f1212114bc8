#include "analysis/comm/pipeline_placement.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/comm/pipeline_ranks_for_test.h"
#include "analysis/comm/pipeline_stages.h"

namespace tuneprof {
namespace {

using pipeline_ranks::GpuRank;
using pipeline_ranks::Rank;

// The pp groups of parallel_group_info place every rank with steps: its position and the group's size.
TEST(PipelinePlacementTest, NamedGroupsPlaceTheRanksWithSteps) {
  std::vector<RankCommunication> ranks = {Rank(0, 60, 110, 40), Rank(1, 70, 120, 50), Rank(2, 100, 160, 10)};
  ranks[1].steps = 0;
  bool inferred = true;
  const std::map<size_t, StagePlace> places = PlaceRanksInPipeline(ranks, &inferred);
  EXPECT_FALSE(inferred);
  ASSERT_EQ(places.size(), 2u);
  EXPECT_EQ(places.at(0).stage, 0);
  EXPECT_EQ(places.at(2).stage, 1);
  EXPECT_EQ(places.at(2).size, 2);
  EXPECT_EQ(places.at(2).role, "pp");
  EXPECT_FALSE(places.at(2).chain);
}

// Without a named group, who sends to whom over a two-rank group chains the ranks: the sender is stage 0.
TEST(PipelinePlacementTest, ChainsWhereNoGroupNamesThePipeline) {
  const RankCommunication sender = GpuRank(4, 100, "7", "[4, 5]", P2pDirection::kSend, {{0, 32}});
  const RankCommunication receiver = GpuRank(5, 300, "7", "[4, 5]", P2pDirection::kRecv, {{30, 2}});
  bool inferred = false;
  const std::map<size_t, StagePlace> places = PlaceRanksInPipeline({receiver, sender}, &inferred);
  EXPECT_TRUE(inferred);
  ASSERT_EQ(places.size(), 2u);
  EXPECT_EQ(places.at(1).stage, 0);
  EXPECT_EQ(places.at(0).stage, 1);
  EXPECT_EQ(places.at(0).role, "p2p chain");
  EXPECT_TRUE(places.at(0).chain);
  EXPECT_EQ(InferredPipelineGroups({receiver, sender}), (std::set<std::string>{"7"}));
}

// Both ranks send first and then receive (an exchange, as sequence or context parallelism posts it): no chain.
TEST(PipelinePlacementTest, ExchangesThatBothSendFirstAreNoChain) {
  RankCommunication a = GpuRank(0, 100, "7", "[0, 1]", P2pDirection::kSend, {{0, 30}, {40, 5}});
  RankCommunication b = GpuRank(1, 100, "7", "[0, 1]", P2pDirection::kSend, {{20, 10}, {40, 5}});
  a.collectives[1].direction = P2pDirection::kRecv;
  b.collectives[1].direction = P2pDirection::kRecv;
  EXPECT_FALSE(AnalyzePipelineStages({a, b}));
  EXPECT_TRUE(InferredPipelineGroups({a, b}).empty());
  // Unknown directions (a batched send and receive) tell nothing either.
  a.collectives[1].direction = P2pDirection::kUnknown;
  b.collectives[1].direction = P2pDirection::kUnknown;
  EXPECT_FALSE(AnalyzePipelineStages({a, b}));
}

}  // namespace
}  // namespace tuneprof

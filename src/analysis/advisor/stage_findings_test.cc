// A computation finding says which pipeline stages' slowest ranks it fired on, as msprof-analyze's
// per-stage computation checks would report it.
#include "analysis/advisor/stage_findings.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

RankCommunication Rank(int64_t id, int64_t computing_ns) {
  RankCommunication r;
  r.rank = id;
  r.steps = 2;
  r.computing_ns = computing_ns;
  return r;
}

PipelineAnalysis TwoStages() {
  PipelineAnalysis p;
  PipelineStage s0, s1;
  s0.stage = 0;
  s0.ranks = {0, 1};
  s1.stage = 1;
  s1.ranks = {2, 3};
  p.stages = {s0, s1};
  return p;
}

Finding On(const char* id, std::vector<int64_t> ranks) {
  Finding f;
  f.id = id;
  f.ranks = std::move(ranks);
  return f;
}

TEST(StageFindings, TheSlowestRankOfEachStageComputesMost) {
  const std::vector<RankCommunication> ranks = {Rank(0, 100), Rank(1, 300), Rank(2, 500), Rank(3, 400)};
  std::vector<const RankCommunication*> comm;
  for (const RankCommunication& r : ranks) comm.push_back(&r);
  const std::vector<StageSlowestRank> slowest = SlowestRankOfEachStage(TwoStages(), comm);
  ASSERT_EQ(slowest.size(), 2u);
  EXPECT_EQ(slowest[0].rank, 1);
  EXPECT_DOUBLE_EQ(slowest[0].computing_ns_per_step, 150);
  EXPECT_EQ(slowest[1].rank, 2);

  std::vector<Finding> findings = {On("compute.operator_efficiency", {1, 2, 3}), On("compute.block_dim", {0}),
                                   On("communication.exposed", {1, 2}), On("fusion.cast_chain", {2, 3})};
  findings[0].evidence_rank = 3;
  NameStagesOfFindings(TwoStages(), comm, &findings);
  ASSERT_EQ(findings[0].evidence.size(), 2u);
  EXPECT_EQ(findings[0].evidence[0].label, "pipeline_stage_slowest_ranks");
  EXPECT_EQ(findings[0].evidence[0].text, "stage 0: rank 1; stage 1: rank 2");
  EXPECT_EQ(findings[0].evidence[1].label, "pipeline_stage");  // of its evidence rank, 3
  EXPECT_EQ(findings[0].evidence[1].number, 1.0);
  // Fired on no stage's slowest rank: each stage's slowest is named as silent.
  ASSERT_EQ(findings[1].evidence.size(), 1u);
  EXPECT_EQ(findings[1].evidence[0].label, "pipeline_stage_slowest_ranks_silent");
  EXPECT_EQ(findings[1].evidence[0].text, "stage 0: rank 1; stage 1: rank 2");
  EXPECT_TRUE(findings[2].evidence.empty());  // not a computation check
  ASSERT_EQ(findings[3].evidence.size(), 2u);
  EXPECT_EQ(findings[3].evidence[0].text, "stage 1: rank 2");
  EXPECT_EQ(findings[3].evidence[1].text, "stage 0: rank 1");
}

TEST(StageFindings, RanksWithoutStepsAreNoStagesSlowest) {
  RankCommunication none = Rank(0, 100);
  none.steps = 0;
  EXPECT_TRUE(SlowestRankOfEachStage(TwoStages(), {&none, nullptr}).empty());
}

}  // namespace
}  // namespace tuneprof

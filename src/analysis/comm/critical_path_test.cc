#include "analysis/comm/critical_path.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace tuneprof {
namespace {

// Times in µs.
CriticalLink MakeCriticalLink(std::optional<int64_t> step, int64_t sequence, int64_t last_rank, int64_t arrival,
                              int64_t compute, int64_t host, int64_t transfer, int64_t held_up) {
  CriticalLink link;
  link.step = step;
  link.group = "0";
  link.sequence = sequence;
  link.type = CollectiveType::kAllReduce;
  link.last_rank = last_rank;
  link.aligned_arrival_ns = arrival * 1000;
  link.lead_in_causes[static_cast<size_t>(WaitCause::kCompute)] = compute * 1000;
  link.lead_in_causes[static_cast<size_t>(WaitCause::kHostPause)] = host * 1000;
  link.lead_in_ns = (compute + host) * 1000;
  link.transfer_ns = transfer * 1000;
  link.held_up_ns = held_up * 1000;
  return link;
}

// Step 3 has two all-reduces (given out of arrival order): rank 7 arrived last at both, holding them up
// 500 and 300; rank 2 arrived last at the one of step 4 without holding it up. The group's first
// collective has no step.
TEST(CriticalPathTest, ChainsTheLastArrivalsWorkAndTheCollectivesPerStep) {
  const std::vector<CriticalPathStep> steps = CriticalPathPerStep({
      MakeCriticalLink(3, 2, 7, 5000, 1500, 500, 200, 300),
      MakeCriticalLink(3, 1, 7, 2000, 1000, 800, 100, 500),
      MakeCriticalLink(4, 3, 2, 9000, 900, 0, 100, 0),
      MakeCriticalLink(std::nullopt, 0, 0, 0, 0, 0, 50, 0),
  });
  ASSERT_EQ(steps.size(), 3u);
  const CriticalPathStep& three = steps[0];
  EXPECT_EQ(three.step, 3);
  ASSERT_EQ(three.segments.size(), 4u);
  EXPECT_EQ(three.segments[0].rank, 7);
  EXPECT_EQ(three.segments[0].what, "before allreduce (group 0 #1): compute 1.000 ms, host_pause 0.800 ms");
  EXPECT_EQ(three.segments[1].rank, kNoId);
  EXPECT_EQ(three.segments[1].what, "allreduce (group 0 #1)");
  EXPECT_EQ(three.segments[2].what, "before allreduce (group 0 #2): compute 1.500 ms, host_pause 0.500 ms");
  EXPECT_EQ(three.path_ns, (1800 + 100 + 2000 + 200) * 1000);
  EXPECT_EQ(three.late_rank, 7);
  EXPECT_EQ(three.on_time_gain_ns, 800 * 1000);
  EXPECT_EQ(steps[1].step, 4);
  EXPECT_FALSE(steps[1].late_rank.has_value());  // last, but on time
  EXPECT_EQ(steps[1].on_time_gain_ns, 0);
  EXPECT_FALSE(steps[2].step.has_value());
  ASSERT_EQ(steps[2].segments.size(), 1u);  // no lead-in: the collective alone
}

// A send / recv in `group` between `ranks`, the last of them arriving at `arrival` after `compute` of work
// (times in µs).
CriticalLink P2p(std::string group, int64_t sequence, std::vector<int64_t> ranks, int64_t arrival, int64_t compute,
                 int64_t transfer) {
  CriticalLink link = MakeCriticalLink(1, sequence, ranks.back(), arrival, compute, 0, transfer, 0);
  link.group = std::move(group);
  link.type = CollectiveType::kSendRecv;
  link.ranks = std::move(ranks);
  return link;
}

// Two data-parallel replicas run their pipelines at the same time in disjoint groups: each replica's chain
// is 2 x (30 + 10) = 80 µs of a 90 µs step, and the path is one of them, not both one after the other.
TEST(CriticalPathTest, OverlappingDisjointGroupsAreNotChained) {
  const std::vector<CriticalPathStep> steps = CriticalPathPerStep({
      P2p("10", 0, {0, 2}, 30, 30, 10),
      P2p("11", 0, {1, 3}, 35, 30, 10),
      P2p("10", 1, {0, 2}, 80, 30, 10),
      P2p("11", 1, {1, 3}, 85, 30, 10),
  });
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].path_ns, 80 * 1000);
  ASSERT_EQ(steps[0].segments.size(), 4u);
  EXPECT_EQ(steps[0].segments[1].what, "sendrecv (group 10 #0)");
  EXPECT_EQ(steps[0].segments[1].rank, kNoId);
  EXPECT_EQ(steps[0].segments[1].ranks, (std::vector<int64_t>{0, 2}));  // the pair, not "every rank"
  EXPECT_EQ(steps[0].segments[3].what, "sendrecv (group 10 #1)");
}

// A collective of another group that begins on a shared rank after one ended follows it; a send / recv
// matched over three ranks (paired by order, not by peer) is left off the path.
TEST(CriticalPathTest, ChainsAcrossGroupsThroughASharedRankAndSkipsOrderPairedP2p) {
  CriticalLink allreduce = MakeCriticalLink(1, 0, 2, 100, 40, 0, 5, 0);
  allreduce.group = "50";
  allreduce.ranks = {2, 3};
  const std::vector<CriticalPathStep> steps = CriticalPathPerStep({
      P2p("10", 0, {0, 2}, 50, 50, 10),
      P2p("12", 0, {0, 2, 4}, 60, 500, 10),
      allreduce,
  });
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].path_ns, (50 + 10 + 40 + 5) * 1000);
  ASSERT_EQ(steps[0].segments.size(), 4u);
  EXPECT_EQ(steps[0].segments[2].what, "before allreduce (group 50 #0): compute 0.040 ms");
  // A step with only order-paired send / recv has no path to show.
  EXPECT_TRUE(CriticalPathPerStep({P2p("12", 0, {0, 2, 4}, 60, 50, 10)}).empty());
}

// A pipeline step of two stages (rank 0, then rank 2; ranks 2 and 3 all-reduce at the end), times in µs from
// the step's start on every rank: rank 0 computes 50 and hands micro-batch 0 over (transfer 1), rank 2
// computes 100 and receives micro-batch 1 (1), computes 100 and all-reduces (5). Rank 2's step is 257 µs.
// The first hand-off and the all-reduce are their groups' first collectives, so neither has a measured
// lead-in: the path measures them from the step's start and from rank 2's previous hand-off.
TEST(CriticalPathTest, APipelineStepsPathIsAsLongAsTheStepOfTheRankThatEndsIt) {
  CriticalLink first = P2p("10", 0, {0, 2}, 50, 0, 1);
  first.last_rank = 0;
  first.lead_in_from = LeadInFrom::kUnmeasured;
  CriticalLink allreduce = MakeCriticalLink(1, 0, 2, 252, 0, 0, 5, 0);
  allreduce.group = "51";
  allreduce.ranks = {2, 3};
  allreduce.lead_in_from = LeadInFrom::kUnmeasured;
  const std::vector<CriticalLink> links = {first, P2p("10", 1, {0, 2}, 151, 100, 1), allreduce};
  const RankStepWindows windows = {{{0, 1}, {0, 160'000}}, {{2, 1}, {0, 257'000}}, {{3, 1}, {0, 257'000}}};
  const std::vector<CriticalPathStep> steps = CriticalPathPerStep(links, windows);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].path_ns, 257 * 1000);
  ASSERT_EQ(steps[0].segments.size(), 6u);
  EXPECT_EQ(steps[0].segments[0].rank, 0);
  EXPECT_EQ(steps[0].segments[0].ns, 50 * 1000);
  EXPECT_EQ(steps[0].segments[0].what,
            "before sendrecv (group 10 #0): 0.050 ms since the rank's step began (the group's first collective: not "
            "split by cause)");
  EXPECT_EQ(steps[0].segments[4].rank, 2);
  EXPECT_EQ(steps[0].segments[4].ns, 100 * 1000);
  EXPECT_EQ(steps[0].segments[4].what,
            "before allreduce (group 51 #0): 0.100 ms since its previous collective (the group's first collective: "
            "not split by cause)");
  // Without the steps' windows the first lead-in is unknown: the path starts at the first hand-off.
  EXPECT_EQ(CriticalPathPerStep(links)[0].path_ns, 207 * 1000);
  // Rank 3 works 5 µs after the all-reduce: its step ends the path. It began its step 10 µs after the others
  // (ranks' steps staggered): the path is cut to its step.
  RankStepWindows later = windows;
  later[{3, 1}] = StepWindow{10'000, 262'000};
  const CriticalPathStep tail = CriticalPathPerStep(links, later)[0];
  EXPECT_EQ(tail.segments.back().rank, 3);
  EXPECT_EQ(tail.segments.back().what, "after allreduce (group 51 #0): its work to the end of its step");
  EXPECT_EQ(tail.segments.back().ns, 5'000);
  EXPECT_EQ(tail.path_ns, 252'000);
}

// Collectives of one group that overlap (several in flight) chain, but the path stays within the step's
// span: from the first lead-in's start (0) to the last collective's end (70 µs).
TEST(CriticalPathTest, PathIsNeverLongerThanTheStepSpan) {
  const std::vector<CriticalPathStep> steps = CriticalPathPerStep({
      MakeCriticalLink(1, 0, 0, 40, 40, 0, 20, 0),
      MakeCriticalLink(1, 1, 0, 50, 40, 0, 20, 0),
  });
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].path_ns, 70 * 1000);
}

// Two stages of one rank each; stage 1 computes 40 ms a step, stage 0 20 ms (times in ms).
PipelineAnalysis TwoStages() {
  PipelineAnalysis p;
  for (int64_t stage : {0, 1}) {
    PipelineStage s;
    s.stage = stage;
    s.ranks = {stage};
    s.bubble_ns_per_step = stage == 0 ? 30e6 : 10e6;
    p.stages.push_back(s);
  }
  p.slowest_stage = 1;
  return p;
}

RankBreakdown StagedRank(int64_t rank, std::vector<std::array<int64_t, 3>> computing_bubble_wall_ms, bool bubbles) {
  RankBreakdown r;
  r.rank = rank;
  int64_t n = 0;
  for (const auto& [computing, bubble, wall] : computing_bubble_wall_ms) {
    StepBreakdown s;
    s.step = ++n;
    s.computing_ns = computing * 1'000'000;
    s.bubble_ns = bubbles ? bubble * 1'000'000 : 0;
    s.wall_ns = wall * 1'000'000;
    r.total.bubble_ns += s.bubble_ns;
    r.steps.push_back(s);
  }
  return r;
}

// The pipeline path over rank 0 (stage 0) and rank 1 (stage 1) with their bubbles, each step
// {computing, bubble, wall} ms.
std::vector<PipelinePathStep> PathOfTwoRanks(const PipelineAnalysis& pipeline,
                                             std::vector<std::array<int64_t, 3>> rank0_steps,
                                             std::vector<std::array<int64_t, 3>> rank1_steps) {
  return PipelineCriticalPath(
      pipeline, {StagedRank(0, std::move(rank0_steps), true), StagedRank(1, std::move(rank1_steps), true)});
}

TEST(CriticalPathTest, PipelineStepsRunThroughTheStageThatComputesMost) {
  const std::vector<PipelinePathStep> path =
      PathOfTwoRanks(TwoStages(), {{20, 30, 52}, {20, 25, 47}}, {{40, 10, 52}, {18, 28, 47}});
  ASSERT_EQ(path.size(), 2u);
  const PipelinePathStep& first = path[0];
  EXPECT_EQ(first.step, 1);
  EXPECT_EQ(first.bounding_stage, 1);
  EXPECT_EQ(first.bounding_ranks, (std::vector<int64_t>{1}));
  EXPECT_EQ(first.path_ns, 52'000'000);
  ASSERT_EQ(first.segments.size(), 3u);  // computing 40, fill / drain 10, the rest 2
  EXPECT_EQ(first.segments[0].ns, 40'000'000);
  EXPECT_EQ(first.segments[1].ns, 10'000'000);
  EXPECT_EQ(first.segments[2].ns, 2'000'000);
  ASSERT_EQ(first.waits.size(), 1u);
  EXPECT_EQ(first.waits[0].bubble_ns, 30'000'000);
  EXPECT_EQ(first.waits[0].for_bounding_ns, 20'000'000);  // 40 - 20
  EXPECT_EQ(first.waits[0].fill_drain_ns, 10'000'000);
  EXPECT_EQ(first.balanced_gain_ns, 12'500'000);  // (40 - 30) x (40 + 10) / 40
  // Step 2: stage 0 computes more, so it bounds that step; stage 1's bubble is under the difference.
  EXPECT_EQ(path[1].bounding_stage, 0);
  EXPECT_EQ(path[1].waits[0].for_bounding_ns, 2'000'000);
}

// Step 1: stage 1 computes 200 ms, stage 0 199 ms, within kStageTieShare (0.5 %): the longer step, stage
// 0's, bounds it, as the run's verdict does. Step 2: 190 ms against 200 is no tie: stage 1 bounds it.
TEST(CriticalPathTest, StagesThatTieOnWorkAreToldApartByTheirStep) {
  PipelineAnalysis pipeline = TwoStages();
  pipeline.work_is_computing = true;
  const std::vector<PipelinePathStep> path =
      PathOfTwoRanks(pipeline, {{199, 30, 260}, {190, 30, 260}}, {{200, 10, 250}, {200, 10, 250}});
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].bounding_stage, 0);
  EXPECT_EQ(path[0].path_ns, 260'000'000);
  EXPECT_EQ(path[1].bounding_stage, 1);
}

// 1F1B: stage 0 runs the first forward before stage 1 starts and the last backward after it ends, so its
// step (60 ms) is longer than the bounding stage's (52): the path is the longest step, the 8 ms beyond
// stage 1's step charged to the schedule's fill / drain. A re-timed what-if (pipeline_retime.h) gives the
// step's gain.
TEST(CriticalPathTest, APipelinePathIsAtLeastTheLongestStep) {
  PipelineAnalysis pipeline = TwoStages();
  pipeline.balanced_gain_ns_by_step = {{1, 7e6}};
  const std::vector<PipelinePathStep> path =
      PathOfTwoRanks(pipeline, {{20, 30, 60}, {20, 30, 50}}, {{40, 10, 52}, {40, 10, 52}});
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].bounding_stage, 1);
  EXPECT_EQ(path[0].path_ns, 60'000'000);
  EXPECT_EQ(path[0].longest_rank, 0);
  ASSERT_EQ(path[0].segments.size(), 4u);
  EXPECT_EQ(path[0].segments[3].stage, 0);
  EXPECT_EQ(path[0].segments[3].ns, 8'000'000);
  EXPECT_NE(path[0].segments[3].what.find("fill / drain"), std::string::npos);
  int64_t sum = 0;
  for (const PipelineSegment& seg : path[0].segments) sum += seg.ns;
  EXPECT_EQ(sum, path[0].path_ns);
  EXPECT_EQ(path[0].balanced_gain_ns, 7'000'000);
  // Step 2: no rank longer than the bounding stage; no re-timed gain for it: the formula's.
  EXPECT_EQ(path[1].path_ns, 52'000'000);
  EXPECT_EQ(path[1].longest_rank, 1);
  EXPECT_EQ(path[1].segments.size(), 3u);
  EXPECT_EQ(path[1].balanced_gain_ns, 12'500'000);
}

TEST(CriticalPathTest, PipelineBubblesFromTheStageWhereRanksHaveNone) {
  // GPU ranks: no bubble in the step tables; the stage's mean bubble per step stands for it.
  const std::vector<RankBreakdown> ranks = {StagedRank(0, {{20, 0, 52}}, false), StagedRank(1, {{40, 0, 52}}, false)};
  const std::vector<PipelinePathStep> path = PipelineCriticalPath(TwoStages(), ranks);
  ASSERT_EQ(path.size(), 1u);
  EXPECT_EQ(path[0].segments[1].ns, 10'000'000);
  EXPECT_EQ(path[0].waits[0].bubble_ns, 30'000'000);
  // A step only one stage has is no pipeline step.
  EXPECT_TRUE(PipelineCriticalPath(TwoStages(), {ranks[0]}).empty());
}

}  // namespace
}  // namespace tuneprof

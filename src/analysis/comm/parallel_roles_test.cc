#include "analysis/comm/parallel_roles.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text_cases.h"

namespace tuneprof {
namespace {

TEST(ParallelRolesTest, LabelsAsMegatronTorchtitanAndTorchNpuWriteThem) {
  const test_support::TextCase<std::string_view> kCases[] = {
      {"TENSOR_MODEL_PARALLEL_GROUP", "tp"},
      {"PIPELINE_MODEL_PARALLEL_GROUP", "pp"},
      {"DATA_PARALLEL_GROUP_WITH_CP", "dp"},
      {"DATA_PARALLEL_GROUP_GLOO", "dp"},
      {"CONTEXT_PARALLEL_GROUP", "cp"},
      {"EXPERT_MODEL_PARALLEL_GROUP", "ep"},
      {"EXPERT_TENSOR_PARALLEL_GROUP", "tp"},
      {"mesh_dp_shard", "dp"},
      {"mesh_tp", "tp"},
      {"ep", "ep"},
      {"mp", "tp"},
      {"exp", "ep"},
      {"dp_modulo_exp", "dp"},
      {"EMBEDDING_GROUP", ""},
      {"MODEL_PARALLEL_GROUP", ""},
      {"default_pg", ""},
  };
  test_support::ExpectEachCase(RoleFromLabel, kCases);
  EXPECT_TRUE(IsWorldLabel("default_pg"));
  EXPECT_TRUE(IsWorldLabel("default_group"));
  EXPECT_FALSE(IsWorldLabel("tp"));
}

CommGroupSummary Group(std::string label, std::vector<int64_t> members, CollectiveType busiest) {
  CommGroupSummary g;
  g.source = "timeline";
  g.label = std::move(label);
  g.global_ranks = members;
  g.ranks = std::move(members);
  g.collectives = 4;
  g.busiest_type = busiest;
  return g;
}

// `group` alone given its role, in a run of `input_world` ranks (0: as many as the group lists).
CommGroupSummary RoleAlone(CommGroupSummary group, int64_t input_world = 0) {
  std::vector<CommGroupSummary> groups = {std::move(group)};
  AssignRoles(&groups, nullptr, input_world);
  return groups.front();
}

TEST(ParallelRolesTest, NamedRolesAreNotInferred) {
  const CommGroupSummary g = RoleAlone(Group("TENSOR_MODEL_PARALLEL_GROUP", {0, 1}, CollectiveType::kAllReduce));
  EXPECT_EQ(g.role, "tp");
  EXPECT_FALSE(g.role_inferred);
}

// Two of eight ranks with communication data (msprof-analyze's cluster output names one group, (0, 1)):
// the group is no world group of the run, whatever the groups alone would make the world.
TEST(ParallelRolesTest, TheInputRanksBoundTheWorld) {
  const CommGroupSummary alone = RoleAlone(Group("", {0, 1}, CollectiveType::kBroadcast));
  EXPECT_EQ(alone.role_why, "the world group: no single parallel dimension");
  const CommGroupSummary of_eight = RoleAlone(Group("", {0, 1}, CollectiveType::kBroadcast), 8);
  EXPECT_NE(of_eight.role_why.find("consecutive ranks within a node"), std::string::npos) << of_eight.role_why;
}

// TP2 x DP2 x PP2 over 8 ranks, Megatron's order (tp innermost, then dp, then pp), groups without names.
TEST(ParallelRolesTest, UnnamedGroupsFromLayoutAndPrimitive) {
  std::vector<CommGroupSummary> groups = {
      Group("undefined", {0, 1}, CollectiveType::kAllReduce),                      // consecutive, in a node: tp
      Group("undefined", {0, 2}, CollectiveType::kAllReduce),                      // stride 2, all-reduce: dp
      Group("undefined", {0, 4}, CollectiveType::kSendRecv),                       // p2p: pp
      Group("", {0, 1, 2, 3}, CollectiveType::kAllToAll),                          // all-to-all: ep
      Group("EMBEDDING_GROUP", {0, 4}, CollectiveType::kAllReduce),                // named, several dimensions: none
      Group("default_pg", {0, 1, 2, 3, 4, 5, 6, 7}, CollectiveType::kAllReduce)};  // world, not alone: none
  AssignRoles(&groups);
  EXPECT_EQ(groups[0].role, "tp");
  EXPECT_TRUE(groups[0].role_inferred);
  EXPECT_EQ(groups[1].role, "dp");
  EXPECT_EQ(groups[2].role, "pp");
  EXPECT_EQ(groups[3].role, "ep");
  EXPECT_EQ(groups[4].role, "");
  EXPECT_EQ(groups[5].role, "");
  EXPECT_FALSE(groups[5].role_why.empty());
}

// Tensor parallel placed outermost: its pairs have a stride as data parallel's do, and reduce per layer.
// The busier stride is tp where it runs twice the collectives per rank of the other; within that, both dp.
TEST(ParallelRolesTest, TheBusierOfTwoStridesIsTensorParallel) {
  std::vector<CommGroupSummary> groups;
  for (int64_t r : {0, 1, 2, 3}) groups.push_back(Group("undefined", {r, r + 4}, CollectiveType::kAllReduce));
  for (int64_t r : {0, 1, 4, 5}) groups.push_back(Group("undefined", {r, r + 2}, CollectiveType::kAllReduce));
  for (size_t i = 0; i < 4; ++i) groups[i].collectives = 48;  // 24 a rank: per layer, forward and backward
  for (size_t i = 4; i < 8; ++i) groups[i].collectives = 12;  // 6 a rank: once a step per bucket
  std::vector<CommGroupSummary> close = groups;
  AssignRoles(&groups);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(groups[i].role, i < 4 ? "tp" : "dp") << i;
    EXPECT_TRUE(groups[i].role_inferred) << i;
  }
  EXPECT_NE(groups[0].role_why.find("every 4th rank reduces 24 collectives per rank, 4x"), std::string::npos)
      << groups[0].role_why;
  for (size_t i = 4; i < 8; ++i) close[i].collectives = 30;  // 15 a rank: not twice apart
  AssignRoles(&close);
  for (const CommGroupSummary& g : close) EXPECT_EQ(g.role, "dp");
}

// With the stage inference's groups: a timeline group of send / recv is pp only where its p2p chains stages,
// so that pp always comes with a stage table; one that chains none gets no role (not tp for its consecutive
// ranks either). HCCL's groups, which the stage inference does not read, keep the primitive's role.
TEST(ParallelRolesTest, SendRecvIsPipelineWhereTheStagesComeFromIt) {
  CommGroupSummary chained = Group("undefined", {0, 1}, CollectiveType::kSendRecv);
  chained.group = "10";
  CommGroupSummary exchange = Group("undefined", {2, 3}, CollectiveType::kSendRecv);
  exchange.group = "11";
  CommGroupSummary hccl = Group("", {}, CollectiveType::kSendRecv);
  hccl.source = "communication.json";
  hccl.group = "11";
  std::vector<CommGroupSummary> groups = {chained, exchange, hccl};
  const std::set<std::string> pipeline_groups = {"10"};
  AssignRoles(&groups, &pipeline_groups);
  EXPECT_EQ(groups[0].role, "pp");
  EXPECT_TRUE(groups[0].role_inferred);
  EXPECT_EQ(groups[1].role, "");
  EXPECT_NE(groups[1].role_why.find("chain no pipeline stages"), std::string::npos);
  EXPECT_EQ(groups[2].role, "pp");
}

TEST(ParallelRolesTest, TheWorldGroupAloneIsDataParallel) {
  const CommGroupSummary g = RoleAlone(Group("default_pg", {0, 1}, CollectiveType::kAllReduce));
  EXPECT_EQ(g.role, "dp");
  EXPECT_TRUE(g.role_inferred);
}

TEST(ParallelRolesTest, AKernelNamedSendRecvWithoutArgumentsIsNoPipeline) {
  CommGroupSummary g = Group("", {}, CollectiveType::kSendRecv);
  g.ranks = {0, 1};  // the input ranks; the members are unknown
  EXPECT_EQ(RoleAlone(g).role, "");
}

// An HCCL group whose hash profiler_metadata.json does not name: its operators (batchSendRecv) name the
// primitive, so it is a pipeline group, inferred, as the pipeline stages read it.
TEST(ParallelRolesTest, AnUnnamedHcclGroupOfSendRecvIsPipeline) {
  CommGroupSummary g = Group("", {}, CollectiveType::kSendRecv);
  g.source = "communication.json";
  g.ranks = {0, 1, 2, 3};
  const CommGroupSummary assigned = RoleAlone(g);
  EXPECT_EQ(assigned.role, "pp");
  EXPECT_TRUE(assigned.role_inferred);
}

TEST(ParallelRolesTest, DomainsSumTheirGroupsAndNameTheSlowestPair) {
  std::vector<CommGroupSummary> groups = {Group("mesh_pp", {0, 4}, CollectiveType::kSendRecv),
                                          Group("mesh_pp", {1, 5}, CollectiveType::kSendRecv),
                                          Group("mesh_tp", {0, 1, 2, 3}, CollectiveType::kAllReduce)};
  groups[0].duration_ns = 100;
  groups[0].busbw_gbps = 40;
  groups[0].exposed_ns = 100;
  groups[0].exposure_known_ns = 100;
  groups[1].duration_ns = 300;
  groups[1].busbw_gbps = 20;
  groups[1].exposure_known_ns = 300;
  groups[2].duration_ns = 50;
  groups[2].busbw_gbps = 10;
  AssignRoles(&groups);
  const std::vector<ParallelDomain> domains = SummarizeDomains(groups);
  ASSERT_EQ(domains.size(), 2u);
  EXPECT_EQ(domains[0].role, "tp");                   // tp before pp
  EXPECT_FALSE(domains[0].slowest_link.has_value());  // four members share links a timeline cannot split
  const ParallelDomain& pp = domains[1];
  EXPECT_EQ(pp.groups, 2u);
  EXPECT_EQ(pp.ranks, (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(pp.duration_ns, 400);
  EXPECT_DOUBLE_EQ(*pp.busbw_gbps, (40.0 * 100 + 20.0 * 300) / 400);
  EXPECT_DOUBLE_EQ(*pp.exposed_share, 100.0 / 400);
  ASSERT_TRUE(pp.slowest_link.has_value());
  EXPECT_EQ(pp.slowest_link->src_rank, 1);
  EXPECT_EQ(pp.slowest_link->dst_rank, 5);
  EXPECT_DOUBLE_EQ(*pp.slowest_link->bandwidth_gbps, 20);
}

}  // namespace
}  // namespace tuneprof

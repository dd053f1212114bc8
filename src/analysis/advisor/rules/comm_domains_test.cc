// communication.domain, run alone on a GPU rank of one hand-filled process group (the timeline's groups):
// an intra-layer domain that leaves the node, a data-parallel domain that all-reduces, and a domain too
// small a part of the step to say anything of.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof::rule_test {
namespace {

// Input ranks 0 and 1 in a `role` group whose members are `members`, all-reducing 800 us over two steps,
// all of it exposed.
CommGroupSummary Group(const std::string& role, std::vector<int64_t> members, double us) {
  CommGroupSummary g;
  g.source = "timeline";
  g.label = role;
  g.role = role;
  g.global_ranks = std::move(members);
  g.ranks = {0, 1};
  g.duration_ns = g.exposed_ns = g.exposure_known_ns = Us(us);
  g.busiest_type = CollectiveType::kAllReduce;
  return g;
}

// The rule alone on rank 0 of a GPU run holding `group`, two steps of 1000 us.
AdvisorResult Domains(const CommGroupSummary& group) {
  CrossRankCommunication cross;
  cross.groups = {group};
  RuleAlone alone;
  alone.rank.cross = &cross;
  return alone.Run(RuleCommDomains);
}

TEST(CommDomains, TensorParallelAcrossNodes) {
  const AdvisorResult result = Domains(Group("tp", {0, 8}, 800));
  const Finding* f = Find(result, "communication.domain");
  ASSERT_NE(f, nullptr);
  // 800 us over 2 ranks and 2 steps: 200 us of a 1000 us step.
  ExpectFinding(*f, 20, {{"domain_ranks", 2}, {"exposed_us_per_step", 200}, {"off_node_members_pct", 50}});
  EXPECT_EQ(Text(*f, "role"), "tp");
  EXPECT_NE(f->title.find("leaves the node"), std::string::npos) << f->title;
}

TEST(CommDomains, DataParallelAllReduce) {
  const AdvisorResult result = Domains(Group("dp", {0, 1}, 800));
  const Finding* f = Find(result, "communication.domain");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("all-reduces its gradients"), std::string::npos) << f->title;
}

TEST(CommDomains, InsideTheNodeOrUnderTheThresholdIsNot) {
  EXPECT_EQ(Find(Domains(Group("tp", {0, 1}, 800)), "communication.domain"), nullptr);  // one node
  EXPECT_EQ(Find(Domains(Group("tp", {0, 8}, 100)), "communication.domain"), nullptr);  // 2.5 % of the step
}

}  // namespace
}  // namespace tuneprof::rule_test

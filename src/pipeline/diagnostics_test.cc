#include "pipeline/diagnostics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneprof {
namespace {

// Ranks 0 and 1 of an 8-rank group: the other six are named, once per group, and a group whose members
// are all present says nothing.
TEST(DiagnosticsTest, MissingGroupMembersAreWarnedAboutOncePerGroup) {
  CommAnalysis comm;
  comm.ranks.resize(2);
  CommGroupSummary partial;
  partial.label = "tp";
  partial.global_ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  partial.missing_ranks = {2, 3, 4, 5, 6, 7};
  CommGroupSummary whole;
  whole.label = "pp";
  whole.global_ranks = {0, 1};
  comm.cross_rank.groups = {partial, whole};
  std::vector<std::string> warnings;
  WarnAboutMissingGroupMembers(comm, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "process group tp: 6 of its 8 members are not in the input (ranks 2-7): waits for them count as transfer "
            "and a straggler is named among the members present only; pass every rank");
}

}  // namespace
}  // namespace tuneprof

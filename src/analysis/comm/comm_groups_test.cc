#include "analysis/comm/comm_groups.h"

#include <gtest/gtest.h>

#include <limits>

#include "analysis/comm/comm_cross_rank.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

TEST(CommGroupsTest, ParsesRankLists) {
  EXPECT_EQ(ParseGroupRanks("[0, 1, 12]"), (std::vector<int64_t>{0, 1, 12}));
  EXPECT_EQ(ParseGroupRanks("[3]"), (std::vector<int64_t>{3}));
  EXPECT_TRUE(ParseGroupRanks("[]").empty());
  EXPECT_TRUE(ParseGroupRanks("").empty());
  EXPECT_TRUE(ParseGroupRanks("[0, x]").empty());
}

TEST(CommGroupsTest, ReadsParallelGroupInfoWithDotsInTheId) {
  HandBuiltTrace hand;
  auto& entries = hand.mutable_metadata()->entries;
  entries.push_back({"profiler_metadata.parallel_group_info.10.0.0.1%eth0_55000_0_17.group_name", "tp"});
  entries.push_back({"profiler_metadata.parallel_group_info.10.0.0.1%eth0_55000_0_17.group_rank", "0"});
  entries.push_back({"profiler_metadata.parallel_group_info.10.0.0.1%eth0_55000_0_17.global_ranks", "[0,1]"});
  entries.push_back({"profiler_metadata.parallel_group_info.42.group_name", "dp"});
  entries.push_back({"profiler_metadata.parallel_group_info.42.global_ranks", "[0,2,4,6]"});
  entries.push_back({"profiler_metadata.ENV_VARIABLES.HCCL_ALGO", ""});
  const Trace trace = hand.Finish();
  const std::vector<ParallelGroupInfo> groups = ReadParallelGroups(trace);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].id, "10.0.0.1%eth0_55000_0_17");
  EXPECT_EQ(groups[0].name, "tp");
  EXPECT_EQ(groups[0].global_ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(groups[1].id, "42");
  EXPECT_EQ(groups[1].global_ranks, (std::vector<int64_t>{0, 2, 4, 6}));
}

TEST(CommGroupsTest, ExposureIsTheDurationNotUnderCompute) {
  HandBuiltTrace hand;
  hand.Kernel("gemm", Us(0), Us(30));
  hand.Kernel("gemm", Us(50), Us(10));
  const Trace trace = hand.Finish();
  std::vector<Collective> collectives(2);
  collectives[0].start_ns = Us(20);  // [20, 70): under compute 20..30 and 50..60 -> exposed 30 us
  collectives[0].duration_ns = Us(50);
  collectives[1].start_ns = Us(100);  // nothing runs beside it
  collectives[1].duration_ns = Us(5);
  MeasureExposure(trace, &collectives);
  EXPECT_EQ(collectives[0].exposed_ns, Us(30));
  EXPECT_EQ(collectives[1].exposed_ns, Us(5));
}

Collective Make(std::string group, int64_t sequence, int64_t start_us, int64_t dur_us, int64_t bytes,
                std::optional<double> busbw, int64_t exposed_us) {
  Collective c;
  c.type = CollectiveType::kAllReduce;
  c.group = std::move(group);
  c.group_desc = c.group == "0" ? "default_pg" : "";
  c.group_ranks = c.group == "0" ? "[0, 1]" : "";
  c.sequence = sequence;
  c.start_ns = Us(start_us);
  c.duration_ns = Us(dur_us);
  c.bytes = bytes;
  c.busbw_gbps = busbw;
  c.exposed_ns = Us(exposed_us);
  return c;
}

TEST(CommGroupsTest, TimelineGroupsSumAndNameTheRankOthersWaitedFor) {
  std::vector<RankCommunication> ranks(2);
  ranks[0].rank = 0;
  ranks[1].rank = 1;
  // Group "0": rank 1 starts 40 us late at sequence 0 (rank 0 waits 40), rank 0 10 us late at 1 (rank 1 waits 10).
  ranks[0].collectives = {Make("0", 0, 0, 100, 1000000, 10.0, 100), Make("0", 1, 200, 50, 1000000, 20.0, 0)};
  ranks[1].collectives = {Make("0", 0, 40, 60, 1000000, 30.0, 60), Make("0", 1, 190, 60, kNoId, std::nullopt, 30),
                          Make("9", 0, 500, 10, kNoId, std::nullopt, 10)};
  const std::vector<CommGroupSummary> groups = SummarizeGroups(ranks, ClockAlignment());
  ASSERT_EQ(groups.size(), 2u);
  const CommGroupSummary& g = groups[0];
  EXPECT_EQ(g.group, "0");
  EXPECT_EQ(g.label, "default_pg");
  EXPECT_EQ(g.global_ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(g.collectives, 4u);
  EXPECT_EQ(g.count_with_bytes, 3u);
  EXPECT_EQ(g.bytes, 3000000);
  EXPECT_EQ(g.duration_ns, Us(270));
  // algbw: 3e6 B / 210 us = 14.2857 GB/s; busbw: (10·100 + 20·50 + 30·60) / 210 = 18.0952.
  EXPECT_NEAR(*g.algbw_gbps, 3e6 / 210e3, 1e-9);
  EXPECT_NEAR(*g.busbw_gbps, 3800.0 / 210.0, 1e-9);
  EXPECT_EQ(g.exposed_ns, Us(190));
  EXPECT_NEAR(*g.exposed_share, 190.0 / 270.0, 1e-12);
  EXPECT_EQ(g.slowest_rank, 1);  // caused 40 us of waiting against rank 0's 10
  EXPECT_EQ(groups[1].group, "9");
  EXPECT_FALSE(groups[1].slowest_rank);  // one rank only
  EXPECT_FALSE(groups[1].algbw_gbps);
}

// Group "0" lists ranks 0 and 1; the input holds rank 0 and rank 5 (another group's): rank 1 is named
// as missing, so that a verdict over the members present does not read as the group's.
TEST(CommGroupsTest, MembersNotInTheInputAreNamed) {
  std::vector<RankCommunication> ranks(2);
  ranks[0].rank = 0;
  ranks[1].rank = 5;
  ranks[0].collectives = {Make("0", 0, 0, 100, 1000, 1.0, 0)};
  ranks[1].collectives = {Make("9", 0, 0, 100, 1000, 1.0, 0)};
  const std::vector<CommGroupSummary> groups = SummarizeGroups(ranks, ClockAlignment());
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].missing_ranks, (std::vector<int64_t>{1}));
  EXPECT_TRUE(groups[1].missing_ranks.empty());  // its members are unknown
}

// A rank whose clock runs ahead seems to arrive last: once the run's alignment takes its offset out, the
// rank the others waited for is the one that is late on the reference clock, as for the straggler.
TEST(CommGroupsTest, TheSlowestRankIsFoundOnAlignedClocks) {
  std::vector<RankCommunication> ranks(2);
  ranks[0].rank = 0;
  ranks[1].rank = 1;
  // Rank 1's clock is 1000 us ahead; on the reference clock rank 0 arrives 30 us late at both.
  ranks[0].collectives = {Make("0", 0, 30, 100, 1000, 1.0, 0), Make("0", 1, 330, 100, 1000, 1.0, 0)};
  ranks[1].collectives = {Make("0", 0, 1000, 130, 1000, 1.0, 0), Make("0", 1, 1300, 130, 1000, 1.0, 0)};
  ClockAlignment clocks;
  clocks.ranks = {RankClockOffset{0, 0, 0, 2, true}, RankClockOffset{1, Us(1000), Us(1), 2, true}};
  EXPECT_EQ(SummarizeGroups(ranks, ClockAlignment()).at(0).slowest_rank, 1);  // raw clocks: rank 1 "late"
  const CommGroupSummary g = SummarizeGroups(ranks, clocks).at(0);
  EXPECT_EQ(g.slowest_rank, 0);
  EXPECT_EQ(g.slowest_why, "others waited 60 us for its late arrivals");
}

// A send / recv kernel of one unnamed communicator of four ranks "[0, 1, 2, 3]" whose kernels do not name
// their peer (a forward chain: each rank receives from the previous member and sends to the next).
Collective ChainKernel(P2pDirection direction, int64_t sequence, int64_t start_us, int64_t dur_us) {
  Collective c;
  c.type = CollectiveType::kSendRecv;
  c.direction = direction;
  c.group = "5";
  c.group_ranks = "[0, 1, 2, 3]";
  c.group_desc = "undefined";
  c.sequence = sequence;
  c.start_ns = Us(start_us);
  c.duration_ns = Us(dur_us);
  c.exposed_ns = c.duration_ns;
  return c;
}

// Rank 2 computes long before it hands on: rank 3 waits 70 us for it. By the group's sequence the four ranks'
// first kernels would be one collective with rank 3 last (the others "waiting" 31 us for it); each send pairs
// with its peer's receive instead, as the cross-rank waits match them, and rank 2 is the one waited for.
TEST(CommGroupsTest, SendRecvOfALargerCommunicatorPairWithTheirPeerForTheSlowestRank) {
  std::vector<RankCommunication> ranks(4);
  for (int64_t r = 0; r < 4; ++r) ranks[static_cast<size_t>(r)].rank = r;
  ranks[0].collectives = {ChainKernel(P2pDirection::kSend, 0, 0, 10)};
  ranks[1].collectives = {ChainKernel(P2pDirection::kRecv, 0, 2, 8), ChainKernel(P2pDirection::kSend, 1, 20, 5)};
  ranks[2].collectives = {ChainKernel(P2pDirection::kRecv, 0, 12, 13), ChainKernel(P2pDirection::kSend, 1, 100, 5)};
  ranks[3].collectives = {ChainKernel(P2pDirection::kRecv, 0, 30, 75)};
  const std::vector<CommGroupSummary> groups = SummarizeGroups(ranks, ClockAlignment());
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].collectives, 6u);
  EXPECT_EQ(groups[0].slowest_rank, 2);
  EXPECT_EQ(groups[0].slowest_why, "others waited 70 us for its late arrivals");
  // The cross-rank table reads the same pairs: rank 2 made rank 3 wait 70 us.
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  EXPECT_EQ(x.matched_collectives, 3u);
  EXPECT_EQ(x.ranks[2].wait_caused_ns, Us(70));
}

// One 2 ms all-reduce of group "777" as communication.json gives it: `wait_ms` of waiting, 40 MB over HCCS.
AscendCommOp AllReduceIn777(double wait_ms) {
  AscendCommOp op;
  op.op_name = "hcom_allReduce__1_0_1";
  op.group = "777";
  op.elapse_ms = 2.0;
  op.wait_ms = wait_ms;
  op.transports.push_back(AscendTransport{"HCCS", 40.0, 2.0});
  return op;
}

TEST(CommGroupsTest, AscendGroupsFromCommunicationJsonTakeParallelGroupNames) {
  std::vector<RankCommunication> ranks(2);
  for (int r = 0; r < 2; ++r) {
    ranks[r].rank = r;
    AscendCommOp op = AllReduceIn777(r == 0 ? 1.5 : 0.25);        // rank 1 waits least: the others wait for it
    op.transports.push_back(AscendTransport{"SDMA", 40.0, 2.0});  // HCCS again, summed: left out
    op.transports.push_back(AscendTransport{"LOCAL", 5.0, 0.01});
    ranks[r].ascend_ops.push_back(op);
    // The same op on the timeline: counted under the communication.json group, lending its exposure.
    Collective c;
    c.source = CollectiveSource::kHccl;
    c.name = op.op_name;
    c.duration_ns = Us(2000);
    c.exposed_ns = Us(500);
    ranks[r].collectives.push_back(c);
  }
  ranks[0].parallel_groups.push_back(ParallelGroupInfo{"777", "tp", {0, 1}});
  const std::vector<CommGroupSummary> groups = SummarizeGroups(ranks, ClockAlignment());
  ASSERT_EQ(groups.size(), 1u);
  const CommGroupSummary& g = groups[0];
  EXPECT_EQ(g.source, "communication.json");
  EXPECT_EQ(g.label, "tp");
  EXPECT_EQ(g.collectives, 2u);
  EXPECT_EQ(g.bytes, 80000000);
  EXPECT_EQ(g.duration_ns, 4000000);
  EXPECT_NEAR(*g.algbw_gbps, 20.0, 1e-12);  // 80 MB / 4 ms
  EXPECT_EQ(g.slowest_rank, 1);
  EXPECT_NEAR(*g.exposed_share, 0.25, 1e-12);  // 2 × 0.5 ms of 2 × 2 ms
}

// A rank whose step's split the importer dropped (NaN) waited an unknown time, not none: it is not the
// one the others wait for, and only the known waits add up; its bytes still count.
TEST(CommGroupsTest, AscendOpsWithoutASplitAreLeftOutOfTheWaits) {
  std::vector<RankCommunication> ranks(3);
  for (int r = 0; r < 3; ++r) {
    ranks[r].rank = r;
    AscendCommOp op = AllReduceIn777(r == 0 ? 1.5 : r == 1 ? 0.25 : std::nan(""));
    op.transit_ms = r == 2 ? std::nan("") : 1.0;
    ranks[r].ascend_ops.push_back(op);
  }
  ASSERT_FALSE(SplitKnown(ranks[2].ascend_ops[0]));
  const std::vector<CommGroupSummary> groups = SummarizeGroups(ranks, ClockAlignment());
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].bytes, 120000000);
  EXPECT_EQ(groups[0].op_wait_ms, 1.75);
  EXPECT_EQ(groups[0].op_transit_ms, 2.0);
  EXPECT_EQ(groups[0].slowest_rank, 1);
}

// Sizes and times of a damaged communication.json past int64 bytes or ns are held at its ends, not
// overflowed.
TEST(CommGroupsTest, AscendSizesPastInt64Saturate) {
  std::vector<RankCommunication> ranks(1);
  for (double size_mb : {1e300, 1e300, -1e300}) {
    AscendCommOp op;
    op.op_name = "hcom_allReduce__1_0_1";
    op.group = "777";
    op.elapse_ms = size_mb;
    op.transports.push_back(AscendTransport{"HCCS", size_mb, 2.0});
    ranks[0].ascend_ops.push_back(op);
  }
  const std::vector<CommGroupSummary> groups = SummarizeGroups(ranks, ClockAlignment());
  ASSERT_EQ(groups.size(), 1u);
  // Two sizes held at +9.2e18 saturate the sum at int64's end; the third, held at -9.2e18, takes it back.
  constexpr int64_t kAfter = std::numeric_limits<int64_t>::max() - 9'200'000'000'000'000'000;
  EXPECT_EQ(groups[0].bytes, kAfter);
  EXPECT_EQ(groups[0].duration_ns, kAfter);
}

// What the run-level commands keep of a rank's communication.json (KeepAscendOpsTheReduceReads) gives
// the groups and the cross-rank verdict that the whole listing gives.
TEST(CommGroupsTest, TheReduceReadsTheSameOfTrimmedAscendOps) {
  std::vector<RankCommunication> ranks(3);
  for (int r = 0; r < 3; ++r) {
    ranks[r].rank = r;
    for (const char* name : {"hcom_allReduce__1_0_1", "hcom_allGather__2_0_1", "Total Op Info"}) {
      AscendCommOp op;
      op.total = std::string_view(name) == "Total Op Info";
      op.op_name = name;
      op.group = "777";
      op.type = op.total ? CollectiveType::kOther : ParseCollectiveType(name);
      op.elapse_ms = 2.0 + r;
      op.transit_ms = 1.0;
      op.wait_ms = r == 1 ? 0.25 : 1.5;  // rank 1 is the one the others wait for
      op.transports = {AscendTransport{"HCCS", 40.0, 2.0}, AscendTransport{"SDMA", 40.0, 2.0},
                       AscendTransport{"RDMA", 3.0, 0.5}, AscendTransport{"LOCAL", 5.0, 0.01}};
      ranks[r].ascend_ops.push_back(op);
    }
  }
  std::vector<RankCommunication> trimmed = ranks;
  for (RankCommunication& rank : trimmed) KeepAscendOpsTheReduceReads(&rank);
  ASSERT_EQ(trimmed[0].ascend_ops.size(), 2u);  // the total is gone
  ASSERT_EQ(trimmed[0].ascend_ops[0].transports.size(), 2u);
  EXPECT_EQ(trimmed[0].ascend_ops[0].transports[0].transport, "HCCS");
  EXPECT_EQ(trimmed[0].ascend_ops[0].transports[1].transport, "RDMA");

  const std::vector<CommGroupSummary> whole = SummarizeGroups(ranks, ClockAlignment());
  const std::vector<CommGroupSummary> kept = SummarizeGroups(trimmed, ClockAlignment());
  ASSERT_EQ(whole.size(), 1u);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].collectives, whole[0].collectives);
  EXPECT_EQ(kept[0].bytes, whole[0].bytes);
  EXPECT_EQ(kept[0].duration_ns, whole[0].duration_ns);
  EXPECT_EQ(kept[0].algbw_gbps, whole[0].algbw_gbps);
  EXPECT_EQ(kept[0].op_wait_ms, whole[0].op_wait_ms);
  EXPECT_EQ(kept[0].slowest_rank, whole[0].slowest_rank);
  EXPECT_EQ(kept[0].busiest_type, whole[0].busiest_type);
  ASSERT_EQ(kept[0].transports.size(), whole[0].transports.size());
  EXPECT_EQ(AnalyzeAcrossRanks(trimmed).ascend_max_wait_rank, AnalyzeAcrossRanks(ranks).ascend_max_wait_rank);

  // A rank listed only by its totals keeps them: whether it has ops at all decides how its timeline
  // collectives count.
  RankCommunication totals_only;
  totals_only.ascend_ops.push_back(ranks[0].ascend_ops.back());
  KeepAscendOpsTheReduceReads(&totals_only);
  ASSERT_EQ(totals_only.ascend_ops.size(), 1u);
  EXPECT_EQ(totals_only.ascend_ops[0].transports.size(), 4u);
}

// The hash of a parallel_group_info name that a real run's HCCL outputs carry for it.
TEST(CommGroupsTest, HcclGroupHashIsMsprofsDoubleHash) {
  EXPECT_EQ(HcclGroupHash("10.174.216.241%enp189s0f1_55000_0_1738895486152654"), "212011646445595226");
  EXPECT_EQ(HcclGroupHash("10.174.216.241%enp189s0f1_55000_0_1738895507756334"), "9609979115979062393");
  EXPECT_EQ(HcclGroupHash(""), "0");
}

}  // namespace
}  // namespace tuneprof

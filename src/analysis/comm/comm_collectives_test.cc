#include "analysis/comm/comm_collectives.h"

#include <gtest/gtest.h>

#include "analysis/comm/comm_cross_rank.h"
#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// A GPU rank on a known chip (A100, NVLink 600 GB/s both directions) whose node lists 8 GPUs.
class CommCollectivesTest : public ::testing::Test {
 protected:
  CommCollectivesTest() {
    auto profiles = HardwareProfiles::Builtin();
    EXPECT_TRUE(profiles.ok());
    profiles_ = std::move(profiles).value();
    for (int64_t id = 0; id < kDevicesListed; ++id) {
      Device gpu;
      gpu.id = id;
      gpu.name = hand_.mutable_builder()->Intern("NVIDIA A100-SXM4-40GB");
      gpu.from_properties = true;
      hand_.mutable_builder()->AddDevice(gpu);
    }
  }

  uint32_t Nccl(std::string_view name, int64_t ts, int64_t dur, std::string_view collective, int64_t nelems,
                int64_t dtype_bytes, int64_t group_size, std::string_view group = "0") {
    const uint32_t event = hand_.Kernel(name, ts, dur);
    CollectiveInfo info;
    info.event = event;
    info.collective = hand_.mutable_builder()->Intern(collective);
    info.in_nelems = info.out_nelems = nelems;
    info.dtype_bytes = dtype_bytes;
    info.bytes = nelems * dtype_bytes;
    info.group_size = group_size;
    info.group_name = hand_.mutable_builder()->Intern(group);
    hand_.mutable_builder()->AddCollectiveInfo(info);
    return event;
  }

  RankCommunication Analyze() {
    trace_ = hand_.Finish();
    return AnalyzeRankCommunication(trace_, ComputeTimeBreakdown(trace_), SelectHardware(trace_, profiles_, nullptr));
  }

  static constexpr int64_t kDevicesListed = 8;
  HandBuiltTrace hand_;
  HardwareProfiles profiles_;
  Trace trace_;
};

TEST_F(CommCollectivesTest, BandwidthFromArgsAndUtilizationAgainstHalfTheNvlinkFigure) {
  // 25 M floats = 100 MB in 1 ms: algbw 100 GB/s; allreduce over 4 ranks: busbw x 1.5 = 150 GB/s;
  // NVLink 600 GB/s both directions -> 300 one way -> 50 %.
  Nccl("ncclKernel_AllReduce_RING_LL_Sum_float(...)", Us(0), Us(1000), "allreduce", 25'000'000, 4, 4);
  // 1000 bytes in 10 us: a small message; broadcast factor 1.
  Nccl("ncclKernel_Broadcast_RING_LL_Sum_int8_t(...)", Us(2000), Us(10), "broadcast", 1000, 1, 4);
  hand_.Kernel("sgemm", Us(500), Us(1000));  // hides [500, 1000) of the allreduce
  const RankCommunication r = Analyze();

  ASSERT_EQ(r.collectives.size(), 2u);
  const Collective& all_reduce = r.collectives[0];
  EXPECT_EQ(all_reduce.type, CollectiveType::kAllReduce);
  EXPECT_EQ(all_reduce.bytes, 100'000'000);
  EXPECT_DOUBLE_EQ(*all_reduce.algbw_gbps, 100.0);
  EXPECT_DOUBLE_EQ(*all_reduce.busbw_gbps, 150.0);
  EXPECT_EQ(r.link.transport, "nvlink");
  EXPECT_DOUBLE_EQ(*r.link.peak_gb_per_s, 300.0);
  EXPECT_DOUBLE_EQ(*all_reduce.utilization, 0.5);
  EXPECT_EQ(all_reduce.sequence, 0);
  EXPECT_EQ(r.collectives[1].sequence, 1);
  EXPECT_DOUBLE_EQ(*r.collectives[1].algbw_gbps, 0.1);

  ASSERT_EQ(r.by_type.size(), 2u);
  EXPECT_EQ(r.total.count, 2u);
  EXPECT_EQ(r.total.bytes, 100'001'000);
  EXPECT_EQ(r.total.small_count, 1u);
  EXPECT_DOUBLE_EQ(*r.small_message_share, 0.5);
  EXPECT_EQ(r.size_histogram[0], 1u);  // < 4 KiB
  EXPECT_EQ(r.size_histogram[4], 1u);  // 16 MB .. 256 MB

  // Exposed vs hidden comes from time_breakdown.h unchanged.
  EXPECT_EQ(r.communication_ns, Us(1010));
  EXPECT_EQ(r.hidden_communication_ns, Us(500));
  EXPECT_EQ(r.exposed_communication_ns, Us(510));
}

TEST_F(CommCollectivesTest, GroupLargerThanTheNodeHasNoUtilization) {
  // 16 ranks but the trace lists 8 GPUs: the group leaves the node, NVLink is not its link.
  Nccl("ncclKernel_AllReduce_RING_LL_Sum_float(...)", Us(0), Us(1000), "allreduce", 1000, 4, 16);
  const RankCommunication r = Analyze();
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.link.transport, "nvlink");
  EXPECT_DOUBLE_EQ(*r.collectives[0].busbw_gbps, 0.004 * 2 * 15 / 16);
  EXPECT_FALSE(r.collectives[0].utilization.has_value());
  EXPECT_FALSE(r.total.utilization.has_value());
}

TEST_F(CommCollectivesTest, RcclKernelsAreCollectivesAndOtherCommunicationIsNot) {
  hand_.Kernel("rcclKernel_AllGather_RING_LL_Sum_float", Us(0), Us(50));
  hand_.Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", Us(100), Us(50));
  const RankCommunication r = Analyze();
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].type, CollectiveType::kAllGather);
  EXPECT_EQ(r.collectives[1].type, CollectiveType::kAllReduce);
  EXPECT_EQ(r.collectives[1].source, CollectiveSource::kNcclKernel);
}

TEST_F(CommCollectivesTest, KernelWithoutArgsKeepsTypeAndUnknownBytes) {
  hand_.Kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", Us(0), Us(50));
  const RankCommunication r = Analyze();
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].type, CollectiveType::kSendRecv);
  EXPECT_EQ(r.collectives[0].bytes, kNoId);
  EXPECT_FALSE(r.collectives[0].algbw_gbps.has_value());
  EXPECT_FALSE(r.small_message_share.has_value());
  EXPECT_EQ(r.total.count_with_bytes, 0u);
}

// Two ranks run the same two collectives; rank 1 arrives 300 us late at the first, rank 0 40 us late
// at the second.
TEST(CommCrossRankTest, WaitIsTimeToTheLastArrivalAndTheStragglerCausedMost) {
  std::vector<RankCommunication> ranks(2);
  auto add = [](RankCommunication* r, int64_t seq, int64_t start, int64_t dur) {
    Collective c;
    c.type = CollectiveType::kAllReduce;
    c.group = "0";
    c.sequence = seq;
    c.start_ns = start;
    c.duration_ns = dur;
    r->collectives.push_back(c);
  };
  ranks[0].rank = 0;
  ranks[1].rank = 1;
  add(&ranks[0], 0, Us(0), Us(400));     // waits 300, transfers 100
  add(&ranks[1], 0, Us(300), Us(100));   // last
  add(&ranks[0], 1, Us(1040), Us(60));   // last
  add(&ranks[1], 1, Us(1000), Us(100));  // waits 40
  add(&ranks[1], 2, Us(2000), Us(10));   // on one rank only
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);

  EXPECT_EQ(x.matched_collectives, 2u);
  EXPECT_EQ(x.unmatched_collectives, 1u);
  EXPECT_EQ(x.ranks[0].wait_ns, Us(300));
  EXPECT_EQ(x.ranks[0].transfer_ns, Us(100) + Us(60));
  EXPECT_EQ(x.ranks[1].wait_ns, Us(40));
  EXPECT_EQ(x.ranks[1].transfer_ns, Us(100) + Us(60));
  EXPECT_EQ(x.ranks[1].times_last, 1u);
  EXPECT_EQ(x.ranks[1].wait_caused_ns, Us(300));
  EXPECT_EQ(x.ranks[0].wait_caused_ns, Us(40));
  ASSERT_TRUE(x.straggler_rank.has_value());
  EXPECT_EQ(*x.straggler_rank, 1);
  EXPECT_TRUE(x.straggler_stands_out);  // 300 us caused, at least twice rank 0's 40
  EXPECT_DOUBLE_EQ(*x.ranks[0].wait_ratio, 300.0 / 460.0);
}

TEST(CommCrossRankTest, RanksTakingTurnsArrivingLastHaveNoStandingOutStraggler) {
  std::vector<RankCommunication> ranks(2);
  auto add = [](RankCommunication* r, int64_t seq, int64_t start) {
    Collective c;
    c.type = CollectiveType::kAllReduce;
    c.group = "0";
    c.sequence = seq;
    c.start_ns = start;
    c.duration_ns = Us(500);
    r->collectives.push_back(c);
  };
  ranks[0].rank = 0;
  ranks[1].rank = 1;
  add(&ranks[0], 0, Us(0));
  add(&ranks[1], 0, Us(200));   // last: rank 0 waits 200
  add(&ranks[0], 1, Us(1150));  // last: rank 1 waits 150
  add(&ranks[1], 1, Us(1000));
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  ASSERT_TRUE(x.straggler_rank.has_value());
  EXPECT_EQ(*x.straggler_rank, 1);       // made the others wait longest (200 vs 150)
  EXPECT_FALSE(x.straggler_stands_out);  // but not twice as long
  EXPECT_NE(x.straggler_reason.find("but not twice as long as rank 0's late arrivals made them wait (0.150 ms)"),
            std::string::npos)
      << x.straggler_reason;
}

// Rank 1 is last at every collective, but by 2 us: launch jitter, not a late rank.
TEST(CommCrossRankTest, ARankLastByMicrosecondsIsNoStraggler) {
  std::vector<RankCommunication> ranks(2);
  ranks[0].rank = 0;
  ranks[1].rank = 1;
  for (int64_t seq = 0; seq < 4; ++seq) {
    for (RankCommunication* r : {&ranks[0], &ranks[1]}) {
      Collective c;
      c.type = CollectiveType::kAllReduce;
      c.group = "0";
      c.sequence = seq;
      c.start_ns = Us(1000 * seq) + (r->rank == 1 ? Us(2) : 0);
      c.duration_ns = Us(100) - (r->rank == 1 ? Us(2) : 0);  // both end together
      r->collectives.push_back(c);
    }
  }
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  ASSERT_TRUE(x.straggler_rank.has_value());
  EXPECT_EQ(*x.straggler_rank, 1);
  EXPECT_FALSE(x.straggler_stands_out);
  EXPECT_NE(x.straggler_reason.find("launch jitter, not a late rank"), std::string::npos) << x.straggler_reason;
}

TEST(CommCrossRankTest, DifferentTypesAtOneSequenceDoNotMatch) {
  std::vector<RankCommunication> ranks(2);
  Collective a;
  a.type = CollectiveType::kAllReduce;
  Collective b = a;
  b.type = CollectiveType::kBroadcast;
  b.start_ns = Us(5);
  ranks[0].collectives.push_back(a);
  ranks[1].collectives.push_back(b);
  const CrossRankCommunication x = AnalyzeAcrossRanks(ranks);
  EXPECT_EQ(x.matched_collectives, 0u);
  EXPECT_EQ(x.unmatched_collectives, 2u);
  EXPECT_FALSE(x.straggler_rank.has_value());
}

TEST(CommVerdictTest, LowUtilizationAndExposedShareAreReported) {
  CommAnalysis analysis;
  RankCommunication r;
  r.rank = 3;
  r.link.transport = "nvlink";
  CollectiveTypeSummary s;
  s.type = CollectiveType::kAllReduce;
  s.busbw_gbps = 30;
  s.utilization = 0.1;
  r.by_type.push_back(s);
  r.wall_ns = 100;
  r.exposed_communication_ns = 10;
  r.exposed_share_of_wall = 0.1;
  analysis.ranks.push_back(r);
  JudgeCommunication(&analysis);
  ASSERT_TRUE(analysis.bottleneck);
  ASSERT_EQ(analysis.reasons.size(), 1u);
  EXPECT_NE(analysis.reasons[0].find("rank 3: allreduce"), std::string::npos);

  analysis.ranks[0].by_type[0].utilization = 0.9;
  analysis.ranks[0].exposed_share_of_wall = 0.5;
  JudgeCommunication(&analysis);
  ASSERT_EQ(analysis.reasons.size(), 1u);
  EXPECT_NE(analysis.reasons[0].find("exposed communication"), std::string::npos);

  analysis.ranks[0].exposed_share_of_wall = 0.1;
  JudgeCommunication(&analysis);
  EXPECT_FALSE(analysis.bottleneck);
}

// A torch_npu timeline's hcom_* events carry no group: each takes the one communication.json lists its
// name under, in the same step; a listing of another step, or a name under two groups, gives none.
// comm's exposed share is of the steps profile and analyze report: per step the longer of the host range
// and the device span, summed; the device span where no step is known.
TEST(ReportedStepsTest, ExposedShareIsOfTheStepsProfileAndAnalyzeReport) {
  RankBreakdown breakdown;
  StepBreakdown host_longer;
  host_longer.host_start_ns = 0;
  host_longer.host_end_ns = 600;
  host_longer.wall_ns = 500;
  StepBreakdown device_longer;
  device_longer.host_start_ns = 700;
  device_longer.host_end_ns = 800;
  device_longer.wall_ns = 400;
  breakdown.steps = {host_longer, device_longer};
  RankCommunication rank;
  rank.wall_ns = 900;
  rank.exposed_communication_ns = 250;
  SetReportedSteps(breakdown, &rank);
  EXPECT_EQ(rank.steps_ns, 1000);
  EXPECT_EQ(ReportedStepsNs(rank), 1000);
  ASSERT_TRUE(rank.exposed_share_of_wall);
  EXPECT_DOUBLE_EQ(*rank.exposed_share_of_wall, 0.25);
  // Read back from a summary: the steps where the written share is of them, else the wall stays.
  RankCommunication read = rank;
  read.steps_ns = 0;
  RestoreReportedSteps(breakdown, &read);
  EXPECT_EQ(read.steps_ns, 1000);
  read.exposed_share_of_wall = 250.0 / 900;
  RestoreReportedSteps(breakdown, &read);
  EXPECT_EQ(read.steps_ns, 0);
  EXPECT_DOUBLE_EQ(*read.exposed_share_of_wall, 250.0 / 900);
  SetReportedSteps(RankBreakdown(), &rank);
  EXPECT_EQ(ReportedStepsNs(rank), 0);
  EXPECT_DOUBLE_EQ(*rank.exposed_share_of_wall, 250.0 / 900);
}

TEST(CollectiveGroupTest, HcclEventsTakeCommunicationJsonsGroupInTheirStep) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(1000));
  hand.Kernel("hcom_allReduce__586_0_1", Us(100), Us(50));
  hand.Kernel("hcom_allReduce__586_1_1", Us(300), Us(50));
  hand.Kernel("hcom_broadcast__586_2_1", Us(500), Us(50));
  Trace trace = hand.Finish();
  SideTableBuilder side(&trace);
  CommunicationTables* comm = side.mutable_communication();
  comm->ops_present = true;
  const auto op = [&](const char* step, const char* name, const char* group) {
    HcclOpTime o;
    o.step = side.Intern(step);
    o.op_name = side.Intern(name);
    o.group = side.Intern(group);
    comm->ops.push_back(o);
  };
  op("step1", "hcom_allReduce__586_0_1", "111");
  op("step7", "hcom_allReduce__586_1_1", "111");  // another step: not this event
  op("step1", "hcom_broadcast__586_2_1", "111");
  op("step1", "hcom_broadcast__586_2_1", "222");  // two groups: neither
  const RankCommunication r = AnalyzeRankCommunication(trace, ComputeTimeBreakdown(trace), HardwareSelection{});
  ASSERT_EQ(r.collectives.size(), 3u);
  EXPECT_EQ(r.collectives[0].group, "111");
  EXPECT_EQ(r.collectives[1].group, "");
  EXPECT_EQ(r.collectives[2].group, "");
}

}  // namespace
}  // namespace tuneprof

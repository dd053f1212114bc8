// communication.low_bandwidth, and the communication-bandwidth figure it reads, on hand-built traces.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(RuleFamilies, LowCommunicationBandwidth) {
  HandBuiltTrace t;
  StepWithKernel(&t, 1000, 500);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(400), Us(400), kNoId, 9);  // 300 us exposed
  const Trace trace = t.Finish();
  RankCommunication comm;
  comm.link.transport = "nvlink";
  comm.link.peak_gb_per_s = 200;
  comm.total.utilization = 0.25;
  comm.total.busbw_gbps = 50;
  CollectiveTypeSummary all_reduce;
  all_reduce.type = CollectiveType::kAllReduce;
  all_reduce.duration_ns = Us(400);
  all_reduce.utilization = 0.25;
  comm.by_type.push_back(all_reduce);
  const AdvisorResult result = AdviseWith(trace, nullptr, &comm);
  const Finding* f = Find(result, "communication.low_bandwidth");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->value, 25);
  EXPECT_DOUBLE_EQ(*f->threshold, 50);
  ExpectNumbers(*f, {{"exposed_communication_us", 300}, {"busbw_gbps", 50}, {"link_peak_gbps", 200}});
  EXPECT_EQ(Text(*f, "link"), "nvlink");
  EXPECT_EQ(Text(*f, "busiest_collective"), std::string(CollectiveTypeName(CollectiveType::kAllReduce)));
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(150));  // 300 us x (1 - 25 / 50)
  const UtilizationCheck& check = result.ranks[0].utilizations[2];
  EXPECT_EQ(check.name, "communication_bandwidth");
  EXPECT_DOUBLE_EQ(*check.value_pct, 25);

  comm.total.utilization = 0.5;  // at the threshold: quiet
  EXPECT_EQ(Find(AdviseWith(trace, nullptr, &comm), "communication.low_bandwidth"), nullptr);
}

// A low collective bandwidth makes communication the bottleneck only where exposed communication is the
// step's largest part, as for the compute units and copies; a figure over few collectives says so.
UtilizationCheck CommunicationCheck(int64_t gemm_us, int64_t nccl_us, uint64_t collectives) {
  HandBuiltTrace t;
  StepWithKernel(&t, 1000, gemm_us);
  t.Device(EventKind::kKernel, "ncclKernel_AllReduce_RING_LL_Sum_float", Us(gemm_us), Us(nccl_us), kNoId, 9);
  const Trace trace = t.Finish();
  RankCommunication comm;
  comm.link.transport = "nvlink";
  comm.link.peak_gb_per_s = 200;
  comm.total.utilization = 0.02;
  comm.total.count_with_bytes = collectives;
  return AdviseWith(trace, nullptr, &comm).ranks[0].utilizations[2];
}

TEST(RuleFamilies, CommunicationBandwidthIsABottleneckOnlyWhereCommunicationIsMaterial) {
  const UtilizationCheck material = CommunicationCheck(100, 800, 40);
  EXPECT_TRUE(material.Bottleneck());
  EXPECT_EQ(material.measured_as.find("small sample"), std::string::npos) << material.measured_as;

  const UtilizationCheck small = CommunicationCheck(800, 50, 1);  // 50 us of a 1000 us step
  EXPECT_TRUE(small.Below());
  EXPECT_FALSE(small.Bottleneck());
  EXPECT_EQ(small.immaterial_part, "collectives");
  ASSERT_TRUE(small.immaterial_share.has_value());
  EXPECT_NEAR(*small.immaterial_share, 50.0 / 850, 1e-9);  // the device step runs from 0 to 850 us
  EXPECT_NE(small.measured_as.find("only 1 collective with sizes: a small sample"), std::string::npos)
      << small.measured_as;
}

}  // namespace
}  // namespace tuneprof::rule_test

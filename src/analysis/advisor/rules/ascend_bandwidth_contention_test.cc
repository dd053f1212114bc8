// communication.bandwidth_contention: slow SDMA transfers while a matmul runs.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"

namespace tuneprof::rule_test {
namespace {

TEST(PeerRules, SdmaBandwidthContentionWithMatmuls) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  side.AddKernelDetail(Row(side, "MatMulV2", "AI_CORE", 1000, 100));    // 1000..1100 us
  side.AddKernelDetail(Row(side, "Add", "AI_VECTOR_CORE", 3000, 100));  // not a matmul
  CommunicationTables* comm = side.mutable_communication();
  comm->ops_present = true;
  auto add_op = [&](std::string_view name, double start_us, double elapse_ms, double gbps) {
    HcclTransportTraffic sdma;
    sdma.transport = side.Intern("SDMA");
    sdma.transit_size_mb = 10;
    sdma.bandwidth_gbps = gbps;
    HcclOpTime op;
    op.op_name = side.Intern(name);
    op.start_us = start_us;
    op.elapse_ms = elapse_ms;
    op.first_traffic = static_cast<uint32_t>(comm->traffic.size());
    op.traffic_count = 1;
    comm->traffic.push_back(sdma);
    comm->ops.push_back(op);
  };
  add_op("hcom_allReduce__1", 1050, 0.2, 10);  // overlaps the matmul, slow
  add_op("hcom_allReduce__2", 1090, 0.1, 20);  // overlaps, fast enough
  add_op("hcom_allReduce__3", 3000, 0.1, 5);   // slow but beside an Add only
  const AdvisorResult advice = AdviseOnChip(trace);
  const Finding* f = Find(advice, "communication.bandwidth_contention");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"contended_ops", 1}, {"sdma_ops", 3}, {"contended_ms", 0.2}});
  EXPECT_DOUBLE_EQ(*f->value, 10);
  EXPECT_DOUBLE_EQ(*f->threshold, 14.4);
  EXPECT_EQ(Text(*f, "ops"), "hcom_allReduce__1 (10.00 GB/s)");

  comm->traffic[0].bandwidth_gbps = 14.4;  // at the threshold: quiet
  EXPECT_EQ(Find(AdviseOnChip(trace), "communication.bandwidth_contention"), nullptr);
}

// Contended operators that are the expert-parallel all-to-all beside the experts' matmuls: the advice is the
// all-to-all's (overlap with the experts' compute), not gradient buckets.
TEST(PeerRules, ContendedAllToAllGetsExpertParallelAdvice) {
  Trace trace = OneStep();
  SideTableBuilder side(&trace);
  side.StartKernelDetails();
  side.AddKernelDetail(Row(side, "MatMulV2", "AI_CORE", 1000, 100));
  CommunicationTables* comm = side.mutable_communication();
  comm->ops_present = true;
  for (auto [name, start] : {std::pair{"hcom_alltoallv__512_3_1", 1010.0},
                             {"hcom_alltoallv__512_7_1", 1050.0},
                             {"hcom_allReduce__1", 1090.0}}) {
    HcclTransportTraffic sdma;
    sdma.transport = side.Intern("SDMA");
    sdma.transit_size_mb = 10;
    sdma.bandwidth_gbps = 3;
    HcclOpTime op;
    op.op_name = side.Intern(name);
    op.start_us = start;
    op.elapse_ms = 0.01;
    op.first_traffic = static_cast<uint32_t>(comm->traffic.size());
    op.traffic_count = 1;
    comm->traffic.push_back(sdma);
    comm->ops.push_back(op);
  }
  const AdvisorResult advice = AdviseOnChip(trace);
  const Finding* f = Find(advice, "communication.bandwidth_contention");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"contended_ops", 3}, {"contended_all_to_all_ops", 2}});
  ASSERT_EQ(f->apis.size(), 1u);
  const std::string apis(f->apis[0].view());
  // The platform's all-to-all overlap switches (this test trace reads as a GPU one: Megatron-LM's).
  EXPECT_NE(apis.find("--moe-"), std::string::npos) << apis;
  EXPECT_EQ(apis.find("bucket_cap_mb"), std::string::npos) << apis;
  EXPECT_NE(f->strategy.find("all-to-all"), std::string::npos) << f->strategy;
}

}  // namespace
}  // namespace tuneprof::rule_test

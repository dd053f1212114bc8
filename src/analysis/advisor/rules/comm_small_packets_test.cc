// communication.small_packets on hand-built communication.json tables: the share of operators below each
// transport's limit, counted as msprof-analyze counts it (operators without traffic on a transport and the
// totals left out), and silence at or below the share.
#include <gtest/gtest.h>

#include <string>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

constexpr std::string_view kSmallPacketsId = "communication.small_packets";

// One operator with `sdma_mb` over SDMA and `rdma_mb` over RDMA (0: none), each taking `ms`; `p2p`: a
// pipeline send in communication.json's p2p section (`batched`: a batchSendRecv there).
void AddOp(SideTableBuilder& side, double sdma_mb, double rdma_mb, double ms, bool total = false, bool p2p = false,
           bool batched = false) {
  CommunicationTables* comm = side.mutable_communication();
  comm->ops_present = true;
  HcclOpTime op;
  const char* p2p_name = batched ? "hcom_batchSendRecv_" : "hcom_send_";
  op.op_name = side.Intern(total ? "Total Op Info" : p2p ? p2p_name : "hcom_allReduce_");
  op.total = total;
  op.p2p = p2p;
  op.first_traffic = static_cast<uint32_t>(comm->traffic.size());
  for (auto [transport, mb] : {std::pair{"SDMA", sdma_mb}, {"RDMA", rdma_mb}, {"HCCS", sdma_mb}}) {
    HcclTransportTraffic traffic;
    traffic.transport = side.Intern(transport);
    traffic.transit_size_mb = mb;
    traffic.transit_time_ms = mb > 0 ? ms : 0;
    comm->traffic.push_back(traffic);
    ++op.traffic_count;
  }
  comm->ops.push_back(op);
}

Trace PacketsStep() {
  HandBuiltTrace t;
  StepWithKernel(&t, 10000, 5000, "k");
  return t.Finish();
}

TEST(SmallPackets, SdmaAndRdmaSharesAgainstTheirLimits) {
  Trace trace = PacketsStep();
  SideTableBuilder side(&trace);
  AddOp(side, 4, 0.5, 0.25);                    // SDMA small (< 16 MB), RDMA small (< 1 MB)
  AddOp(side, 8, 2, 0.5);                       // SDMA small, RDMA not
  AddOp(side, 20, 0, 1);                        // SDMA large, no RDMA traffic: not an RDMA operator
  AddOp(side, 100, 0, 2);                       // SDMA large
  AddOp(side, 132, 2.5, 3.75, /*total=*/true);  // totals are not an operator
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kSmallPacketsId);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, FindingCategory::kCommunication);
  ExpectNumbers(*f, {{"sdma_ops", 4}, {"sdma_small_ops", 2}, {"sdma_small_ops_pct", 50}});
  ExpectNumbers(*f, {{"sdma_small_volume_pct", 100.0 * 12 / 132}, {"sdma_small_transit_ms", 0.75}});
  ExpectNumbers(*f, {{"sdma_limit_mb", 16}, {"rdma_ops", 2}, {"rdma_small_ops", 1}, {"rdma_limit_mb", 1}});
  EXPECT_DOUBLE_EQ(*f->value, 50);
  EXPECT_TRUE(f->gain_unknown());
  EXPECT_EQ(f->title,
            "50 % of SDMA operators move less than 16 MB (9.09 % of its volume); 50 % of RDMA operators move less "
            "than 1 MB (20 % of its volume) (1.000 ms of transit)");
}

TEST(SmallPackets, QuietAtTheShareAndWithoutCommunicationJson) {
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(PacketsStep()), kSmallPacketsId), nullptr);
  Trace trace = PacketsStep();
  SideTableBuilder side(&trace);
  AddOp(side, 4, 0, 1);  // 1 of 5 SDMA operators small: 20 %, not above it
  for (int i = 0; i < 4; ++i) AddOp(side, 32, 0, 1);
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(trace), kSmallPacketsId), nullptr);
}

// Most RDMA operators move a few bytes, but they hold 0.3 % of the RDMA transit time (0.01 of 3.01 ms): a
// negligible share, below `small_packet_min_transit_pct`, so the transport stays quiet; at 5 % it fires.
TEST(SmallPackets, QuietOnANegligibleShareOfTheTransit) {
  Trace trace = PacketsStep();
  SideTableBuilder side(&trace);
  for (int i = 0; i < 2; ++i) AddOp(side, 0, 0.0001, 0.005);
  AddOp(side, 0, 512, 3);
  EXPECT_EQ(Find(finding_lookup::AdviseOneRank(trace), kSmallPacketsId), nullptr);

  Trace shared = PacketsStep();
  SideTableBuilder more(&shared);
  for (int i = 0; i < 2; ++i) AddOp(more, 0, 0.0001, 0.125);
  AddOp(more, 0, 512, 4.75);  // 0.25 of 5 ms: 5 %
  const AdvisorResult result = finding_lookup::AdviseOneRank(shared);
  const Finding* f = Find(result, kSmallPacketsId);
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"rdma_small_ops", 2}, {"rdma_small_transit_pct", 5}});
}

// 4 small pipeline sends (`batched`: batchSendRecv) and 1 large all-reduce: the small transfers are
// activations between stages.
void AddPipelineOps(SideTableBuilder& side, bool batched = false) {
  for (int i = 0; i < 4; ++i) AddOp(side, 1, 0, 1, /*total=*/false, /*p2p=*/true, batched);
  AddOp(side, 64, 0, 5);
}

TEST(SmallPackets, PipelineSendRecvGetsP2pAdviceNotGradientBuckets) {
  Trace trace = PacketsStep();  // a GPU-side trace: Megatron-LM's words, no MindSpeed
  SideTableBuilder side(&trace);
  AddPipelineOps(side);
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kSmallPacketsId);
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"small_p2p_share_pct", 100}});
  ASSERT_EQ(f->apis.size(), 1u);
  EXPECT_EQ(f->apis[0].view().find("bucket_cap_mb"), std::string::npos);
  EXPECT_NE(f->apis[0].view().find("batch_isend_irecv"), std::string::npos);
  EXPECT_NE(f->apis[0].view().find("Megatron-LM"), std::string::npos);
  EXPECT_EQ(f->apis[0].view().find("MindSpeed"), std::string::npos);
  EXPECT_NE(f->strategy.find("pipeline send / recv"), std::string::npos);
}

// The advice on an Ascend step (torch_npu's trace view) holding AddPipelineOps's transfers.
AdvisorResult AdviseOnAscendPipeline(bool batched) {
  hand_built::HandBuiltTrace t;
  t.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  StepWithKernel(&t, 10000, 5000, "k");
  Trace trace = t.Finish();
  SideTableBuilder side(&trace);
  AddPipelineOps(side, batched);
  return finding_lookup::AdviseOneRank(trace);
}

// The one API line of the small-packets finding in `result`; "" (a failure) without that finding or with
// another number of lines.
std::string OnlyApiLine(const AdvisorResult& result) {
  const Finding* f = Find(result, kSmallPacketsId);
  if (f == nullptr || f->apis.size() != 1) {
    ADD_FAILURE() << "no small-packets finding with one API line";
    return "";
  }
  return std::string(f->apis[0].view());
}

TEST(SmallPackets, PipelineSendRecvOnAscendNamesMindSpeed) {
  const std::string api = OnlyApiLine(AdviseOnAscendPipeline(/*batched=*/false));
  EXPECT_NE(api.find("MindSpeed"), std::string::npos);
  EXPECT_NE(api.find("over HCCL"), std::string::npos);
  EXPECT_EQ(api.find("bucket_cap_mb"), std::string::npos);
}

// The pipeline's transfers are already hcom_batchSendRecv ops: batching them into one call is no advice.
TEST(SmallPackets, BatchedSendRecvIsNotToldToBatch) {
  const AdvisorResult result = AdviseOnAscendPipeline(/*batched=*/true);
  const std::string api = OnlyApiLine(result);
  EXPECT_EQ(api.find("batch_isend_irecv"), std::string::npos) << api;
  EXPECT_NE(api.find("MindSpeed"), std::string::npos);
  const Finding* f = Find(result, kSmallPacketsId);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->strategy.find("into one call,"), std::string::npos) << f->strategy;
  EXPECT_NE(f->strategy.find("already batched"), std::string::npos) << f->strategy;
}

TEST(SmallPackets, GradientAllReducesKeepTheBucketAdvice) {
  Trace trace = PacketsStep();
  SideTableBuilder side(&trace);
  for (int i = 0; i < 4; ++i) AddOp(side, 1, 0, 1);
  AddOp(side, 64, 0, 5);
  const AdvisorResult result = finding_lookup::AdviseOneRank(trace);
  const Finding* f = Find(result, kSmallPacketsId);
  ASSERT_NE(f, nullptr);
  ASSERT_FALSE(f->apis.empty());
  EXPECT_NE(f->apis[0].view().find("bucket_cap_mb"), std::string::npos);
}

}  // namespace
}  // namespace tuneprof::rule_test

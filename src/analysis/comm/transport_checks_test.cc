// The bandwidth spread of each transport across ranks and the RDMA retransmission check, on hand-built
// communication.json summaries.
#include "analysis/comm/transport_checks.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

AscendTransportTotal Total(std::string transport, double size_mb, double time_ms) {
  AscendTransportTotal t;
  t.transport = std::move(transport);
  t.size_mb = size_mb;
  t.time_ms = time_ms;
  if (time_ms > 0) t.bandwidth_gbps = size_mb / time_ms;
  return t;
}

RankCommunication Rank(int64_t id, std::vector<AscendTransportTotal> totals) {
  RankCommunication r;
  r.rank = id;
  r.ascend_transports = std::move(totals);
  return r;
}

TEST(SpreadOfTransports, NamesTheSlowestAndFastestRankOfEachTransport) {
  const std::vector<RankCommunication> ranks = {
      Rank(0, {Total("RDMA", 200, 10), Total("HCCS", 100, 5), Total("LOCAL", 50, 1)}),
      Rank(1, {Total("RDMA", 200, 20), Total("HCCS", 100, 5)}),
      Rank(2, {Total("RDMA", 200, 10), Total("HCCS", 0.5, 1)}),  // HCCS: sync traffic only, not weighed
  };
  const std::vector<TransportSpread> spread = SpreadOfTransports(ranks);
  ASSERT_EQ(spread.size(), 2u);  // LOCAL has no link; the others in name order
  EXPECT_EQ(spread[0].transport, "HCCS");
  EXPECT_EQ(spread[0].ranks, 2u);
  EXPECT_DOUBLE_EQ(spread[0].gap_ratio, 0);
  const TransportSpread& rdma = spread[1];
  EXPECT_EQ(rdma.transport, "RDMA");
  EXPECT_EQ(rdma.ranks, 3u);
  EXPECT_EQ(rdma.slow_rank, 1);
  EXPECT_DOUBLE_EQ(rdma.slow_gbps, 10);
  EXPECT_EQ(rdma.fast_rank, 0);  // the first of the fastest
  EXPECT_DOUBLE_EQ(rdma.fast_gbps, 20);
  EXPECT_DOUBLE_EQ(rdma.mean_gbps, 50.0 / 3);
  EXPECT_DOUBLE_EQ(rdma.gap_ratio, 10 / (50.0 / 3));
  EXPECT_DOUBLE_EQ(rdma.slow_time_ms, 20);
}

TEST(SpreadOfTransports, OneRankHasNoSpread) {
  EXPECT_TRUE(SpreadOfTransports({Rank(0, {Total("RDMA", 200, 10)})}).empty());
}

AscendCommOp Op(std::string name, std::string step, double elapse_ms, double rdma_ms, double rdma_mb = 64) {
  AscendCommOp op;
  op.op_name = std::move(name);
  op.group = "g";
  op.step = std::move(step);
  op.elapse_ms = elapse_ms;
  AscendTransport rdma;
  rdma.transport = "RDMA";
  rdma.size_mb = rdma_mb;
  rdma.time_ms = rdma_ms;
  rdma.bandwidth_gbps = rdma_mb / rdma_ms;
  op.transports.push_back(rdma);
  return op;
}

TEST(FindRetransmissions, ALongTransitEveryRankSpentIsASuspect) {
  RankCommunication a, b;
  a.rank = 0;
  b.rank = 1;
  a.ascend_ops = {Op("hcom_allReduce__1", "step1", 5200, 5000), Op("hcom_allReduce__2", "step1", 4500, 4200),
                  Op("hcom_allReduce__3", "step1", 300, 200)};
  // Rank 1 reached __2 late: it spent 1 s there, so rank 0's 4.2 s transit was its wait, not a retransmission.
  b.ascend_ops = {Op("hcom_allReduce__1", "step1", 5100, 4900), Op("hcom_allReduce__2", "step1", 1000, 900),
                  Op("hcom_allReduce__3", "step1", 300, 200)};
  AscendCommOp total = Op("Total Op Info", "step1", 9000, 9000);
  total.total = true;  // sums are never a transfer
  a.ascend_ops.push_back(total);
  const std::vector<RetransmissionSuspect> found = FindRetransmissions({a, b});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].rank, 0);
  EXPECT_EQ(found[0].op_name, "hcom_allReduce__1");
  EXPECT_DOUBLE_EQ(found[0].rdma_time_ms, 5000);
  EXPECT_DOUBLE_EQ(found[0].min_elapse_ms, 5100);
  EXPECT_EQ(found[1].rank, 1);
  EXPECT_DOUBLE_EQ(found[1].rdma_time_ms, 4900);
}

TEST(FindRetransmissions, AtTheLimitOrWithoutRdmaTrafficNothing) {
  RankCommunication a;
  a.ascend_ops = {Op("hcom_allReduce__1", "step1", 4000, 4000), Op("hcom_allReduce__2", "step1", 6000, 5000, 0)};
  EXPECT_TRUE(FindRetransmissions({a}).empty());
}

}  // namespace
}  // namespace tuneprof

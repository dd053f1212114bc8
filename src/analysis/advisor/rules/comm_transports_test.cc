// communication.slow_link and communication.retransmission on hand-built cross-rank summaries: the
// finding fires on the slow (retransmitting) rank only, with the figures of transport_checks.h.
#include <gtest/gtest.h>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof::rule_test {
namespace {

std::vector<RankAdviceDraft> Drafts(size_t n) {
  std::vector<RankAdviceDraft> drafts(n);
  for (size_t i = 0; i < n; ++i) {
    drafts[i].advice.rank = static_cast<int64_t>(i);
    drafts[i].on_npu = true;
    drafts[i].advice.split.steps = 2;
    drafts[i].advice.split.step_ns = 100e6;
    drafts[i].advice.split.part_ns[static_cast<size_t>(TimePart::kCommunication)] = 60e6;
    drafts[i].advice.split.part_ns[static_cast<size_t>(TimePart::kComputeBound)] = 40e6;
  }
  return drafts;
}

TransportSpread Rdma(double gap_ratio) {
  TransportSpread s;
  s.transport = "RDMA";
  s.ranks = 2;
  s.slow_rank = 1;
  s.slow_gbps = 10;
  s.slow_size_mb = 200;
  s.slow_time_ms = 20;
  s.fast_rank = 0;
  s.fast_gbps = 20;
  s.mean_gbps = 15;
  s.gap_ratio = gap_ratio;
  return s;
}

TEST(SlowLink, FiresOnTheSlowRankWithBothBandwidths) {
  CrossRankCommunication cross;
  cross.transport_spread = {Rdma(10.0 / 15)};
  const AdvisorResult result = CombineAdvice(Drafts(2), {}, AdvisorConfig(), &cross);
  const Finding* f = Find(result, "communication.slow_link");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->ranks, std::vector<int64_t>{1});
  ExpectNumbers(*f, {{"RDMA_gbps", 10}, {"RDMA_mean_gbps", 15}, {"RDMA_fastest_rank", 0}, {"RDMA_fastest_gbps", 20}});
  // 200 MB at the mean 15 GB/s take 13.333 ms of its 20: 6.667 ms over two steps.
  EXPECT_NEAR(f->uncapped_gain_ns, (20 - 200 / 15.0) * 1e6 / 2, 1);
  EXPECT_EQ(f->title,
            "rank 1's RDMA bandwidth is the slowest of the run: 10.000 GB/s against a mean of 15.000 GB/s (66.7 % "
            "spread across 2 ranks)");
}

TEST(SlowLink, QuietBelowMsprofAnalyzesRatioAndWithoutCrossRankData) {
  CrossRankCommunication cross;
  cross.transport_spread = {Rdma(0.049)};
  EXPECT_EQ(Find(CombineAdvice(Drafts(2), {}, AdvisorConfig(), &cross), "communication.slow_link"), nullptr);
  EXPECT_EQ(Find(CombineAdvice(Drafts(2), {}, AdvisorConfig(), nullptr), "communication.slow_link"), nullptr);
}

TEST(Retransmission, NamesTheRankAndItsLongestTransfer) {
  CrossRankCommunication cross;
  RetransmissionSuspect s;
  s.rank = 0;
  s.group = "g";
  s.op_name = "hcom_allReduce__1";
  s.step = "step1";
  s.rdma_size_mb = 64;
  s.rdma_time_ms = 5000;
  s.rdma_gbps = 0.0128;
  s.min_elapse_ms = 5100;
  cross.retransmissions = {s};
  const AdvisorResult result = CombineAdvice(Drafts(2), {}, AdvisorConfig(), &cross);
  const Finding* f = Find(result, "communication.retransmission");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->ranks, std::vector<int64_t>{0});
  ExpectNumbers(*f, {{"longest_transit_ms", 5000}, {"limit_ms", 4000}});
  EXPECT_EQ(Text(*f, "operation"), "hcom_allReduce__1 (group g, step1)");
  EXPECT_TRUE(f->gain_unknown());
  EXPECT_EQ(f->title,
            "1 RDMA transfer of rank 0 took over 4 s, longest 5.000 s (hcom_allReduce__1 of group g, step1): the "
            "network likely retransmitted");
}

}  // namespace
}  // namespace tuneprof::rule_test

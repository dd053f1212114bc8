// communication.json read as `comm` and the advice read it, where the time info's Transit Time is 0: the
// transit comes from the bandwidth info, or stays unknown; a zero transit never makes a wait ratio of 1.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/comm_cross_rank.h"
#include "importers/ascend/ascend_communication.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

// One allreduce per step: the time info says Transit 0 and Wait 0.5 ms of a 160 ms op; the bandwidth
// info says HCCS moved 93 MB in `hccs_ms` (0: no transit anywhere).
std::string CommunicationJson(double hccs_ms) {
  const std::string op = R"json({
    "Communication Time Info": {"Start Timestamp(us)": 1000.0, "Elapse Time(ms)": 160.0, "Transit Time(ms)": 0,
      "Wait Time(ms)": 0.5, "Synchronization Time(ms)": 0.2, "Idle Time(ms)": 66.5, "Wait Time Ratio": 1.0,
      "Synchronization Time Ratio": 1.0},
    "Communication Bandwidth Info": {
      "RDMA": {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0, "Large Packet Ratio": 0,
        "Size Distribution": {}},
      "HCCS": {"Transit Size(MB)": 93.0, "Transit Time(ms)": HCCS_MS, "Bandwidth(GB/s)": 1.0,
        "Large Packet Ratio": 1.0, "Size Distribution": {"93.0": [1, HCCS_MS]}}}})json";
  std::string text = R"json({"step1": {"p2p": {}, "collective": {"hcom_allReduce__1_0_1@77": )json" + op + "}}}";
  const std::string number = hccs_ms > 0 ? std::to_string(hccs_ms) : "0";
  for (size_t at = text.find("HCCS_MS"); at != std::string::npos; at = text.find("HCCS_MS"))
    text.replace(at, 7, number);
  return text;
}

RankCommunication ReadRank(double hccs_ms, Trace* trace) {
  SideTableBuilder side(trace);
  const Status status = ReadCommunicationJson(CommunicationJson(hccs_ms), "communication.json", &side);
  EXPECT_TRUE(status.ok()) << status.message();
  return AnalyzeRankCommunication(*trace, ComputeTimeBreakdown(*trace), HardwareSelection{});
}

TEST(AscendZeroTransitTest, TransitComesFromTheBandwidthInfo) {
  Trace trace = TraceBuilder("rank").Finish();
  const RankCommunication rank = ReadRank(93.0, &trace);
  ASSERT_EQ(rank.ascend_ops.size(), 1u);
  const AscendCommOp& op = rank.ascend_ops[0];
  EXPECT_DOUBLE_EQ(op.transit_ms, 93.0);
  EXPECT_TRUE(op.transit_from_bandwidth);  // an estimate, which comm says
  ASSERT_TRUE(op.wait_ratio.has_value());
  EXPECT_NEAR(*op.wait_ratio, 0.5 / 93.5, 1e-12);
  ASSERT_TRUE(rank.ascend_wait_ratio.has_value());
  EXPECT_NEAR(*rank.ascend_wait_ratio, 0.5 / 93.5, 1e-12);
  EXPECT_DOUBLE_EQ(*op.file_wait_ratio, 1.0);  // the file's own figure stays as written
}

TEST(AscendZeroTransitTest, TransitFromTheBandwidthInfoIsAtMostWhatTheOpDidNotWait) {
  Trace trace = TraceBuilder("rank").Finish();
  const RankCommunication rank = ReadRank(400.0, &trace);  // transports' tasks overlap: their sum exceeds the op
  ASSERT_EQ(rank.ascend_ops.size(), 1u);
  EXPECT_DOUBLE_EQ(rank.ascend_ops[0].transit_ms, 159.5);
}

TEST(AscendZeroTransitTest, NoTransitAnywhereLeavesTheRatioUnknown) {
  Trace trace = TraceBuilder("rank").Finish();
  const RankCommunication rank = ReadRank(0, &trace);
  ASSERT_EQ(rank.ascend_ops.size(), 1u);
  EXPECT_FALSE(rank.ascend_ops[0].wait_ratio.has_value());
  EXPECT_FALSE(rank.ascend_ops[0].transit_from_bandwidth);
  EXPECT_FALSE(rank.ascend_wait_ratio.has_value());
  EXPECT_DOUBLE_EQ(rank.ascend_ops[0].wait_ms, 0.5);  // the wait itself is still known
}

TEST(AscendZeroTransitTest, NoRankIsSaidToWaitFromAZeroTransit) {
  for (double hccs_ms : {93.0, 0.0}) {
    CommAnalysis analysis;
    for (int64_t r = 0; r < 4; ++r) {
      Trace trace = TraceBuilder("rank").Finish();
      analysis.ranks.push_back(ReadRank(hccs_ms, &trace));
      analysis.ranks.back().rank = r;
    }
    JudgeCommunication(&analysis);
    for (const std::string& reason : analysis.reasons)
      EXPECT_EQ(reason.find("wait ratio"), std::string::npos) << hccs_ms << ": " << reason;
  }
}

}  // namespace
}  // namespace tuneprof

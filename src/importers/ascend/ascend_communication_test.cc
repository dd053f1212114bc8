// communication.json / communication_matrix.json: small inline files for every shape torch_npu writes,
// errors that name the key, and the real rank directories read through ImportAscendDirectory.
#include "importers/ascend/ascend_communication.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "importers/ascend/ascend_directory.h"
#include "importers/ascend/communication_walker.h"
#include "io/memory_source.h"
#include "test_corpus.h"

namespace tuneprof {
namespace {

Trace Empty() { return TraceBuilder("test").Finish(); }

constexpr std::string_view kOps = R"json({"step50": {"p2p": {}, "collective": {
  "hcom_allReduce__586_0_1@1752": {
    "Communication Time Info": {"Start Timestamp(us)": 1736408883732241.5, "Elapse Time(ms)": 79.0, "Transit Time(ms)": 0.25,
      "Wait Time(ms)": 5.5, "Synchronization Time(ms)": 5.0, "Idle Time(ms)": 73.25, "Wait Time Ratio": 0.9565,
      "Synchronization Time Ratio": 0.9524},
    "Communication Bandwidth Info": {
      "RDMA": {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0, "Large Packet Ratio": 0, "Size Distribution": {}},
      "HCCS": {"Transit Size(MB)": 28.5, "Transit Time(ms)": 1.5, "Bandwidth(GB/s)": 19.0, "Large Packet Ratio": 0.0,
        "Size Distribution": {"2.0": [12, 1.25], "0.5": [2, 0.25]}}}},
  "Total Op Info": {
    "Communication Time Info": {"Elapse Time(ms)": 79.0, "Transit Time(ms)": 0.25, "Wait Time(ms)": 5.5,
      "Synchronization Time(ms)": 5.0, "Idle Time(ms)": 73.25, "Wait Time Ratio": null, "Unknown key": [1, {"x": 2}]},
    "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 28.5, "Transit Time(ms)": 1.5,
      "Size Distribution": {"2.0": [12, 1.25], "0.5": [2, 0.25]}}}}}}})json";

TEST(AscendCommunicationTest, ReadsOpsTransportsAndPacketBuckets) {
  Trace trace = Empty();
  SideTableBuilder out(&trace);
  Status status = ReadCommunicationJson(kOps, "communication.json", &out);
  ASSERT_TRUE(status.ok()) << status.message();
  const CommunicationTables& t = trace.communication();
  EXPECT_TRUE(t.ops_present);
  EXPECT_FALSE(t.matrix_present);
  ASSERT_EQ(t.ops.size(), 2u);
  const HcclOpTime& op = t.ops[0];
  EXPECT_EQ(trace.str(op.step), "step50");
  EXPECT_FALSE(op.p2p);
  EXPECT_FALSE(op.total);
  EXPECT_EQ(trace.str(op.op_name), "hcom_allReduce__586_0_1");
  EXPECT_EQ(trace.str(op.group), "1752");
  EXPECT_DOUBLE_EQ(op.start_us, 1736408883732241.5);
  EXPECT_DOUBLE_EQ(op.elapse_ms, 79.0);
  EXPECT_DOUBLE_EQ(op.transit_ms, 0.25);
  EXPECT_DOUBLE_EQ(op.wait_ms, 5.5);
  EXPECT_DOUBLE_EQ(op.synchronization_ms, 5.0);
  EXPECT_DOUBLE_EQ(op.idle_ms, 73.25);
  EXPECT_DOUBLE_EQ(op.wait_ratio, 0.9565);
  ASSERT_EQ(op.traffic_count, 2u);
  const HcclTransportTraffic& hccs = t.traffic[op.first_traffic + 1];
  EXPECT_EQ(trace.str(hccs.transport), "HCCS");
  EXPECT_DOUBLE_EQ(hccs.transit_size_mb, 28.5);
  EXPECT_DOUBLE_EQ(hccs.bandwidth_gbps, 19.0);
  ASSERT_EQ(hccs.bucket_count, 2u);
  EXPECT_DOUBLE_EQ(t.buckets[hccs.first_bucket].packet_mb, 2.0);
  EXPECT_EQ(t.buckets[hccs.first_bucket].count, 12);
  EXPECT_DOUBLE_EQ(t.buckets[hccs.first_bucket + 1].transit_ms, 0.25);

  const HcclOpTime& total = t.ops[1];
  EXPECT_TRUE(total.total);
  EXPECT_TRUE(std::isnan(total.wait_ratio));  // null
  EXPECT_TRUE(std::isnan(total.start_us));    // absent
  ASSERT_EQ(total.traffic_count, 1u);
  EXPECT_TRUE(std::isnan(t.traffic[total.first_traffic].bandwidth_gbps));  // totals omit it
}

TEST(AscendCommunicationTest, ReadsMatrixCells) {
  Trace trace = Empty();
  SideTableBuilder out(&trace);
  constexpr std::string_view kMatrix = R"json({"step2": {"p2p": {}, "collective": {"allreduce-total@99": {
    "0-1": {"Transport Type": "HCCS", "Transit Size(MB)": 37.5, "Transit Time(ms)": 2.0, "Bandwidth(GB/s)": 18.75,
            "Op Name": "hcom_allReduce__1_2_1"},
    "12-3": {"Transport Type": "RDMA", "Transit Size(MB)": 1, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 2,
             "Op Name": ""}}}}})json";
  Status status = ReadCommunicationMatrixJson(kMatrix, "communication_matrix.json", &out);
  ASSERT_TRUE(status.ok()) << status.message();
  const CommunicationTables& t = trace.communication();
  EXPECT_TRUE(t.matrix_present);
  ASSERT_EQ(t.links.size(), 2u);
  EXPECT_EQ(trace.str(t.links[0].op_key), "allreduce-total");
  EXPECT_EQ(trace.str(t.links[0].group), "99");
  EXPECT_EQ(t.links[0].src_rank, 0);
  EXPECT_EQ(t.links[0].dst_rank, 1);
  EXPECT_EQ(trace.str(t.links[0].transport), "HCCS");
  EXPECT_DOUBLE_EQ(t.links[0].bandwidth_gbps, 18.75);
  EXPECT_EQ(trace.str(t.links[0].op_name), "hcom_allReduce__1_2_1");
  EXPECT_EQ(t.links[1].src_rank, 12);
  EXPECT_EQ(t.links[1].dst_rank, 3);
}

TEST(AscendCommunicationTest, ErrorsNameTheFileAndTheKey) {
  Trace trace = Empty();
  SideTableBuilder out(&trace);
  Status status = ReadCommunicationJson(
      R"json({"step1": {"collective": {"hcom_x@1": {"Communication Time Info": {"Wait Time(ms)": "slow"}}}}})json",
      "c.json", &out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("c.json"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("Wait Time(ms)"), std::string::npos) << status.message();

  status = ReadCommunicationMatrixJson(R"json({"s": {"p2p": {"send-total@1": {"a-b": {}}}}})json", "m.json", &out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("a-b"), std::string::npos) << status.message();

  EXPECT_FALSE(ReadCommunicationJson("[1, 2]", "c.json", &out).ok());
  EXPECT_FALSE(ReadCommunicationJson(R"json({"s": {"collective": {"op": {"Communication Bandwidth Info": {"HCCS":
    {"Size Distribution": {"big": [1, 2]}}}}}}})json",
                                     "c.json", &out)
                   .ok());
  EXPECT_FALSE(ReadCommunicationJson("{\"s\": ", "c.json", &out).ok());
}

// msprof-analyze's cluster_communication.json: one record per rank under each group / step / op, each
// read as that rank's communication.json would read it; send / receive are p2p by name.
constexpr std::string_view kClusterOps = R"json({"(0, 1)": {"step": {
  "hcom_broadcast__501_0@62": {
    "0": {"Communication Time Info": {"Start Timestamp(us)": 1000.0, "Elapse Time(ms)": 12.0, "Transit Time(ms)": 0.5,
            "Wait Time(ms)": 11.0, "Synchronization Time(ms)": 10.0, "Idle Time(ms)": 0.5},
          "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 2.0, "Transit Time(ms)": 0.5,
            "Bandwidth(GB/s)": 4.0, "Size Distribution": {"1.0": [2, 0.5]}}}},
    "1": {"Communication Time Info": {"Start Timestamp(us)": 11000.0, "Elapse Time(ms)": 1.5, "Transit Time(ms)": 0.5,
            "Wait Time(ms)": 0.25}}},
  "hcom_send__7_0@62": {"5": {"Communication Time Info": {"Elapse Time(ms)": 3.0}}, "1": {}}}},
  "x": {"step": {"hcom_receive__7_0@77": {"0": {"Communication Time Info": {"Elapse Time(ms)": 2.0}}}}}})json";

TEST(AscendCommunicationTest, ClusterRecordsGoToTheirRanks) {
  Trace rank0 = Empty(), rank1 = Empty();
  SideTableBuilder out0(&rank0), out1(&rank1);
  auto read = ReadClusterCommunicationJson(kClusterOps, "cluster_communication.json", [&](int64_t rank) {
    return rank == 0 ? &out0 : rank == 1 ? &out1 : nullptr;
  });
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->unknown_ranks, std::set<int64_t>{5});
  ASSERT_EQ(read->group_ranks.size(), 1u);  // "x" lists no ranks
  EXPECT_EQ(read->group_ranks.at("62"), (std::vector<int64_t>{0, 1}));
  const CommunicationTables& c0 = rank0.communication();
  ASSERT_TRUE(c0.ops_present);
  ASSERT_EQ(c0.ops.size(), 2u);
  EXPECT_EQ(rank0.str(c0.ops[0].op_name), "hcom_broadcast__501_0");
  EXPECT_EQ(rank0.str(c0.ops[0].group), "62");
  EXPECT_EQ(rank0.str(c0.ops[0].step), "step");
  EXPECT_FALSE(c0.ops[0].p2p);
  EXPECT_DOUBLE_EQ(c0.ops[0].wait_ms, 11.0);
  EXPECT_DOUBLE_EQ(c0.ops[0].start_us, 1000.0);
  ASSERT_EQ(c0.ops[0].traffic_count, 1u);
  EXPECT_DOUBLE_EQ(c0.traffic[c0.ops[0].first_traffic].transit_size_mb, 2.0);
  EXPECT_EQ(c0.buckets.size(), 1u);
  EXPECT_TRUE(c0.ops[1].p2p);  // hcom_receive
  const CommunicationTables& c1 = rank1.communication();
  ASSERT_EQ(c1.ops.size(), 2u);
  EXPECT_DOUBLE_EQ(c1.ops[0].wait_ms, 0.25);
  EXPECT_TRUE(c1.ops[1].p2p);  // hcom_send, an empty record: every figure unknown
  EXPECT_TRUE(std::isnan(c1.ops[1].elapse_ms));
}

// msprof-analyze adds each group's "Total Op Info" per step and rank, as torch_npu adds one per section:
// the rank's totals, not an op.
TEST(AscendCommunicationTest, ClusterTotalOpInfoIsTheRanksTotal) {
  Trace rank0 = Empty();
  SideTableBuilder out0(&rank0);
  auto read = ReadClusterCommunicationJson(
      R"json({"(0, 1)": {"step": {"Total Op Info": {"0": {"Communication Time Info": {"Elapse Time(ms)": 4.0},
        "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 2.0, "Transit Time(ms)": 0.5}}}}}}})json",
      "cluster_communication.json", [&](int64_t rank) { return rank == 0 ? &out0 : nullptr; });
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(read->group_ranks.empty());
  ASSERT_EQ(rank0.communication().ops.size(), 1u);
  EXPECT_TRUE(rank0.communication().ops[0].total);
  EXPECT_EQ(rank0.communication().ops[0].traffic_count, 1u);
}

TEST(AscendCommunicationTest, ClusterErrorsNameTheFileAndTheKey) {
  Trace trace = Empty();
  SideTableBuilder out(&trace);
  const auto to_out = [&](int64_t) { return &out; };
  for (std::string_view json :
       {R"json({"(0, 1)": {"step": {"op@1": {"r0": {}}}}})json",
        R"json({"(0, 1)": {"step": {"op@1": {"0": [1]}}}})json",
        R"json({"(0, 1)": {"step": {"op@1": {"0": {"Communication Time Info": {"Wait Time(ms)": "x"}}}}}})json",
        R"json({"(0, 1)": {"step": [1]}})json", R"json({"(0, 1)": {"step": {"op@1": {"0": {)json", "[]", ""}) {
    auto read = ReadClusterCommunicationJson(json, "cluster_communication.json", to_out);
    ASSERT_FALSE(read.ok()) << json;
    EXPECT_NE(read.status().message().find("cluster_communication.json"), std::string::npos) << read.status().message();
    EXPECT_EQ(read.status().message().find('\n'), std::string::npos) << read.status().message();
  }
}

// A window far smaller than the file and reads of a few bytes: every refill boundary falls inside a key,
// a number or an op, and the ops read are those of the whole document.
TEST(AscendCommunicationTest, StreamsOpsThroughASmallWindow) {
  for (size_t max_read : {1u, 3u, 7u, 64u}) {
    MemorySource source("communication.json", kOps, max_read);
    CommunicationWalker walker(&source, "communication.json", /*chunk_bytes=*/16);
    std::vector<std::string> seen;
    Status status =
        walker.Run([&](std::string_view step, bool p2p, std::string_view key, simdjson::padded_string_view value) {
          seen.push_back(fmt::format("{} {} {} {}", step, p2p, key, value.size()));
          EXPECT_EQ(value.front(), '{');
          EXPECT_EQ(value.back(), '}');
          return Status();
        });
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_TRUE(seen[0].starts_with("step50 false hcom_allReduce__586_0_1@1752 ")) << seen[0];
    EXPECT_TRUE(seen[1].starts_with("step50 false Total Op Info ")) << seen[1];
  }
}

TEST(AscendCommunicationTest, StreamedKeysAreUnescapedAndOtherSectionsSkipped) {
  Trace trace = Empty();
  SideTableBuilder out(&trace);
  Status status = ReadCommunicationJson(
      R"json({"st\u0065p1": {"notes": {"a": [1, "}", {"b": null}]}, "size": 3, "collective": {"hcom_\"q\"@7":
        {"Communication Time Info": {"Wait Time(ms)": 1.5}}}}})json",
      "c.json", &out);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(trace.communication().ops.size(), 1u);
  EXPECT_EQ(trace.str(trace.communication().ops[0].step), "step1");
  EXPECT_EQ(trace.str(trace.communication().ops[0].op_name), "hcom_\"q\"");
  EXPECT_DOUBLE_EQ(trace.communication().ops[0].wait_ms, 1.5);
  EXPECT_FALSE(ReadCommunicationJson(R"json({"s": {"collective": {}}} trailing)json", "c.json", &out).ok());
  EXPECT_FALSE(ReadCommunicationJson(R"json({"s": {"collective": {"op": {"a": 1})json", "c.json", &out).ok());
}

// Ops of `count` in one group, each waiting `wait_ms` and moving 2 MB over HCCS in 1 ms, in step 50.
std::string OpsOfOneStep(int count, double wait_ms, int groups = 1) {
  std::string json = R"json({"step50": {"collective": {)json";
  for (int i = 0; i < count; ++i) {
    json += fmt::format(R"json({}"hcom_allReduce__{}@{}": {{"Communication Time Info": {{"Wait Time(ms)": {},
      "Transit Time(ms)": 1.0, "Elapse Time(ms)": 1.5}}, "Communication Bandwidth Info": {{"HCCS":
      {{"Transit Size(MB)": 2.0, "Transit Time(ms)": 1.0, "Bandwidth(GB/s)": 2.0}}}}}})json",
                        i == 0 ? "" : ", ", i, i % groups, wait_ms);
  }
  return json + R"json(, "Total Op Info": {"Communication Time Info": {"Wait Time(ms)": 1}}}}})json";
}

Trace StepOf156Ms() {
  Trace trace = Empty();
  SideTableBuilder out(&trace);
  out.AddStep(Step{50, kNoIndex, 0, 156'000'000});
  return trace;
}

// One group's ops run one after another: 3 x 101 ms of wait and transit cannot fit in a 156 ms step.
// That split is dropped; the ops, their elapse and their traffic stand.
TEST(AscendCommunicationTest, DropsTheSplitOfAStepWhoseOpsOutlastIt) {
  Trace trace = StepOf156Ms();
  SideTableBuilder out(&trace);
  Status status = ReadCommunicationJson(OpsOfOneStep(3, 100.0), "c.json", &out);
  ASSERT_TRUE(status.ok()) << status.message();
  const CommunicationTables& comm = trace.communication();
  EXPECT_TRUE(comm.ops_present);
  ASSERT_EQ(comm.ops.size(), 4u);
  for (const HcclOpTime& op : comm.ops) {
    EXPECT_TRUE(op.split_dropped);
    EXPECT_TRUE(std::isnan(op.wait_ms) && std::isnan(op.transit_ms) && std::isnan(op.idle_ms));
    EXPECT_TRUE(std::isnan(op.synchronization_ms) && std::isnan(op.wait_ratio));
  }
  EXPECT_EQ(comm.ops[0].elapse_ms, 1.5);
  ASSERT_EQ(comm.ops[0].traffic_count, 1u);
  EXPECT_EQ(comm.traffic[comm.ops[0].first_traffic].transit_size_mb, 2.0);
  EXPECT_EQ(comm.traffic[comm.ops[0].first_traffic].bandwidth_gbps, 2.0);
  ASSERT_EQ(trace.metadata().warnings.size(), 1u);
  const std::string& warning = trace.metadata().warnings[0];
  EXPECT_TRUE(warning.starts_with("c.json: 1 of its 1 step lists")) << warning;
  EXPECT_NE(warning.find("303.000 ms in a 156.000 ms step"), std::string::npos) << warning;
  // Three ops: "Total Op Info" is not one.
  EXPECT_NE(warning.find("idle times of that step's 3 ops are dropped, not clamped"), std::string::npos) << warning;
  EXPECT_NE(warning.find("their count, elapse, sizes and per-transport bandwidth are kept"), std::string::npos)
      << warning;
}

// Three groups of 101 ms each may overlap within the step; and a step the trace does not know is
// checked against all of its steps.
TEST(AscendCommunicationTest, KeepsOpsThatFitTheirStep) {
  Trace trace = StepOf156Ms();
  SideTableBuilder out(&trace);
  ASSERT_TRUE(ReadCommunicationJson(OpsOfOneStep(3, 100.0, /*groups=*/3), "c.json", &out).ok());
  EXPECT_EQ(trace.communication().ops.size(), 4u);
  for (const HcclOpTime& op : trace.communication().ops) EXPECT_FALSE(op.split_dropped);
  EXPECT_TRUE(trace.metadata().warnings.empty());

  Trace unknown_steps = Empty();
  SideTableBuilder none(&unknown_steps);
  ASSERT_TRUE(ReadCommunicationJson(OpsOfOneStep(3, 100.0), "c.json", &none).ok());
  EXPECT_EQ(unknown_steps.communication().ops.size(), 4u);  // no step to check against
}

TEST(AscendCommunicationTest, MissingFileIsNotAnError) {
  Trace trace = Empty();
  SideTableBuilder out(&trace);
  EXPECT_TRUE(ReadCommunicationFile("/nonexistent/communication.json", &out).ok());
  EXPECT_FALSE(trace.communication().ops_present);
}

// The real level1 rank directory: 4 allreduce ops plus the total, 8 "-total" matrix cells among others.
TEST(AscendCommunicationTest, RealRankDirectory) {
  TUNEPROF_REQUIRE_CORPUS();
  const std::string dir =
      std::string(TUNEPROF_SHARED_DIR) + "/traces/ascend/msinsight/test/data/pytorch/text/level1/rank0_ascend_pt";
  auto trace = ImportAscendDirectory(dir);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const CommunicationTables& t = trace->communication();
  EXPECT_TRUE(t.ops_present);
  EXPECT_TRUE(t.matrix_present);
  ASSERT_EQ(t.ops.size(), 5u);
  EXPECT_EQ(trace->str(t.ops[0].op_name), "hcom_allReduce__586_0_1");
  EXPECT_DOUBLE_EQ(t.ops[0].elapse_ms, 79.08952021875);
  EXPECT_DOUBLE_EQ(t.ops[0].wait_ms, 5.64663284375);
  EXPECT_TRUE(t.ops[4].total);
  size_t totals = 0;
  for (const HcclLink& link : t.links) totals += trace->str(link.op_key).ends_with("-total") ? 1 : 0;
  EXPECT_EQ(totals, 8u);
}

}  // namespace
}  // namespace tuneprof

#include "importers/ascend/ascend_cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

std::string EntryEndingWith(const Trace& trace, std::string_view suffix) {
  for (const MetadataEntry& e : trace.metadata().entries) {
    if (e.key.ends_with(suffix)) return e.value;
  }
  return "";
}

// The stage rows of cluster_step_trace_time.csv (stage 0: ranks 0, 1; stage 1: ranks 2, 3) become the pp
// groups Megatron would have formed, (0, 2) and (1, 3); the stage rows never become ranks.
TEST(AscendClusterTest, StageRowsBecomePipelineGroups) {
  const fs::path dir = fs::temp_directory_path() / ("tp_cluster_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "cluster_step_trace_time.csv")
      << "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
         "Communication(Not Overlapped and Exclude Receive)\n"
      << ",rank,0,1,1,0,1,1,2,1,0\n,rank,1,1,1,0,1,1,2,1,0\n,rank,2,2,1,0,1,1,4,0,1\n,rank,3,2,1,0,1,1,4,0,1\n"
      << ",stage,\"(0, 1)\",1,1,0,1,1,2,1,0\n,stage,\"(2, 3)\",2,1,0,1,1,4,0,1\n";
  auto traces = ImportClusterAnalysis(dir.string());
  fs::remove_all(dir);
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  ASSERT_EQ(traces->size(), 4u);
  EXPECT_EQ(EntryEndingWith(traces->at(0), ".group_name"), "pp");
  EXPECT_EQ(EntryEndingWith(traces->at(0), ".global_ranks"), "[0, 2]");
  EXPECT_EQ(EntryEndingWith(traces->at(3), ".global_ranks"), "[1, 3]");
  EXPECT_EQ(traces->at(2).reported_step_times().size(), 1u);
}

// A folder of cluster output for the tests below: three ranks in the CSV, and `communication` (when not
// empty) as cluster_communication.json beside it. Removed when the test's scope ends.
class ClusterFolder {
 public:
  ClusterFolder(std::string_view name, std::string_view communication)
      : dir_(fs::temp_directory_path() / (std::string(name) + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    std::ofstream(dir_ / "cluster_step_trace_time.csv")
        << "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble\n"
        << ",rank,0,10,120,0,120,5,135,0\n,rank,1,10,40,0,40,85,135,0\n,rank,2,10,0,0,0,125,135,0\n";
    if (!communication.empty()) std::ofstream(dir_ / "cluster_communication.json") << communication;
  }
  ~ClusterFolder() { fs::remove_all(dir_); }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

bool AnyWarningHas(const Trace& trace, std::string_view text) {
  for (const std::string& w : trace.metadata().warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

// cluster_communication.json gives the ranks it names their HCCL ops (rank 0 waited for rank 1), each
// group's members from its key; rank 2, which it does not name, keeps its step split alone, and a rank
// the CSV does not list (9) is left out with a warning.
TEST(AscendClusterTest, ClusterCommunicationGivesEachRankItsOps) {
  const ClusterFolder folder("tp_cluster_comm_", R"json({"(0, 1)": {"step": {"hcom_broadcast__501_0@629": {
    "0": {"Communication Time Info": {"Start Timestamp(us)": 100.0, "Elapse Time(ms)": 0.12, "Transit Time(ms)": 0.001,
          "Wait Time(ms)": 0.115}},
    "1": {"Communication Time Info": {"Start Timestamp(us)": 215.0, "Elapse Time(ms)": 0.005, "Transit Time(ms)": 0.001,
          "Wait Time(ms)": 0.0001}},
    "9": {"Communication Time Info": {"Elapse Time(ms)": 1.0}}}}}})json");
  auto traces = ImportClusterAnalysis(folder.path());
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  ASSERT_EQ(traces->size(), 3u);
  const Trace& rank0 = traces->at(0);
  ASSERT_EQ(rank0.communication().ops.size(), 1u);
  EXPECT_DOUBLE_EQ(rank0.communication().ops[0].wait_ms, 0.115);
  EXPECT_EQ(rank0.str(rank0.communication().ops[0].group), "629");
  EXPECT_EQ(EntryEndingWith(rank0, "parallel_group_info.629.global_ranks"), "[0, 1]");
  EXPECT_EQ(EntryEndingWith(traces->at(1), "parallel_group_info.629.global_ranks"), "[0, 1]");
  EXPECT_EQ(EntryEndingWith(rank0, "inventory.cluster_communication.json"), "1 HCCL ops of this rank");
  EXPECT_EQ(traces->at(1).communication().ops.size(), 1u);
  const Trace& rank2 = traces->at(2);
  EXPECT_FALSE(rank2.communication().ops_present);
  EXPECT_EQ(EntryEndingWith(rank2, "inventory.cluster_communication.json"), "no ops of this rank");
  EXPECT_EQ(rank2.reported_step_times().size(), 1u);
  EXPECT_TRUE(rank2.metadata().warnings.empty());
  EXPECT_TRUE(AnyWarningHas(rank0, "the HCCL ops of 2 of them from cluster_communication.json"));
  EXPECT_TRUE(AnyWarningHas(rank0, "rank 9 not in cluster_step_trace_time.csv"));
}

// A cluster_communication.json that does not read costs its ops only: no rank keeps part of them, and one
// warning names the file and where it broke.
TEST(AscendClusterTest, MalformedClusterCommunicationIsOneWarning) {
  const ClusterFolder folder("tp_cluster_bad_", R"json({"(0, 1)": {"step": {"op@1": {"0": {"Communication Time Info":
    {"Wait Time(ms)": 1.0}}, "1": {"Communication Time Info": {"Wait Time(ms)": "late"}}}}}})json");
  auto traces = ImportClusterAnalysis(folder.path());
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  ASSERT_EQ(traces->size(), 3u);
  for (const Trace& trace : *traces) EXPECT_TRUE(trace.communication().ops.empty());
  EXPECT_TRUE(AnyWarningHas(traces->at(0), "cluster_communication.json: (0, 1).step.op@1.1"));
  EXPECT_TRUE(AnyWarningHas(traces->at(0), "from cluster_step_trace_time.csv only"));
}

}  // namespace
}  // namespace tuneprof

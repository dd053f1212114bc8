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

}  // namespace
}  // namespace tuneprof

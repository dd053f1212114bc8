// Ascend rank directories from the shared samples (the corpus, read in place).
#include "importers/ascend/ascend_directory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "importers/ascend/ascend_csv_for_test.h"
#include "importers/ascend/ascend_import_for_test.h"
#include "importers/ascend/ascend_layout.h"
#include "importers/ascend/ascend_tables.h"
#include "importers/import.h"
#include "io/scratch_dir_for_test.h"
#include "test_corpus.h"
#include "trace_warnings.h"

namespace tuneprof {
namespace {

const std::string kText = std::string(TUNEPROF_SHARED_DIR) + "/traces/ascend/msinsight/test/data/pytorch/text/";

using ascend_import::Entry;
using ascend_import::ExpectInventory;
using ascend_import::kServerData;
using ascend_import::MustImport;

TEST(AscendDirectoryTest, RecognisesTheLayouts) {
  TUNEPROF_REQUIRE_CORPUS();
  EXPECT_TRUE(IsAscendProfilerDirectory(kText + "level1/rank0_ascend_pt"));
  EXPECT_TRUE(IsAscendProfilerDirectory(kText + "level1/rank0_ascend_pt/"));
  EXPECT_TRUE(IsAscendProfilerDirectory(kText + "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"));
  EXPECT_TRUE(IsAscendProfilerDirectory(kServerData + "test_rank_0"));  // holds ASCEND_PROFILER_OUTPUT/
  EXPECT_FALSE(IsAscendProfilerDirectory(kText + "level1"));            // a parent of ranks
  EXPECT_FALSE(IsAscendProfilerDirectory(kText + "level1/rank0_ascend_pt/profiler_info_0.json"));
}

TEST(AscendDirectoryTest, Level1RankDirectory) {
  TUNEPROF_REQUIRE_CORPUS();
  Trace t = MustImport(kText + "level1/rank1_ascend_pt");
  EXPECT_EQ(t.metadata().path, kText + "level1/rank1_ascend_pt");
  EXPECT_EQ(t.metadata().format, TraceFormat::kTorchNpuTraceView);
  EXPECT_EQ(t.metadata().rank, 1);
  EXPECT_EQ(t.metadata().rank_source, RankSource::kTrace);
  EXPECT_GT(t.events().size(), 1000u);  // the trace_view.json timeline
  EXPECT_TRUE(t.kernel_details().present);
  EXPECT_EQ(t.kernel_details().rows.size(), 191u);
  ASSERT_NE(t.kernel_metric("aic_mac_ratio"), nullptr);
  ASSERT_EQ(t.reported_step_times().size(), 1u);
  EXPECT_EQ(t.reported_step_times()[0].step, 50);
  EXPECT_EQ(Entry(t, "profiler_info.config.experimental_config._aic_metrics"), "ACL_AICORE_PIPE_UTILIZATION");
  EXPECT_EQ(Entry(t, "profiler_info.rank_id"), "1");
  EXPECT_EQ(Entry(t, "profiler_metadata.ENV_VARIABLES.HCCL_RDMA_TC"), "");
  for (const std::string& w : t.metadata().warnings) ADD_FAILURE() << w;
}

TEST(AscendDirectoryTest, FirstStartTimeAndStepTimesExact) {
  TUNEPROF_REQUIRE_CORPUS();
  Trace t = MustImport(kText + "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT");  // the output folder alone
  EXPECT_EQ(t.metadata().rank, 0);
  ASSERT_FALSE(t.kernel_details().rows.empty());
  const NpuOpRow& first = t.kernel_details().rows[0];
  EXPECT_EQ(t.str(first.name), "trans_TransData_0");
  EXPECT_EQ(first.start_ns, 1736408883704643212);  // "1736408883704643.212\t"
  EXPECT_EQ(first.dur_ns, 53741);
  EXPECT_EQ(t.str(first.input_shapes), "32,3,224,224");
  ASSERT_EQ(t.reported_step_times().size(), 1u);
  ascend_csv::ExpectStepTime(t.reported_step_times()[0], ascend_csv::Level1Rank0StepTime());
}

TEST(AscendDirectoryTest, Level0HasEightColumnsAndNoMetrics) {
  TUNEPROF_REQUIRE_CORPUS();
  Trace t = MustImport(kText + "level0/rank0_ascend_pt");
  EXPECT_EQ(t.kernel_details().rows.size(), 191u);
  EXPECT_TRUE(t.kernel_details().metrics.empty());
}

TEST(AscendDirectoryTest, NoTraceViewStillLoadsTheSummariesWithAWarning) {
  TUNEPROF_REQUIRE_CORPUS();
  Trace t = MustImport(kServerData + "test_rank_1");
  EXPECT_EQ(t.metadata().rank, 1);
  EXPECT_EQ(t.events().size(), 0u);
  EXPECT_FALSE(t.kernel_details().rows.empty());
  ASSERT_EQ(t.reported_step_times().size(), 1u);
  EXPECT_EQ(t.reported_step_times()[0].preparing_ns, kNoId);  // 2023: no Preparing column
  bool warned = false;
  for (const std::string& w : t.metadata().warnings) warned |= w.find("trace_view.json: missing") != std::string::npos;
  EXPECT_TRUE(warned);
}

// msprof-analyze's test files: ArithmeticUtilization (2023, no OP State / HF32) and PipeUtilization
// with MIX_AIC MatMuls. Row counts from Python's csv module.
TEST(AscendDirectoryTest, MsprofAnalyzeKernelDetailsFiles) {
  TUNEPROF_REQUIRE_CORPUS();
  const std::string base =
      std::string(TUNEPROF_SHARED_DIR) + "/traces/ascend/mstt/profiler/msprof_analyze/test/ut/advisor/";
  struct Case {
    std::string path;
    size_t rows;
    std::string_view metric;
    int64_t first_start_ns;
  };
  for (const Case& c :
       {Case{base + "advisor_backend/compute_advice/kernel_details.csv", 591, "aic_mac_fp16_ratio",
             1699529622790614800},
        Case{base + "compute_advice/data/kernel_details.csv", 29, "aic_mac_ratio", 1736413971558972912}}) {
    Trace t = TraceBuilder(c.path).Finish();
    SideTableBuilder out(&t);
    auto csv = CsvReader::Open(c.path);
    ASSERT_TRUE(csv.ok()) << csv.status().message();
    Status status = ReadKernelDetails(&csv.value(), &out);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(t.kernel_details().rows.size(), c.rows) << c.path;
    EXPECT_EQ(t.kernel_details().rows[0].start_ns, c.first_start_ns) << c.path;
    EXPECT_NE(t.kernel_metric(c.metric), nullptr) << c.path;
    EXPECT_TRUE(t.metadata().warnings.empty()) << c.path << ": " << t.metadata().warnings[0];
  }
}

TEST(AscendDirectoryTest, DatabaseOnlyExportIsReadFromTheDatabase) {
  TUNEPROF_REQUIRE_CORPUS();
  // importers/ascend/ascend_db_test.cc checks the contents.
  auto traces =
      ImportPaths({std::string(TUNEPROF_SHARED_DIR) + "/traces/ascend/msinsight/test/data/pytorch/db/level1"});
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  ASSERT_EQ(traces->size(), 2u);
  EXPECT_EQ((*traces)[1].metadata().rank, 1);
  EXPECT_EQ((*traces)[1].kernel_details().rows.size(), 191u);
}

TEST(AscendDirectoryTest, TextInventoryCountsRowsAndNamesTheMissingFiles) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace t = MustImport(kText + "level0/rank0_ascend_pt");
  ExpectInventory(t, {{"ASCEND_PROFILER_OUTPUT/kernel_details.csv", "191 rows"},
                      {"ASCEND_PROFILER_OUTPUT/npu_module_mem.csv", "1001 rows, counted only"},
                      {"ASCEND_PROFILER_OUTPUT/operator_memory.csv", "184 rows"},
                      {"ASCEND_PROFILER_OUTPUT/communication.json", "missing"},
                      {"ASCEND_PROFILER_OUTPUT/trace_view.json", "8375 rows"}});
}

TEST(AscendDirectoryTest, ParentOfRanksImportsOneTracePerRank) {
  TUNEPROF_REQUIRE_CORPUS();
  auto traces = ImportPaths({kText + "level1"});
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  ASSERT_EQ(traces->size(), 2u);
  EXPECT_EQ((*traces)[0].metadata().rank, 0);
  EXPECT_EQ((*traces)[1].metadata().rank, 1);
  EXPECT_EQ((*traces)[1].kernel_details().rows.size(), 191u);
}

namespace fs = std::filesystem;

// A copy of the level1 rank 0 directory keeping only `keep` of its output files.
fs::path PartialCopy(const std::string& name, std::initializer_list<std::string_view> keep) {
  const fs::path dir =
      fs::temp_directory_path() / ("tp_partial_" + name + "_" + std::to_string(::getpid())) / "rank0_ascend_pt";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir / "ASCEND_PROFILER_OUTPUT");
  const fs::path source = kText + "level1/rank0_ascend_pt";
  fs::copy_file(source / "profiler_info_0.json", dir / "profiler_info_0.json");
  for (std::string_view file : keep) {
    fs::copy_file(source / "ASCEND_PROFILER_OUTPUT" / file, dir / "ASCEND_PROFILER_OUTPUT" / file);
  }
  return dir;
}

TEST(AscendDirectoryTest, SummaryOnlyRankLoadsItsSummaries) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path dir = PartialCopy("summary", {"step_trace_time.csv", "communication.json"});
  Trace t = MustImport(dir.string());
  EXPECT_EQ(t.metadata().format, TraceFormat::kTorchNpuTraceView);
  EXPECT_EQ(t.metadata().rank, 0);
  ASSERT_EQ(t.reported_step_times().size(), 1u);
  EXPECT_EQ(t.reported_step_times()[0].stage_ns, 136'581'000);
  EXPECT_FALSE(t.communication().ops.empty());
  bool said = false;
  for (const std::string& w : t.metadata().warnings) said |= w.find("export_type") != std::string::npos;
  EXPECT_TRUE(said) << "the missing timeline names the export option";
  fs::remove_all(dir.parent_path());
}

TEST(AscendDirectoryTest, DamagedProfilerDatabaseFallsBackToTheSummaries) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path dir = PartialCopy("corrupt", {"step_trace_time.csv"});
  std::ofstream(dir / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db") << "not a database";
  Trace t = MustImport(dir.string());
  EXPECT_EQ(t.reported_step_times().size(), 1u);
  bool said = false;
  for (const std::string& w : t.metadata().warnings)
    said |= w.find("ascend_pytorch_profiler_0.db") != std::string::npos;
  EXPECT_TRUE(said);
  fs::remove_all(dir.parent_path());
}

// Keeps the first `fraction` of the copy's trace_view.json, as a copy stopped part way leaves it.
void CutTraceView(const fs::path& dir, double fraction) {
  const fs::path view = dir / "ASCEND_PROFILER_OUTPUT" / "trace_view.json";
  fs::resize_file(view, static_cast<uintmax_t>(static_cast<double>(fs::file_size(view)) * fraction));
}

using test_support::Warns;

// Cut before its one step ends, the timeline would give kernels and collectives of part of the step
// beside step_trace_time.csv's figures of all of it: the rank is read as one without trace_view.json.
TEST(AscendDirectoryTest, TimelineCutBeforeItsStepsEndIsReadAsNoTimeline) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path cut_dir =
      PartialCopy("cut", {"trace_view.json", "kernel_details.csv", "step_trace_time.csv", "communication.json"});
  CutTraceView(cut_dir, 0.6);
  const fs::path none_dir = PartialCopy("none", {"kernel_details.csv", "step_trace_time.csv", "communication.json"});
  Trace cut = MustImport(cut_dir.string());
  Trace none = MustImport(none_dir.string());
  EXPECT_EQ(cut.events().size(), 0u);
  EXPECT_TRUE(cut.steps().empty());
  EXPECT_EQ(cut.metadata().format, TraceFormat::kTorchNpuTraceView);
  EXPECT_TRUE(cut.metadata().truncated);  // so that the analyses say cut, not missing
  EXPECT_EQ(cut.metadata().entry_count, 0u);
  EXPECT_EQ(cut.metadata().rank, none.metadata().rank);
  EXPECT_EQ(cut.kernel_details().rows.size(), none.kernel_details().rows.size());
  EXPECT_EQ(cut.communication().ops.size(), none.communication().ops.size());
  EXPECT_FALSE(cut.communication().ops.empty());
  ASSERT_EQ(cut.reported_step_times().size(), 1u);
  EXPECT_EQ(cut.reported_step_times()[0].stage_ns, none.reported_step_times()[0].stage_ns);
  EXPECT_TRUE(Warns(cut,
                    "the timeline is cut off (0 complete steps of the 1 that step_trace_time.csv holds); "
                    "read as a rank without a timeline"));
  EXPECT_FALSE(Warns(cut, "trace_view.json: missing"));
  EXPECT_EQ(Entry(cut, "inventory.ASCEND_PROFILER_OUTPUT/trace_view.json"), "unreadable: cut off; set aside");
  fs::remove_all(cut_dir.parent_path());
  fs::remove_all(none_dir.parent_path());
}

// Without step_trace_time.csv nothing says how many steps the run had: the cut timeline is kept, its
// whole steps measured and the rest marked incomplete by the analysis.
TEST(AscendDirectoryTest, CutTimelineWithoutReportedStepsIsKept) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path dir = PartialCopy("cut_alone", {"trace_view.json", "kernel_details.csv"});
  CutTraceView(dir, 0.6);
  Trace t = MustImport(dir.string());
  EXPECT_TRUE(t.metadata().truncated);
  EXPECT_GT(t.events().size(), 0u);
  EXPECT_FALSE(Warns(t, "read as a rank without a timeline"));
  fs::remove_all(dir.parent_path());
}

TEST(AscendDirectoryTest, RankWithoutUsableFilesIsRefused) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path dir = PartialCopy("empty", {});
  EXPECT_FALSE(ImportAscendDirectory(dir.string()).ok());
  fs::remove_all(dir.parent_path());
}

// msprof's multi-device export: one step split row per device (no step number) and no timeline. Each device
// is read as a rank of its id, with its own row; a directory of one device stays one rank.
void WriteStepSplit(const std::filesystem::path& root, const std::string& rows) {
  std::filesystem::create_directories(root / "ASCEND_PROFILER_OUTPUT");
  std::ofstream(root / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv")
      << "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble\n"
      << rows;
}

TEST(AscendDirectoryTest, DeviceRowsWithoutATimelineAreRanks) {
  ScratchDir scratch("tp_ascend_devices_");
  WriteStepSplit(scratch.path(),
                 "0,,75.72,0,0,0,271016.82,271092.54,0\n2,,73.36,0,0,0,218716.66,218790.02,0\n"
                 "1,,72.7,0,0,0,255711.6,255784.3,0\n");
  auto traces = ImportAscendDirectoryRanks(scratch.path().string());
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  ASSERT_EQ(traces->size(), 3u);
  for (int64_t d = 0; d < 3; ++d) {
    const Trace& t = (*traces)[d];
    EXPECT_EQ(t.metadata().rank, d);
    EXPECT_EQ(t.metadata().rank_source, RankSource::kTrace);
    ASSERT_EQ(t.reported_step_times().size(), 1u);
    EXPECT_EQ(t.reported_step_times()[0].device_id, d);
  }
  EXPECT_EQ((*traces)[2].reported_step_times()[0].stage_ns, 218790020);
  const std::vector<std::string>& said = (*traces)[0].metadata().warnings;
  EXPECT_TRUE(std::any_of(said.begin(), said.end(), [](const std::string& w) {
    return w.find("3 devices' rows and no timeline: read as 3 ranks") != std::string::npos;
  }));
  EXPECT_TRUE((*traces)[1].metadata().warnings.empty());
  // Device ids are no rank numbers: the directory counts as one that names no rank.
  EXPECT_TRUE(HasWarning((*traces)[0].metadata().warning_ids, WarningId::kNoRank));
}

// A rank directory whose only file cannot be read is an error naming that file and why, not a rank of
// nothing with a 0 ms step.
TEST(AscendDirectoryTest, NothingReadableIsAnErrorNamingTheFile) {
  ScratchDir scratch("tp_ascend_unreadable_");
  std::filesystem::create_directories(scratch.path() / "ASCEND_PROFILER_OUTPUT");
  std::ofstream(scratch.path() / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv") << "garbage\n";
  auto traces = ImportAscendDirectoryRanks(scratch.path().string());
  ASSERT_FALSE(traces.ok());
  const std::string& message = traces.status().message();
  EXPECT_NE(message.find("nothing readable in the rank directory"), std::string::npos) << message;
  EXPECT_NE(message.find("step_trace_time.csv: not a step_trace_time table"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(AscendDirectoryTest, OneDeviceStaysOneRank) {
  ScratchDir scratch("tp_ascend_one_device_");
  WriteStepSplit(scratch.path(), "4,1,75.72,0,0,0,100,175.72,0\n4,2,75.72,0,0,0,100,175.72,0\n");
  auto traces = ImportAscendDirectoryRanks(scratch.path().string());
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  ASSERT_EQ(traces->size(), 1u);
  EXPECT_EQ((*traces)[0].reported_step_times().size(), 2u);
}

}  // namespace
}  // namespace tuneprof

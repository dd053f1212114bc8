// torch_npu's Db export from the shared samples (the corpus, read in place). Expected
// numbers were read with python's sqlite3 from the same files.
#include "importers/ascend/ascend_db.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "importers/ascend/ascend_csv_for_test.h"
#include "importers/ascend/ascend_directory.h"
#include "importers/ascend/ascend_import_for_test.h"
#include "importers/import.h"
#include "io/scratch_dir_for_test.h"
#include "test_corpus.h"
#include "trace_warnings.h"

namespace tuneprof {
namespace {

const std::string kDb = std::string(TUNEPROF_SHARED_DIR) + "/traces/ascend/msinsight/test/data/pytorch/db/";

using ascend_import::Entry;
using ascend_import::ExpectInventory;
using ascend_import::kServerData;
using ascend_import::MustImport;

uint64_t CountKind(const Trace& trace, EventKind kind) {
  uint64_t n = 0;
  for (EventKind k : trace.events().kind) n += k == kind;
  return n;
}

TEST(AscendDbTest, Level1RankZeroFillsTheTimelineAndSideTables) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace t = MustImport(kDb + "level1/rank0_ascend_pt");
  EXPECT_EQ(t.metadata().rank, 0);
  EXPECT_EQ(t.metadata().format, TraceFormat::kTorchNpuTraceView);
  // TASK 552 rows on Ascend Hardware less the 4 AI_CORE tasks the HCCL ops were submitted as (trace_view
  // draws the ops on their group track instead) and the 13 undescribed wrapper tasks of described kernel
  // launches (trace_view and OVERLAP_ANALYSIS have only the described kernel), + 296 HCCL plane copies
  // + 4 COMMUNICATION_OP; CANN_API 710; PYTORCH_API 2,460.
  EXPECT_EQ(t.events().size(), 552u - 4u - 13u + 296u + 4u + 710u + 2460u);
  EXPECT_EQ(CountKind(t, EventKind::kKernel), 187u);  // = COMPUTE_TASK_INFO rows, as the text form's 187
  EXPECT_EQ(CountKind(t, EventKind::kCollective), 296u + 4u);
  EXPECT_EQ(CountKind(t, EventKind::kRuntime), 710u + 159u);  // CANN calls and the 159 dequeues
  // MEMCPY_ASYNC 24 + SDMA 72 (copies); Notify Wait 112 + Write Value 112 + EVENT_RECORD 16 + EVENT_WAIT 10.
  EXPECT_EQ(CountKind(t, EventKind::kMemcpy), 96u);
  EXPECT_EQ(CountKind(t, EventKind::kSync), 250u);
  ASSERT_EQ(t.steps().size(), 1u);
  EXPECT_EQ(t.steps()[0].number, 50);
  EXPECT_EQ(t.steps()[0].start_ns, 1736410576386409710);  // STEP_TIME, exact ns
  EXPECT_EQ(t.steps()[0].end_ns, 1736410576538298460);
  ASSERT_EQ(t.devices().size(), 1u);
  EXPECT_EQ(t.str(t.devices()[0].name), "Ascend910B");
  // AICORE_FREQ's 3 rows, as trace_view's "AI Core Freq" counter, and the HBM table's 104 samples as its
  // "HBM <n>/Read|Write" counters (4 stacks x 2 directions).
  ASSERT_EQ(t.counters().size(), 9u);
  EXPECT_EQ(t.str(t.counters()[0].name), "AI Core Freq/MHz");
  EXPECT_EQ(t.str(t.counters()[1].name), "HBM 0/Read/Read(MB/s)");
  EXPECT_EQ(t.counter_samples().size(), 3u + 104u);

  // CANN calls are linked to the tasks they launched by connectionId, as trace_view's HostToDevice flows
  // link them; the enqueue -> dequeue links too.
  uint64_t correlation = 0, queue = 0;
  for (const Link& link : t.links()) {
    if (link.kind == LinkKind::kCorrelation) ++correlation;
    if (t.str(link.category) == "async_task_queue") ++queue;
  }
  // 550 TASK rows have a CANN_API row; not linked: the 4 ops' own tasks and 13 wrappers (left out), the
  // 296 HCCL sub-tasks (launched by their op's call, which links to the op on its HCCL track) and the 26
  // EVENT_RECORD / EVENT_WAIT tasks (trace_view draws no flow to them). The 4 ops link to their calls.
  EXPECT_EQ(correlation, 550u - 4u - 13u - 296u - 26u + 4u);
  EXPECT_EQ(correlation, 215u);  // the text form's HostToDevice flows of the same scenario
  EXPECT_EQ(queue, 159u);
}

TEST(AscendDbTest, KernelDetailsAsTheTextFormWritesThem) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace t = MustImport(kDb + "level1/rank0_ascend_pt");
  const KernelDetailTable& k = t.kernel_details();
  ASSERT_TRUE(k.present);
  ASSERT_EQ(k.rows.size(), 187u + 4u);  // COMPUTE_TASK_INFO + COMMUNICATION_OP
  std::map<std::string, int> cores;
  for (const NpuOpRow& row : k.rows) ++cores[std::string(t.str(row.accelerator_core))];
  EXPECT_EQ(cores["AI_VECTOR_CORE"], 149);
  EXPECT_EQ(cores["AI_CORE"], 23);
  EXPECT_EQ(cores["MIX_AIV"], 13);
  EXPECT_EQ(cores["DSA_SQE"], 2);
  EXPECT_EQ(cores["HCCL"], 4);
  // Rows by start time; the second is trans_TransData_1 (globalTaskId 4).
  const NpuOpRow& row = k.rows[1];
  EXPECT_EQ(t.str(row.name), "trans_TransData_1");
  EXPECT_EQ(t.str(row.type), "TransData");
  EXPECT_EQ(row.start_ns, 1736410576404619766);
  EXPECT_EQ(row.dur_ns, 1736410576404626226 - 1736410576404619766);
  EXPECT_EQ(row.wait_ns, 100602);
  EXPECT_EQ(row.block_dim, 8);
  EXPECT_EQ(row.step, 50);
  EXPECT_EQ(t.str(row.input_shapes), "64,3,11,11");  // quotes gone, as the CSV reader leaves it
  EXPECT_EQ(t.str(row.output_formats), "FRACTAL_Z");
  // PMU: times ns -> µs under kernel_details' names; ratios as they are.
  const NpuOpMetricColumn* aiv_time = t.kernel_metric("aiv_time(us)");
  const NpuOpMetricColumn* vec_ratio = t.kernel_metric("aiv_vec_ratio");
  const NpuOpMetricColumn* vec_time = t.kernel_metric("aiv_vec_time(us)");
  ASSERT_TRUE(aiv_time && vec_ratio && vec_time);
  EXPECT_NEAR(aiv_time->values[1], 5.136736111111111, 1e-9);
  EXPECT_NEAR(vec_time->values[1], 1.173888888888889, 1e-9);
  EXPECT_NEAR(vec_ratio->values[1], 0.22852816720518054, 1e-12);
  ASSERT_NE(t.kernel_metric("aicore_time(us)"), nullptr);
  ASSERT_NE(t.kernel_metric("aic_mac_ratio"), nullptr);
  // Communication rows have no counters.
  for (size_t i = 0; i < k.rows.size(); ++i) {
    if (t.str(k.rows[i].accelerator_core) == "HCCL") EXPECT_TRUE(std::isnan(vec_ratio->values[i]));
  }
}

TEST(AscendDbTest, AnalysisDbStepTraceTimeExactAndCommunicationOps) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace t = MustImport(kDb + "level1/rank0_ascend_pt");
  ASSERT_EQ(t.reported_step_times().size(), 1u);
  // analysis.db's StepTraceTime row (µs there), in the text file's column order; no device column.
  ascend_csv::ExpectStepTime(
      t.reported_step_times()[0],
      ReportedStepTime{kNoId, 50, 8903431, 98071947, 4036153, 102108100, 25258144, 132233522, 0, 98071947, 18055693});
  EXPECT_TRUE(t.communication().ops_present);
  // CommAnalyzerTime's 4 ops + the rebuilt "Total Op Info" of step50's collective section.
  const CommunicationTables& comm = t.communication();
  ASSERT_EQ(comm.ops.size(), 5u);
  const HcclOpTime& total = comm.ops[4];
  EXPECT_TRUE(total.total);
  EXPECT_EQ(t.str(total.step), "step50");
  double elapse = 0;
  for (int i = 0; i < 4; ++i) elapse += comm.ops[i].elapse_ms;
  EXPECT_DOUBLE_EQ(total.elapse_ms, elapse);
  // First op: CommAnalyzerBandwidth rows HCCS (buckets 2.064384 MB x 12, 1.937312 MB x 2) and SDMA.
  const HcclOpTime& first = comm.ops[0];
  EXPECT_EQ(t.str(first.op_name), "hcom_allReduce__210_0_1");
  EXPECT_NEAR(first.elapse_ms, 88.75099321875, 1e-9);
  ASSERT_GE(first.traffic_count, 2u);
  const HcclTransportTraffic& hccs = comm.traffic[first.first_traffic];
  EXPECT_EQ(t.str(hccs.transport), "HCCS");
  EXPECT_NEAR(hccs.transit_size_mb, 28.647232, 1e-9);
  ASSERT_EQ(hccs.bucket_count, 2u);
  EXPECT_EQ(comm.buckets[hccs.first_bucket].count + comm.buckets[hccs.first_bucket + 1].count, 14);
  EXPECT_TRUE(comm.matrix_present);
  EXPECT_EQ(comm.links.size(), 48u);
  EXPECT_EQ(t.npu_memory_records().size(), 990u);
  EXPECT_EQ(Entry(t, "profiler_metadata.ENV_VARIABLES.HCCL_RDMA_TC"), "");
}

TEST(AscendDbTest, Level0HasNoCountersAndTypesNA) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace t = MustImport(kDb + "level0/rank1_ascend_pt");
  EXPECT_EQ(t.metadata().rank, 1);
  ASSERT_EQ(t.kernel_details().rows.size(), 191u);
  EXPECT_TRUE(t.kernel_details().metrics.empty());
  // opType "N/A" is an absent cell, as the CSV reader leaves kernel_details' N/A.
  for (const NpuOpRow& row : t.kernel_details().rows) EXPECT_EQ(row.type.value, 0u);
}

TEST(AscendDbTest, InventoryCountsEveryTable) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace t = MustImport(kDb + "level1/rank0_ascend_pt");
  ExpectInventory(t, {{"ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db:TASK", "552 rows"},
                      {"ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db:HBM", "104 rows, counted only"},
                      {"ASCEND_PROFILER_OUTPUT/analysis.db:StepTraceTime", "1 rows"},
                      {"profiler_info_0.json", "present"},
                      {"profiler_metadata.json", "missing"}});
}

TEST(AscendDbTest, NearEmptyDatabaseLoadsWithAWarning) {
  TUNEPROF_REQUIRE_CORPUS();
  // MindStudio Insight's sample: .dat suffixes, the profiler database holds only sqlite_sequence.
  const Trace t = MustImport(kServerData + "multiDevice/msprof_db");
  EXPECT_EQ(t.events().size(), 0u);
  EXPECT_EQ(t.reported_step_times().size(), 4u);
  ASSERT_FALSE(t.metadata().warnings.empty());
  EXPECT_NE(t.metadata().warnings[0].find("no TASK table"), std::string::npos);
}

TEST(AscendDbTest, MsprofDatabaseGivenAsAFile) {
  TUNEPROF_REQUIRE_CORPUS();
  // msprof's msprof_*.db: the same CANN tables, no PYTORCH_API (README §3.3: TASK 24, COMPUTE_TASK_INFO 11).
  auto trace = ImportFile(kServerData + "full_db/msprof_0.db");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->kernel_details().rows.size(), 11u);
  EXPECT_TRUE(trace->steps().empty());
  ASSERT_EQ(trace->devices().size(), 1u);
  EXPECT_EQ(trace->str(trace->devices()[0].name), "Ascend910B");
}

TEST(AscendDbTest, NotADatabaseIsAnErrorNamingTheFile) {
  const std::string path = (std::filesystem::temp_directory_path() / "tuneprof_ascend_db_test.db").string();
  std::ofstream(path) << "not sqlite";
  auto trace = ImportAscendDatabase(path, "somewhere");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find(path), std::string::npos);
  std::filesystem::remove(path);
  auto missing = ImportAscendDatabase(path, "somewhere");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
}

TEST(AscendDbTest, CorruptDatabaseInARankDirectoryIsAnErrorNamingIt) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tuneprof_ascend_db_test_rank0_ascend_pt";
  fs::create_directories(dir / "ASCEND_PROFILER_OUTPUT");
  const fs::path db = dir / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db";
  std::ofstream(db) << "SQLite format 3 but cut off";
  auto trace = ImportAscendDirectory(dir.string());
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find(db.string()), std::string::npos) << trace.status().message();
  EXPECT_EQ(trace.status().message().find('\n'), std::string::npos);
  fs::remove_all(dir);
}

// A copy of a real rank's database, changed by `sql`, in a rank directory of its own that goes with the
// object (also when a failed assertion ends the test early).
class CraftedRank {
 public:
  CraftedRank(const std::string& name, const std::string& sql)
      : dir_(std::filesystem::temp_directory_path() / ("tuneprof_ascend_db_test_" + name + "_rank0_ascend_pt")) {
    namespace fs = std::filesystem;
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ASCEND_PROFILER_OUTPUT");
    const fs::path db = dir_ / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db";
    fs::copy_file(kDb + "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db", db);
    sqlite3* handle = nullptr;
    EXPECT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(handle);
    sqlite3_close(handle);
  }
  ~CraftedRank() { std::filesystem::remove_all(dir_); }
  CraftedRank(const CraftedRank&) = delete;
  CraftedRank& operator=(const CraftedRank&) = delete;

  std::string path() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

TEST(AscendDbTest, StartAndEndAnInt64ApartGiveNoDurationNotOverflow) {
  TUNEPROF_REQUIRE_CORPUS();
  // A damaged or crafted database can hold any int64 in startNs and endNs; end - start must not overflow
  // (the sanitized build traps if it does) and an end before the start is no duration, never a negative one.
  std::string sql;
  for (const char* table : {"PYTORCH_API", "CANN_API", "TASK"}) {
    sql += std::string("UPDATE ") + table +
           " SET startNs = 1698220811391879825, endNs = -8207858559452409896"
           " WHERE rowid = (SELECT MIN(rowid) FROM " +
           table + ");";
  }
  const CraftedRank dir("extreme", sql);
  auto trace = ImportAscendDirectory(dir.path());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  for (int64_t dur : trace->events().dur_ns) EXPECT_GE(dur, -1);  // -1: an instant
}

using test_support::Warns;

TEST(AscendDbTest, ATextTimestampSkipsItsRowAndIsCountedNeverReadAsZero) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace before = MustImport(kDb + "level1/rank0_ascend_pt");
  const CraftedRank dir("text_start",
                        "UPDATE TASK SET startNs = 'soon' WHERE rowid IN (SELECT rowid FROM TASK "
                        "ORDER BY startNs LIMIT 2)");
  const Trace after = MustImport(dir.path());
  EXPECT_TRUE(Warns(after, "TASK: 2 rows with a non-integer startNs skipped"));
  ASSERT_FALSE(after.events().ts_ns.empty());
  const int64_t first_before = *std::min_element(before.events().ts_ns.begin(), before.events().ts_ns.end());
  EXPECT_GT(*std::min_element(after.events().ts_ns.begin(), after.events().ts_ns.end()), 0);
  EXPECT_GE(*std::min_element(after.events().ts_ns.begin(), after.events().ts_ns.end()), first_before);
  EXPECT_LT(after.events().size(), before.events().size());
  EXPECT_GT(after.events().size() + 4, before.events().size());  // the two tasks (drawn twice at most)
}

TEST(AscendDbTest, MetaDataParallelGroupsAreReadAsProfilerMetadataGivesThem) {
  TUNEPROF_REQUIRE_CORPUS();
  // The Db export keeps profiler_metadata.json's parallel_group_info and distributed_args as META_DATA rows of
  // JSON text: the pp groups must be found from them where the rank directory lacks that file.
  const CraftedRank dir(
      "meta_groups",
      "INSERT INTO META_DATA VALUES ('parallel_group_info', '{\"98765\": {\"group_name\": \"pp\", \"group_rank\": 0, "
      "\"global_ranks\": [0, 2]}}'), ('distributed_args', '{\"pipeline_model_parallel_size\": 2}'), "
      "('parallel_group_info_bad', '[1]'); INSERT INTO META_DATA SELECT 'distributed_args', '[2]'");
  const Trace t = MustImport(dir.path());
  EXPECT_EQ(Entry(t, "profiler_metadata.parallel_group_info.98765.group_name"), "pp");
  EXPECT_EQ(Entry(t, "profiler_metadata.parallel_group_info.98765.global_ranks"), "[0,2]");
  EXPECT_EQ(Entry(t, "profiler_metadata.distributed_args.pipeline_model_parallel_size"), "2");
  EXPECT_EQ(Entry(t, "db.META_DATA.parallel_group_info"), "<absent>");
  // Other names keep their row as it is; a JSON value that is no object is a warning naming the row.
  EXPECT_EQ(Entry(t, "db.META_DATA.parallel_group_info_bad"), "[1]");
  EXPECT_TRUE(Warns(t, "META_DATA distributed_args is not a JSON object; ignored"));
}

TEST(AscendDbTest, AViewInPlaceOfATableIsRefusedByNameAndTheRestIsRead) {
  TUNEPROF_REQUIRE_CORPUS();
  const CraftedRank dir("view",
                        "DROP TABLE CANN_API; CREATE VIEW CANN_API AS WITH RECURSIVE c(x) AS (SELECT 1 "
                        "UNION ALL SELECT x + 1 FROM c) SELECT x AS startNs, x AS endNs, 1 AS globalTid, "
                        "x AS connectionId, 1 AS name FROM c");
  const Trace trace = MustImport(dir.path());
  EXPECT_TRUE(Warns(trace, "CANN_API is a view, not a table; tuneprof reads tables only"));
  EXPECT_GT(CountKind(trace, EventKind::kKernel), 0u);
  EXPECT_EQ(Entry(trace, "inventory.ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db:CANN_API"),
            "unreadable: a view, not a stored table");
}

TEST(AscendDbTest, AJoinThatMultipliesRowsEndsOverBudget) {
  TUNEPROF_REQUIRE_CORPUS();
  // Every task and every communication op on one connectionId: the timeline's join is tasks x ops rows.
  const CraftedRank dir("join",
                        "UPDATE TASK SET connectionId = 1; UPDATE COMMUNICATION_OP SET connectionId = 1;"
                        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) "
                        "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId) SELECT 1, x, "
                        "x + 1, 1 FROM c;"
                        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) "
                        "INSERT INTO TASK (startNs, endNs, streamId, connectionId) SELECT x, x + 1, 1, 1 "
                        "FROM c");
  auto trace = ImportAscendDirectory(dir.path());
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("query over budget: TASK"), std::string::npos) << trace.status().message();
  EXPECT_EQ(trace.status().message().find('\n'), std::string::npos);
}

// COMMUNICATION_TASK_INFO's size, transport and link (enums by name) ride on each HCCL sub-task's plane
// event, as trace_view's args do: 296 sub-tasks, of which the off-chip SDMA copies and reductions over 512 B
// whose size is no multiple of 512 are the 4 the text export shows.
// The db writes trace_view's fwdbwd flows as PYTORCH_API columns: each backward operator is linked from
// the outermost forward operator of its sequence number: 27 of its 43 backward rows, as many as the text
// export of this test data draws fwdbwd flows (the rest have no forward operator in the profile).
std::vector<std::pair<std::string, std::string>> BackwardLinks(const Trace& trace) {
  StringId fwdbwd;
  std::vector<std::pair<std::string, std::string>> links;
  if (!trace.strings().Find("fwdbwd", &fwdbwd)) return links;
  for (const Link& link : trace.links()) {
    if (link.kind != LinkKind::kFlow || link.category != fwdbwd) continue;
    links.emplace_back(std::string(trace.str(trace.events().name[link.from])),
                       std::string(trace.str(trace.events().name[link.to])));
  }
  return links;
}

TEST(AscendDbTest, BackwardOperatorsAreLinkedToTheirForwardOperators) {
  TUNEPROF_REQUIRE_CORPUS();
  const auto links = BackwardLinks(MustImport(kDb + "level1/rank0_ascend_pt"));
  EXPECT_EQ(links.size(), 27u);
  EXPECT_NE(std::find(links.begin(), links.end(),
                      std::make_pair(std::string("aten::nll_loss_nd"), std::string("NllLossBackward0"))),
            links.end());
}

TEST(AscendDbTest, ASequenceNumberOnTwoForwardThreadsIsLeftUnlinked) {
  TUNEPROF_REQUIRE_CORPUS();
  const CraftedRank dir("two_forward_threads",
                        "UPDATE PYTORCH_API SET globalTid = globalTid + 1 WHERE rowid = (SELECT rowid FROM "
                        "PYTORCH_API WHERE sequenceNumber = 1376 AND fwdThreadId = 0 ORDER BY startNs DESC "
                        "LIMIT 1)");
  const auto links = BackwardLinks(MustImport(dir.path()));
  EXPECT_EQ(links.size(), 26u);
}

TEST(AscendDbTest, HcclSubTasksKeepSizeTransportAndLink) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace t = MustImport(kDb + "level2/rank0_ascend_pt");
  ASSERT_EQ(t.hccl_tasks().size(), 296u);
  uint64_t unaligned = 0;
  int64_t unaligned_bytes = 0;
  for (const HcclTaskInfo& task : t.hccl_tasks()) {
    EXPECT_EQ(t.events().kind[task.event], EventKind::kCollective);
    const std::string_view name = t.str(t.events().name[task.event]);
    if ((name != "Memcpy" && name != "Reduce_Inline") || t.str(task.transport) != "SDMA") continue;
    if (t.str(task.link_type) == "ON_CHIP" || task.size_bytes <= 512 || task.size_bytes % 512 == 0) continue;
    ++unaligned;
    unaligned_bytes += task.size_bytes;
    EXPECT_EQ(t.str(task.link_type), "HCCS");
    EXPECT_NEAR(task.bandwidth_gbps,
                static_cast<double>(task.size_bytes) / static_cast<double>(t.events().dur_ns[task.event]), 1e-9);
  }
  EXPECT_EQ(unaligned, 4u);
  EXPECT_EQ(unaligned_bytes, 6199616);
}

// A database written from nothing: three operators, two of them recorded with a call chain (one of them
// written with a frame twice at one depth), and a chain no operator names.
constexpr const char* kCallChainDb =
    "CREATE TABLE STRING_IDS (id INTEGER, value TEXT);"
    "CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, "
    "sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, "
    "type INTEGER);"
    "CREATE TABLE PYTORCH_CALLCHAINS (id INTEGER, stack INTEGER, stackDepth INTEGER);"
    "INSERT INTO STRING_IDS VALUES (1, 'aten::relu'), (2, 'aten::add'), (3, 'aten::empty'),"
    " (10, '/home/u/.local/lib/python3.9/site-packages/torch/nn/functional.py(1469): relu'),"
    " (11, '/home/u/proj/main.py(354): train'), (12, '<string>(1): <module>'),"
    " (13, '/home/u/proj/main.py(366): train');"
    "INSERT INTO PYTORCH_API VALUES (1000, 2000, 4294967297, NULL, 1, -1, 0, NULL, NULL, 5, 50001),"
    " (3000, 4000, 4294967297, NULL, 2, -1, 0, NULL, NULL, NULL, 50001),"
    " (5000, 6000, 4294967297, NULL, 3, -1, 0, NULL, NULL, 6, 50001);"
    "INSERT INTO PYTORCH_CALLCHAINS VALUES (5, 12, 2), (5, 10, 0), (5, 11, 1), (6, 13, 0), (6, 11, 0),"
    " (7, 11, 0);";

TEST(AscendDbTest, CallChainsAreTheOperatorsRecordedStacksInnermostFirst) {
  ScratchDir dir("tuneprof_ascend_db_callchains_");
  const std::string db = (dir.path() / "ascend_pytorch_profiler_0.db").string();
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(handle, kCallChainDb, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(handle);
  sqlite3_close(handle);
  auto trace = ImportAscendDatabase(db, dir.path().string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = *trace;
  ASSERT_EQ(t.call_stacks().size(), 2u);
  const CallStackInfo& relu = t.call_stacks()[0];
  EXPECT_EQ(t.str(t.events().name[relu.event]), "aten::relu");
  EXPECT_EQ(t.str(relu.frames),
            "/home/u/.local/lib/python3.9/site-packages/torch/nn/functional.py(1469): relu\n"
            "/home/u/proj/main.py(354): train\n<string>(1): <module>");
  const CallStackInfo& empty = t.call_stacks()[1];
  EXPECT_EQ(t.str(t.events().name[empty.event]), "aten::empty");
  EXPECT_EQ(t.str(empty.frames), "/home/u/proj/main.py(366): train");  // the first frame of a depth stands
}

// A chain deeper than the stacks kept keeps its innermost frames.
TEST(AscendDbTest, ADeepCallChainKeepsItsInnermostFrames) {
  ScratchDir dir("tuneprof_ascend_db_deep_chain_");
  const std::string db = (dir.path() / "ascend_pytorch_profiler_0.db").string();
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  const std::string sql = std::string(kCallChainDb) +
                          "WITH RECURSIVE d(n) AS (SELECT 3 UNION ALL SELECT n + 1 FROM d WHERE n < 999) "
                          "INSERT INTO PYTORCH_CALLCHAINS SELECT 5, 12, n FROM d;";
  ASSERT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(handle);
  sqlite3_close(handle);
  auto trace = ImportAscendDatabase(db, dir.path().string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  ASSERT_FALSE(trace->call_stacks().empty());
  const std::string_view frames = trace->str(trace->call_stacks()[0].frames);
  EXPECT_EQ(std::count(frames.begin(), frames.end(), '\n'), 255);  // 256 frames
  EXPECT_TRUE(frames.starts_with("/home/u/.local/lib/python3.9/site-packages/torch/nn/functional.py(1469): relu\n"));
}

TEST(AscendDbTest, Level2OperatorsCarryTheirCallChains) {
  TUNEPROF_REQUIRE_CORPUS();
  const Trace t = MustImport(kDb + "level2/rank0_ascend_pt");
  // 316 PYTORCH_API rows name one of the 316 chains of PYTORCH_CALLCHAINS' 4,683 rows.
  ASSERT_EQ(t.call_stacks().size(), 316u);
  for (size_t i = 1; i < t.call_stacks().size(); ++i) EXPECT_LT(t.call_stacks()[i - 1].event, t.call_stacks()[i].event);
  size_t at_366 = 0;
  for (const CallStackInfo& s : t.call_stacks())
    at_366 += t.str(s.frames).find("imagenet_script/main.py(366): train") != std::string_view::npos;
  EXPECT_EQ(at_366, 89u);  // the optimizer step's operators, read with sqlite3 from the same file
}

}  // namespace
}  // namespace tuneprof

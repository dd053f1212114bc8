#include "importers/registry.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "importers/import.h"
#include "io/scratch_dir_for_test.h"
#include "io/trace_files.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

// The entries of kind `by` that claim `input`, by name: exactly one for every input an entry is for.
std::vector<std::string_view> Claimants(RecognisedBy by, const ImportInput& input) {
  std::vector<std::string_view> names;
  for (const InputFormat& format : InputFormats()) {
    if (format.by == by && format.claims(input)) names.push_back(format.name);
  }
  return names;
}

using Names = std::vector<std::string_view>;

TEST(RegistryTest, EachHeadIsClaimedByItsOwnEntryAlone) {
  const struct {
    std::string_view entry;
    std::string head;
  } samples[] = {
      {"chrome_json", "{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\""},
      {"chrome_json", "\xEF\xBB\xBF  [{\"name\": \"aten::mm\", \"ph\": \"X\""},
      {"rank_summary", std::string(kSummaryMagic) + "version 7\n"},
      {"memory_snapshot", std::string("\x80\x04\x95\x10\x00\x00\x00", 7)},
      {"memory_timeline", "[[1696966047096061874, -1, 0, 0], [1, 2"},
  };
  for (const auto& sample : samples) {
    const ImportInput input{"sample", sample.head};
    EXPECT_EQ(Claimants(RecognisedBy::kHead, input), Names{sample.entry}) << sample.head;
    ASSERT_NE(FormatClaiming(RecognisedBy::kHead, input), nullptr);
    EXPECT_EQ(FormatClaiming(RecognisedBy::kHead, input)->name, sample.entry);
  }
  EXPECT_EQ(FormatClaiming(RecognisedBy::kHead, ImportInput{"sample", "hello"}), nullptr);
}

class RegistryFilesTest : public ::testing::Test {
 protected:
  ScratchDir scratch_{"tp_registry_"};
  const fs::path& dir_ = scratch_.path();

  // A SQLite file holding empty tables of these names.
  std::string Database(const std::string& name, const std::vector<std::string>& tables) {
    const std::string path = (dir_ / name).string();
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    for (const std::string& table : tables) {
      EXPECT_EQ(sqlite3_exec(db, ("CREATE TABLE " + table + " (id INTEGER)").c_str(), nullptr, nullptr, nullptr),
                SQLITE_OK);
    }
    sqlite3_close(db);
    return path;
  }

  std::string Directory(const std::string& name, const std::string& file = "") {
    const fs::path path = dir_ / name;
    fs::create_directories(path);
    if (!file.empty()) std::ofstream(path / file) << "x\n";
    return path.string();
  }
};

TEST_F(RegistryFilesTest, EachDatabaseIsClaimedByItsOwnEntryAlone) {
  const struct {
    std::string_view entry;
    std::vector<std::string> tables;
  } samples[] = {
      {"tuneprof_export", {"tuneprof_meta", "kernels"}},
      {"nsys_sqlite", {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL"}},
      {"ascend_db", {"TASK", "STRING_IDS"}},
      {"ascend_db", {"PYTORCH_API"}},
  };
  int n = 0;
  for (const auto& sample : samples) {
    const std::string path = Database("db" + std::to_string(n++) + ".sqlite", sample.tables);
    auto db = SqliteFile::Open(path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    ImportInput input{path};
    input.database = db->get();
    EXPECT_EQ(Claimants(RecognisedBy::kDatabase, input), Names{sample.entry}) << path;
  }
  auto other = SqliteFile::Open(Database("other.sqlite", {"users"}));
  ASSERT_TRUE(other.ok());
  ImportInput input{"other.sqlite"};
  input.database = other->get();
  EXPECT_EQ(FormatClaiming(RecognisedBy::kDatabase, input), nullptr);
}

TEST_F(RegistryFilesTest, EachDirectoryIsClaimedByItsOwnEntryAlone) {
  const struct {
    std::string_view entry;
    std::string dir;
  } samples[] = {
      {"ascend_directory", Directory("w_1_ascend_pt")},
      {"ascend_directory", Directory("rank0/ASCEND_PROFILER_OUTPUT")},
      {"ascend_directory", (dir_ / "rank0").string()},
      {"ascend_directory", Directory("PROF_000001_20250101/mindstudio_profiler_output")},
      {"ascend_directory", (dir_ / "PROF_000001_20250101").string()},
      {"ascend_cluster", Directory("cluster_analysis_output", "cluster_step_trace_time.csv")},
  };
  for (const auto& sample : samples) {
    EXPECT_EQ(Claimants(RecognisedBy::kDirectory, ImportInput{sample.dir}), Names{sample.entry}) << sample.dir;
    EXPECT_TRUE(IsRankDirectory(sample.dir)) << sample.dir;
  }
  EXPECT_FALSE(IsRankDirectory(Directory("runs")));
  EXPECT_FALSE(IsRankDirectory(dir_.string()));  // a parent of ranks is searched
}

// The listing every command uses hands a claimed directory over whole, beside the loose traces.
TEST_F(RegistryFilesTest, InputListingKeepsClaimedDirectoriesWhole) {
  const std::string rank = Directory("run/w_1_ascend_pt/ASCEND_PROFILER_OUTPUT", "trace_view.json");
  const std::string cluster = Directory("run/cluster_analysis_output", "cluster_step_trace_time.csv");
  std::ofstream(dir_ / "run" / "rank9.json") << "{}";
  auto files = ListInputFiles((dir_ / "run").string());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{cluster, (dir_ / "run/rank9.json").string(),
                                              (dir_ / "run/w_1_ascend_pt").string()}));
}

// A directory's loose files are each entry's own: Nsight Systems exports beside Kineto traces, msprof's
// and torch_npu's databases by name; another .db (analysis.db) is not a rank.
TEST_F(RegistryFilesTest, DirectoriesAreSearchedForEachEntrysLooseFiles) {
  const std::string json = Directory("run") + "/a.pt.trace.json";
  std::ofstream(json) << "{}";
  const std::string sqlite = Directory("run/sub", "b.sqlite") + "/b.sqlite";
  const std::string msprof = Directory("run", "msprof_0.db") + "/msprof_0.db";
  const std::string torch_npu = Directory("run/r1", "ascend_pytorch_profiler_1.db") + "/ascend_pytorch_profiler_1.db";
  Directory("run", "analysis.db");
  Directory("run", "notes.txt");
  auto files = ListInputFiles((dir_ / "run").string());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{json, msprof, torch_npu, sqlite}));
}

TEST_F(RegistryFilesTest, ADirectoryWithoutTracesNamesEachEntrysLooseFiles) {
  const std::string dir = Directory("run", "analysis.db");
  auto files = ListInputFiles(dir);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().message(), dir +
                                          ": directory holds no trace files (*.json, *.json.gz, *.sqlite, msprof_*.db, "
                                          "ascend_pytorch_profiler*.db) or summaries (*.tps)");
}

TEST_F(RegistryFilesTest, NsysReportIsAnErrorSayingToExportIt) {
  const std::string report = Directory("run", "run.nsys-rep") + "/run.nsys-rep";
  auto given = ListInputFiles(report);
  ASSERT_FALSE(given.ok());
  EXPECT_NE(given.status().message().find(report + ": "), std::string::npos) << given.status().message();
  EXPECT_NE(given.status().message().find("nsys export --type sqlite"), std::string::npos);
  EXPECT_EQ(given.status().message().find('\n'), std::string::npos);

  auto in_directory = ListInputFiles((dir_ / "run").string());  // no export beside it: a rank would go missing
  ASSERT_FALSE(in_directory.ok());
  EXPECT_NE(in_directory.status().message().find("nsys export --type sqlite"), std::string::npos);
}

TEST_F(RegistryFilesTest, NsysReportWithItsExportIsReadThroughTheExport) {
  Directory("run", "run.nsys-rep");
  const std::string sqlite = Directory("run", "run.sqlite") + "/run.sqlite";
  auto files = ListInputFiles((dir_ / "run").string());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, std::vector<std::string>{sqlite});
}

TEST(RegistryTest, LooseNamesMatchTheirPatternsWhole) {
  for (std::string_view name : {"a.json", "a.json.gz", "b.sqlite", "msprof_0.db", "msprof_.db",
                                "ascend_pytorch_profiler.db", "ascend_pytorch_profiler_3.db"}) {
    EXPECT_TRUE(IsLooseTraceName(name)) << name;
  }
  for (std::string_view name : {"analysis.db", "msprof.db", "msprof_0.db.bak", "a.json.bak", "run.nsys-rep", "a.tps"}) {
    EXPECT_FALSE(IsLooseTraceName(name)) << name;
  }
}

TEST(RegistryTest, EntriesAreNamedOnceAndComplete) {
  std::set<std::string_view> names;
  for (const InputFormat& format : InputFormats()) {
    EXPECT_TRUE(names.insert(format.name).second) << format.name;
    EXPECT_NE(format.claims, nullptr) << format.name;
    EXPECT_NE(format.import, nullptr) << format.name;
    if (!format.group.empty()) EXPECT_FALSE(format.expected.empty()) << format.name;
  }
}

// The message names every format an entry offers, in the registry's order, worded as before the registry.
TEST(RegistryTest, ExpectedFormatsListsEveryOfferedEntry) {
  const std::string expected = ExpectedFormats();
  EXPECT_EQ(expected,
            "Chrome-trace JSON, .json or .json.gz; an Nsight Systems or torch_npu SQLite export; an Ascend rank "
            "directory; or a rank summary, *.tps");
  for (const InputFormat& format : InputFormats()) {
    if (!format.expected.empty()) EXPECT_NE(expected.find(format.expected), std::string::npos) << format.name;
  }
}

TEST_F(RegistryFilesTest, AFileNoEntryClaimsIsRefusedWithTheList) {
  const fs::path path = dir_ / "notes.txt";
  std::ofstream(path) << "hello";
  auto ranks = ImportFileRanks(path.string());
  ASSERT_FALSE(ranks.ok());
  EXPECT_EQ(ranks.status().message(),
            path.string() + ": not a trace tuneprof reads (expected " + ExpectedFormats() + ")");
}

}  // namespace
}  // namespace tuneprof

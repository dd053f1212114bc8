#include "io/trace_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/output_file.h"
#include "io/scratch_dir_for_test.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

class TraceFilesTest : public ::testing::Test {
 protected:
  ScratchDir scratch_{"tp_trace_files_"};
  const fs::path& dir_ = scratch_.path();

  std::string Touch(const std::string& name) { return scratch_.Write(name, "x"); }
};

TEST_F(TraceFilesTest, DiscoversNsightSqliteExportsBesideJsonTraces) {
  const std::string json = Touch("a.pt.trace.json");
  const std::string sqlite = Touch("sub/b.sqlite");
  Touch("notes.txt");
  auto files = ListTraceFiles(dir_.string(), nullptr);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{json, sqlite}));
}

// msprof's and torch_npu's databases are found loose in a directory; another .db (analysis.db) is not a rank.
TEST_F(TraceFilesTest, DiscoversProfilerDatabasesByName) {
  const std::string msprof = Touch("msprof_0.db");
  const std::string torch_npu = Touch("r1/ascend_pytorch_profiler_1.db");
  Touch("analysis.db");
  auto files = ListTraceFiles(dir_.string(), nullptr);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{msprof, torch_npu}));
}

TEST_F(TraceFilesTest, ADirectoryWithoutTracesNamesWhatIsLookedFor) {
  Touch("analysis.db");
  auto files = ListTraceFiles(dir_.string(), nullptr);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("msprof_*.db"), std::string::npos) << files.status().message();
}

TEST_F(TraceFilesTest, RanksAreListedInNumberOrderNotCharacterOrder) {
  const std::string r10 = Touch("rank10.json");
  const std::string r2 = Touch("rank2.json");
  const std::string r1 = Touch("rank1.json");
  const std::string r002 = Touch("rank002.json");
  auto files = ListTraceFiles(dir_.string(), nullptr);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{r1, r2, r002, r10}));
}

TEST_F(TraceFilesTest, NsysReportIsAnErrorSayingToExportIt) {
  const std::string report = Touch("run.nsys-rep");
  auto given = ListTraceFiles(report, nullptr);
  ASSERT_FALSE(given.ok());
  EXPECT_NE(given.status().message().find(report + ": "), std::string::npos) << given.status().message();
  EXPECT_NE(given.status().message().find("nsys export --type sqlite"), std::string::npos);
  EXPECT_EQ(given.status().message().find('\n'), std::string::npos);

  auto in_directory = ListTraceFiles(dir_.string(), nullptr);  // no export beside it: a rank would go missing
  ASSERT_FALSE(in_directory.ok());
  EXPECT_NE(in_directory.status().message().find("nsys export --type sqlite"), std::string::npos);
}

TEST_F(TraceFilesTest, NsysReportWithItsExportIsReadThroughTheExport) {
  Touch("run.nsys-rep");
  const std::string sqlite = Touch("run.sqlite");
  auto files = ListTraceFiles(dir_.string(), nullptr);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, std::vector<std::string>{sqlite});
}

TEST_F(TraceFilesTest, StandardInputIsRefusedWithTheFix) {
  auto listed = ListTraceFiles("-", nullptr);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(listed.status().message(),
            "-: reading a trace from standard input is not supported; save the trace to a file");
}

// A file named many times, or reached through symlinks and hard links, is one rank read once, at its
// first place, and said once with the count.
TEST_F(TraceFilesTest, AFileNamedManyTimesIsKeptOnce) {
  const std::string a = Touch("a.json"), b = Touch("b.json");
  fs::create_symlink(a, dir_ / "link.json");
  fs::create_hard_link(a, dir_ / "hard.json");
  std::vector<std::string> named(1000, a);
  named.insert(named.begin() + 1, b);
  named.push_back((dir_ / "link.json").string());
  named.push_back((dir_ / "hard.json").string());
  named.push_back((dir_ / "missing.json").string());  // kept: the import says what is wrong with it
  std::vector<std::string> notes;
  EXPECT_EQ(KeepEachFileOnce(named, &notes), (std::vector<std::string>{a, b, (dir_ / "missing.json").string()}));
  EXPECT_EQ(notes, std::vector<std::string>{a + ": named 1002 times (or through links to it); read once"});
}

TEST_F(TraceFilesTest, ManyRepeatedFilesAreSaidInSixLines) {
  std::vector<std::string> named;
  for (int i = 0; i < 8; ++i) {
    const std::string file = Touch("r" + std::to_string(i) + ".json");
    named.push_back(file);
    named.push_back(file);
  }
  std::vector<std::string> notes;
  EXPECT_EQ(KeepEachFileOnce(named, &notes).size(), 8u);
  ASSERT_EQ(notes.size(), 6u);
  EXPECT_EQ(notes.back(), "3 more files named more than once; each read once");
}

// `annotate --merge DIR -o DIR/merged.json.gz` must not add a rank to the next command on DIR: the merged
// run is left out of a directory, with a note, and read when named.
TEST_F(TraceFilesTest, AMergedRunInADirectoryIsLeftOut) {
  const std::string rank = Touch("rank0.json");
  const std::string merged = (dir_ / "merged.json.gz").string();
  ASSERT_TRUE(WriteGzipFileAtomically(merged, std::string(kMergedRunHead) + "\"traceEvents\":[]}").ok());
  std::vector<std::string> notes;
  auto files = ListTraceFiles(dir_.string(), nullptr, &notes);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, std::vector<std::string>{rank});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(notes[0].starts_with(merged + ": a whole run merged by tuneprof annotate --merge; skipped")) << notes[0];
  auto named = ListTraceFiles(merged, nullptr);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(*named, std::vector<std::string>{merged});
  EXPECT_TRUE(WriteFileAtomically(merged, "again").ok());  // peeked at, never read: it may be replaced
}

// Which directories are one rank is the caller's to say: such a directory is listed whole, given or
// met while searching, and the files inside it are not listed apart.
bool EndsInRankDir(const std::string& dir) { return dir.ends_with("_rank"); }

TEST_F(TraceFilesTest, ADirectoryTheTestAcceptsIsListedWholeAndNotSearched) {
  Touch("a_rank/inside.json");
  const std::string loose = Touch("loose.json");
  auto files = ListTraceFiles(dir_.string(), &EndsInRankDir);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{(dir_ / "a_rank").string(), loose}));
  auto given = ListTraceFiles((dir_ / "a_rank").string(), &EndsInRankDir);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(*given, std::vector<std::string>{(dir_ / "a_rank").string()});
  auto searched = ListTraceFiles(dir_.string(), nullptr);  // no test: every directory is searched
  ASSERT_TRUE(searched.ok());
  EXPECT_EQ(*searched, (std::vector<std::string>{(dir_ / "a_rank/inside.json").string(), loose}));
}

}  // namespace
}  // namespace tuneprof

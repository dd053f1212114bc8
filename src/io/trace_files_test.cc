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

// Kinds that take *.json and *.json.gz files and refuse *.refused ones, saying whether given or met in a directory.
const TraceFileKinds& JsonKinds() {
  static const TraceFileKinds kinds{
      nullptr, [](std::string_view name) { return name.ends_with(".json") || name.ends_with(".json.gz"); },
      [](const std::string& file, bool given) {
        return file.ends_with(".refused") ? InvalidInput(file + (given ? ": refused, given" : ": refused, met"))
                                          : Status::Ok();
      },
      "*.json, *.json.gz"};
  return kinds;
}

// Which names are traces, and which files are refused for their export, is the caller's to say (the
// importers' registry); io lists what the kinds take, beside rank summaries, and asks about the rest.
TEST_F(TraceFilesTest, TheKindsSayWhichFilesAreListedAndWhichRefused) {
  const std::string json = Touch("a.json");
  const std::string summary = Touch("sub/b.tps");
  Touch("notes.txt");
  auto files = ListTraceFiles(dir_.string(), JsonKinds());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{json, summary}));

  const std::string refused = Touch("run.refused");
  auto given = ListTraceFiles(refused, JsonKinds());
  ASSERT_FALSE(given.ok());
  EXPECT_EQ(given.status().message(), refused + ": refused, given");
  auto in_directory = ListTraceFiles(dir_.string(), JsonKinds());
  ASSERT_FALSE(in_directory.ok());
  EXPECT_EQ(in_directory.status().message(), refused + ": refused, met");
}

TEST_F(TraceFilesTest, ADirectoryWithoutTracesNamesWhatIsLookedFor) {
  Touch("analysis.db");
  auto files = ListTraceFiles(dir_.string(), JsonKinds());
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().message(),
            dir_.string() + ": directory holds no trace files (*.json, *.json.gz) or summaries (*.tps)");
}

TEST_F(TraceFilesTest, RanksAreListedInNumberOrderNotCharacterOrder) {
  const std::string r10 = Touch("rank10.json");
  const std::string r2 = Touch("rank2.json");
  const std::string r1 = Touch("rank1.json");
  const std::string r002 = Touch("rank002.json");
  auto files = ListTraceFiles(dir_.string(), JsonKinds());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{r1, r2, r002, r10}));
}

TEST_F(TraceFilesTest, StandardInputIsRefusedWithTheFix) {
  auto listed = ListTraceFiles("-", JsonKinds());
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
  auto files = ListTraceFiles(dir_.string(), JsonKinds(), &notes);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, std::vector<std::string>{rank});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(notes[0].starts_with(merged + ": a whole run merged by tuneprof annotate --merge; skipped")) << notes[0];
  auto named = ListTraceFiles(merged, JsonKinds());
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(*named, std::vector<std::string>{merged});
  EXPECT_TRUE(WriteFileAtomically(merged, "again").ok());  // peeked at, never read: it may be replaced
}

// Which directories are one rank is the caller's to say: such a directory is listed whole, given or
// met while searching, and the files inside it are not listed apart.
const TraceFileKinds& RankDirKinds() {
  static const TraceFileKinds kinds{[](const std::string& dir) { return dir.ends_with("_rank"); },
                                    JsonKinds().is_trace_name, nullptr, "*.json"};
  return kinds;
}

TEST_F(TraceFilesTest, ADirectoryTheTestAcceptsIsListedWholeAndNotSearched) {
  Touch("a_rank/inside.json");
  const std::string loose = Touch("loose.json");
  auto files = ListTraceFiles(dir_.string(), RankDirKinds());
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, (std::vector<std::string>{(dir_ / "a_rank").string(), loose}));
  auto given = ListTraceFiles((dir_ / "a_rank").string(), RankDirKinds());
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(*given, std::vector<std::string>{(dir_ / "a_rank").string()});
  auto searched = ListTraceFiles(dir_.string(), JsonKinds());  // no rank directories: every directory is searched
  ASSERT_TRUE(searched.ok());
  EXPECT_EQ(*searched, (std::vector<std::string>{(dir_ / "a_rank/inside.json").string(), loose}));
}

}  // namespace
}  // namespace tuneprof

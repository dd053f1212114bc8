#include "io/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "io/byte_source.h"
#include "io/files_read.h"
#include "io/scratch_dir_for_test.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ForgetFilesRead();  // inodes of files other tests read and removed are reused
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The first 64 bytes of `path` read back through a byte source, which inflates a gzip file;
  // `*compressed` says whether it was one. The error, for the caller's comparison to fail on, when the
  // file cannot be read.
  static std::string ReadBack(const std::string& path, bool* compressed = nullptr) {
    auto source = OpenByteSource(path);
    if (!source.ok()) return "unreadable: " + source.status().message();
    if (compressed) *compressed = (*source)->compressed();
    char buffer[64];
    auto n = (*source)->Read(buffer, sizeof(buffer));
    if (!n.ok()) return "unreadable: " + n.status().message();
    return std::string(buffer, *n);
  }
  size_t FilesInDir() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  ScratchDir scratch_{"tp_output_file_"};
  const fs::path& dir_ = scratch_.path();
};

TEST_F(OutputFileTest, WritesAndReplacesWholeWithoutLeavingATemporary) {
  const std::string path = Path("report.html");
  std::ofstream(path) << std::string(100000, 'o');
  ::chmod(path.c_str(), 0640);
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(Read(path), "new");
  EXPECT_EQ(FilesInDir(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);  // the replaced file's mode is kept
}

TEST_F(OutputFileTest, ASymlinkStaysAndItsTargetIsReplaced) {
  const std::string target = Path("target.html"), link = Path("link.html");
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  ASSERT_TRUE(WriteFileAtomically(link, "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Read(target), "new");
}

TEST_F(OutputFileTest, GzipOutputReadsBack) {
  const std::string path = Path("annotated.json.gz");
  ASSERT_TRUE(WriteGzipFileAtomically(path, "{\"traceEvents\": []}").ok());
  bool compressed = false;
  EXPECT_EQ(ReadBack(path, &compressed), "{\"traceEvents\": []}");
  EXPECT_TRUE(compressed);
  EXPECT_EQ(FilesInDir(), 1u);
}

TEST_F(OutputFileTest, StreamedGzipOutputAppearsOnlyWhenCommitted) {
  const std::string path = Path("merged.json.gz");
  auto out = StreamingOutputFile::Open(path);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_TRUE((*out)->Write("{\"traceEvents\": [").ok());
  ASSERT_TRUE((*out)->Write("]}").ok());
  EXPECT_FALSE(fs::exists(path));  // still the temporary file
  EXPECT_EQ((*out)->bytes_written(), 19u);
  ASSERT_TRUE((*out)->Commit().ok());
  EXPECT_EQ(ReadBack(path), "{\"traceEvents\": []}");
  EXPECT_EQ(FilesInDir(), 1u);
}

TEST_F(OutputFileTest, AStreamedOutputWithoutCompressionIsWrittenAsItIsWhateverItsName) {
  const std::string path = Path("report.html.gz");
  std::ofstream(path) << "old";
  ::chmod(path.c_str(), 0640);
  auto out = StreamingOutputFile::Open(path, StreamingOutputFile::Compression::kNone);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_TRUE((*out)->Write("<html>").ok());
  ASSERT_TRUE((*out)->Write("</html>").ok());
  EXPECT_EQ(Read(path), "old");  // until committed
  ASSERT_TRUE((*out)->Commit().ok());
  EXPECT_EQ(Read(path), "<html></html>");
  EXPECT_EQ(FilesInDir(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);  // as WriteFileAtomically keeps the replaced file's mode
}

TEST_F(OutputFileTest, AStreamedOutputDroppedUncommittedLeavesThePreviousFile) {
  const std::string path = Path("run.json");
  std::ofstream(path) << "old";
  {
    auto out = StreamingOutputFile::Open(path);
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE((*out)->Write("new, half written").ok());
  }
  EXPECT_EQ(Read(path), "old");
  EXPECT_EQ(FilesInDir(), 1u);
}

TEST_F(OutputFileTest, AFailedWriteIsAnIoErrorAndLeavesNothing) {
  const std::string file = Path("trace.json");
  std::ofstream(file) << "{}";
  const Status under_file = WriteFileAtomically(file + "/report.html", "x");
  EXPECT_EQ(under_file.code(), StatusCode::kIoError);
  EXPECT_NE(under_file.message().find("trace.json/report.html"), std::string::npos);
  const Status directory = WriteFileAtomically(dir_.string(), "x");
  EXPECT_EQ(directory.code(), StatusCode::kIoError);
  EXPECT_EQ(FilesInDir(), 1u);
  EXPECT_EQ(Read(file), "{}");
}

TEST_F(OutputFileTest, TheInputItselfThroughAnyNameIsRefused) {
  const std::string input = Path("x.json.gz");
  std::ofstream(input) << "trace";
  fs::create_symlink(input, Path("sym.html"));
  fs::create_hard_link(input, Path("hard.html"));
  for (const std::string& output : {input, Path("sym.html"), Path("hard.html"), Path("./x.json.gz")}) {
    const Status clash = CheckOutputIsNotInput(output, {Path("other.json"), input});
    EXPECT_EQ(clash.code(), StatusCode::kUsage) << output;
  }
  EXPECT_TRUE(CheckOutputIsNotInput(Path("new.html"), {input}).ok());
  std::ofstream(Path("old.html")) << "report";
  EXPECT_TRUE(CheckOutputIsNotInput(Path("old.html"), {input}).ok());
  EXPECT_EQ(CheckOutputIsNotInput(dir_.string(), {input}).code(), StatusCode::kIoError);
}

// Every writer refuses a FIFO before writing: it never opens it (which would block without a reader) and
// leaves it a FIFO.
TEST_F(OutputFileTest, AFifoIsRefusedByEveryWriterAndStaysAFifo) {
  const std::string fifo = Path("out.html");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<Status> refusals;
  refusals.push_back(CheckOutputIsNotInput(fifo, {}));
  refusals.push_back(WriteFileAtomically(fifo, "x"));
  refusals.push_back(WriteGzipFileAtomically(fifo, "x"));
  refusals.push_back(StreamingOutputFile::Open(fifo).status());
  refusals.push_back(PendingOutputFile::Create(fifo, "--sqlite").status());
  for (const Status& refused : refusals) {
    EXPECT_EQ(refused.code(), StatusCode::kIoError) << refused.message();
    EXPECT_NE(refused.message().find(fifo + ": is a FIFO (named pipe), not a regular file"), std::string::npos)
        << refused.message();
  }
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(FilesInDir(), 1u);
}

// A symlink is written through to its target, and the target is checked by the same rules: a link to a
// device is a device.
TEST_F(OutputFileTest, ASymlinkToADeviceIsADevice) {
  if (!fs::exists("/dev/null")) GTEST_SKIP() << "no /dev/null";
  const std::string link = Path("export.db");
  fs::create_symlink("/dev/null", link);
  for (const Status& refused : {CheckOutputIsNotInput(link, {}), WriteFileAtomically(link, "x"),
                                PendingOutputFile::Create(link, "--sqlite").status()}) {
    EXPECT_EQ(refused.code(), StatusCode::kIoError);
    EXPECT_NE(refused.message().find(link + ": is a character device"), std::string::npos) << refused.message();
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

// A link to a file not there yet is written through, as open() would: the target is created and the link
// stays. A link whose target's directory is missing (or a loop of links) is refused by every writer, naming
// the link and its target, and the link stays: renaming beside it would replace the link itself.
TEST_F(OutputFileTest, ADanglingSymlinkIsWrittenThroughOrRefusedNeverReplaced) {
  const std::string link = Path("new.html");
  fs::create_symlink("made.html", link);
  ASSERT_TRUE(CheckOutputIsNotInput(link, {}).ok());
  ASSERT_TRUE(WriteFileAtomically(link, "<html>").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Read(Path("made.html")), "<html>");

  const std::string dangling = Path("dang.sqlite"), loop = Path("loop.html");
  fs::create_symlink("nodir/x.sqlite", dangling);
  fs::create_symlink("loop.html", loop);
  for (const std::string& output : {dangling, loop}) {
    std::vector<Status> refusals;
    refusals.push_back(CheckOutputIsNotInput(output, {}));
    refusals.push_back(CheckOutputTarget(output));
    refusals.push_back(WriteFileAtomically(output, "x"));
    refusals.push_back(WriteGzipFileAtomically(output, "x"));
    refusals.push_back(StreamingOutputFile::Open(output).status());
    refusals.push_back(PendingOutputFile::Create(output, "--sqlite").status());
    for (const Status& refused : refusals) {
      EXPECT_EQ(refused.code(), StatusCode::kIoError) << refused.message();
      EXPECT_TRUE(refused.message().starts_with(output + ": cannot write the output file: a symbolic link"))
          << refused.message();
    }
    EXPECT_TRUE(fs::is_symlink(output));
  }
  const std::string said = CheckOutputTarget(dangling).message();
  EXPECT_NE(said.find(Path("nodir/x.sqlite") + ", whose directory " + Path("nodir") + " does not exist"),
            std::string::npos)
      << said;
  EXPECT_EQ(FilesInDir(), 4u);
}

// "-" is standard output to most tools: refused by every writer, and no file named "-" appears.
TEST_F(OutputFileTest, StandardOutputIsRefusedByEveryWriter) {
  std::vector<Status> refusals;
  refusals.push_back(CheckOutputIsNotInput("-", {}));
  refusals.push_back(CheckOutputTarget("-"));
  refusals.push_back(WriteFileAtomically("-", "x"));
  refusals.push_back(WriteGzipFileAtomically("-", "x"));
  refusals.push_back(StreamingOutputFile::Open("-").status());
  refusals.push_back(PendingOutputFile::Create("-", "--sqlite").status());
  for (const Status& refused : refusals) {
    EXPECT_EQ(refused.code(), StatusCode::kUsage) << refused.message();
    EXPECT_EQ(refused.message(), "-: writing to standard output is not supported; give a file name");
  }
  EXPECT_FALSE(fs::exists("-"));
}

// The refusal's advice names the option that named the output: -o for the writers of report, annotate and
// summarize, --sqlite for export, the argument for Python's to_sqlite.
TEST_F(OutputFileTest, TheRefusalNamesTheOptionOfTheOutput) {
  const std::string table = Path("trace_view.json");
  std::ofstream(table) << "[]";
  ASSERT_TRUE(OpenByteSource(table).ok());
  const auto advice = [](const Status& refused) {
    const size_t at = refused.message().find("; writing it would destroy the input, give ");
    return at == std::string::npos ? refused.message() : refused.message().substr(at + 43);
  };
  EXPECT_EQ(advice(WriteFileAtomically(table, "x")), "-o another file");
  EXPECT_EQ(advice(StreamingOutputFile::Open(table).status()), "-o another file");
  EXPECT_EQ(advice(CheckOutputIsNotInput(table, {})), "-o another file");
  EXPECT_EQ(advice(CheckOutputIsNotInput(table, {table}, "--sqlite")), "--sqlite another file");
  EXPECT_EQ(advice(CheckOutputIsNotInput(table, {}, "--sqlite")), "--sqlite another file");
  EXPECT_EQ(advice(PendingOutputFile::Create(table, "--sqlite").status()), "--sqlite another file");
  EXPECT_EQ(advice(PendingOutputFile::Create(table, "to_sqlite's path argument").status()),
            "to_sqlite's path argument another file");
  EXPECT_EQ(Read(table), "[]");
}

// A file the run read under a name no command line gave (a table inside a rank directory), or through a
// hard link, is never written over.
TEST_F(OutputFileTest, AFileTheRunReadIsRefusedByEveryWriter) {
  const std::string table = Path("kernel_details.csv");
  std::ofstream(table) << "Name,Start Time(us)\n";
  fs::create_hard_link(table, Path("copy.csv"));
  ASSERT_TRUE(OpenByteSource(table).ok());
  for (const std::string& output : {table, Path("copy.csv")}) {
    std::vector<Status> refusals;
    refusals.push_back(CheckOutputIsNotInput(output, {}));
    refusals.push_back(WriteFileAtomically(output, "x"));
    refusals.push_back(StreamingOutputFile::Open(output).status());
    refusals.push_back(PendingOutputFile::Create(output, "--sqlite").status());
    for (const Status& refused : refusals) {
      EXPECT_EQ(refused.code(), StatusCode::kUsage) << refused.message();
      EXPECT_NE(refused.message().find("the output is a file this run reads"), std::string::npos) << refused.message();
    }
  }
  EXPECT_EQ(Read(table), "Name,Start Time(us)\n");
  EXPECT_EQ(FilesInDir(), 2u);
}

// The target is looked at again when the output is renamed into place: a file read after the output
// began is kept, and the temporary file removed.
TEST_F(OutputFileTest, ATargetReadAfterTheOutputBeganIsKept) {
  const std::string path = Path("trace_view.json");
  std::ofstream(path) << "{}";
  auto out = StreamingOutputFile::Open(path);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE((*out)->Write("new").ok());
  ASSERT_TRUE(ReadHead(path, 2).ok());
  EXPECT_EQ((*out)->Commit().code(), StatusCode::kUsage);
  out->reset();
  EXPECT_EQ(Read(path), "{}");
  EXPECT_EQ(FilesInDir(), 1u);
}

// A listing only peeks at files it may leave out: that records nothing.
TEST_F(OutputFileTest, APeekIsNotARead) {
  const std::string path = Path("merged.json");
  std::ofstream(path) << "{}";
  ASSERT_TRUE(PeekHead(path, 2).ok());
  EXPECT_TRUE(WriteFileAtomically(path, "new").ok());
}

TEST_F(OutputFileTest, APendingOutputIsRenamedIntoPlaceOnlyWhenCommitted) {
  const std::string path = Path("run.db");
  std::ofstream(path) << "old";
  {
    auto pending = PendingOutputFile::Create(path, "--sqlite");
    ASSERT_TRUE(pending.ok()) << pending.status().message();
    std::ofstream((*pending)->temp_path()) << "half";
  }
  EXPECT_EQ(Read(path), "old");
  EXPECT_EQ(FilesInDir(), 1u);
  auto pending = PendingOutputFile::Create(path, "--sqlite");
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(fs::path((*pending)->temp_path()).parent_path(), dir_);
  std::ofstream((*pending)->temp_path()) << "new";
  ASSERT_TRUE((*pending)->Commit().ok());
  EXPECT_EQ(Read(path), "new");
  EXPECT_EQ(FilesInDir(), 1u);
}

}  // namespace
}  // namespace tuneprof

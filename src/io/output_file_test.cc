#include "io/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/byte_source.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tp_output_file_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  size_t FilesInDir() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  fs::path dir_;
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
  auto source = OpenByteSource(path);
  ASSERT_TRUE(source.ok());
  EXPECT_TRUE((*source)->compressed());
  char buffer[64];
  auto n = (*source)->Read(buffer, sizeof(buffer));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(buffer, *n), "{\"traceEvents\": []}");
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
  auto source = OpenByteSource(path);
  ASSERT_TRUE(source.ok());
  char buffer[64];
  auto n = (*source)->Read(buffer, sizeof(buffer));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(buffer, *n), "{\"traceEvents\": []}");
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

}  // namespace
}  // namespace tuneprof

#include "io/byte_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "io/files_read.h"
#include "io/gzip_for_test.h"

namespace tuneprof {
namespace {

// Opening a FIFO for reading blocks until a writer comes; the source must refuse it without opening it
// that way (this test would hang otherwise).
TEST(OpenByteSource, RefusesAFifoWithoutBlocking) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tp_fifo_" + std::to_string(::getpid()) + ".json")).string();
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  auto source = OpenByteSource(path);
  ::unlink(path.c_str());
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(source.status().message().find("FIFO"), std::string::npos) << source.status().message();
  EXPECT_EQ(source.status().message().find('\n'), std::string::npos);
}

TEST(OpenByteSource, RefusesACharacterDevice) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  auto head = ReadHead("/dev/zero", 16);
  ASSERT_FALSE(head.ok());
  EXPECT_NE(head.status().message().find("character device"), std::string::npos) << head.status().message();
}

// A second reader of a plain file starts where it is asked and leaves the first reader's position alone.
TEST(OpenByteSource, ReaderAtReadsFromAnOffsetBesideTheSource) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tp_reader_at_" + std::to_string(::getpid()) + ".json")).string();
  FILE* file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  std::fputs("0123456789", file);
  std::fclose(file);
  auto source = OpenByteSource(path);
  ASSERT_TRUE(source.ok());
  char first[4] = {};
  ASSERT_EQ((*source)->Read(first, 3).value(), 3u);
  std::unique_ptr<ByteSource> reader = (*source)->ReaderAt(6);
  ASSERT_NE(reader, nullptr);
  char rest[8] = {};
  EXPECT_EQ(reader->Read(rest, sizeof rest).value(), 4u);
  EXPECT_STREQ(rest, "6789");
  EXPECT_EQ(reader->Read(rest, sizeof rest).value(), 0u);
  char next[4] = {};
  ASSERT_EQ((*source)->Read(next, 3).value(), 3u);
  EXPECT_STREQ(next, "345");
  ::unlink(path.c_str());
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tp_" + std::to_string(::getpid()) + "_" + name)).string();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  FILE* file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
}

Result<std::string> ReadAll(const std::string& path) {
  TP_ASSIGN_OR_RETURN(auto source, OpenByteSource(path));
  std::string text(1 << 16, '\0');
  TP_ASSIGN_OR_RETURN(size_t n, source->Read(text.data(), text.size()));
  text.resize(n);
  return text;
}

// tar and dd pad files with zeros to a whole block: gzip reads such a file, and so does tuneprof.
TEST(OpenByteSource, GzipWithTrailingZeroPaddingReadsAsGzipDoes) {
  const std::string path = TempPath("padded.json.gz");
  const std::string text = "{\"traceEvents\": []}";
  WriteBytes(path, Gzip(text) + std::string(10240, '\0'));
  auto padded = ReadAll(path);
  ASSERT_TRUE(padded.ok()) << padded.status().message();
  EXPECT_EQ(*padded, text);
  // A second member after the zeros is read too; other bytes after them are still corrupt data.
  WriteBytes(path, Gzip(text) + std::string(512, '\0') + Gzip(text));
  auto two = ReadAll(path);
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(*two, text + text);
  WriteBytes(path, Gzip(text) + std::string(512, '\0') + "garbage");
  auto garbage = ReadAll(path);
  ::unlink(path.c_str());
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("corrupt gzip data"), std::string::npos);
}

// A gzip stream is entered midway by inflating it from its start: the reader gives the content from the
// offset on, beside the source's own position, and the content's size comes from the gzip trailer.
TEST(OpenByteSource, GzipReaderAtInflatesUpToItsOffset) {
  const std::string path = TempPath("reader_at.json.gz");
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "{\"ph\": \"X\", \"ts\": " + std::to_string(i) + "},\n";
  WriteBytes(path, Gzip(text));
  auto source = OpenByteSource(path);
  ASSERT_TRUE(source.ok());
  EXPECT_EQ((*source)->content_size_hint(), text.size());
  char first[10] = {};
  ASSERT_EQ((*source)->Read(first, 9).value(), 9u);
  std::unique_ptr<ByteSource> reader = (*source)->ReaderAt(text.size() - 100);
  ASSERT_NE(reader, nullptr);
  std::string rest(200, '\0');
  rest.resize(reader->Read(rest.data(), rest.size()).value());
  EXPECT_EQ(rest, text.substr(text.size() - 100));
  EXPECT_EQ(reader->Read(rest.data(), rest.size()).value(), 0u);
  char next[10] = {};
  ASSERT_EQ((*source)->Read(next, 9).value(), 9u);
  EXPECT_EQ(std::string(first, 9) + std::string(next, 9), text.substr(0, 18));
  ::unlink(path.c_str());
}

TEST(OpenByteSource, CompressionsNotReadAreNamedByTheirMagicBytes) {
  EXPECT_EQ(CompressionOf(std::string("\x28\xB5\x2F\xFD\x04", 5)), "zstd");
  EXPECT_EQ(CompressionOf("BZh91AY&SY"), "bzip2");
  EXPECT_EQ(CompressionOf(std::string("\xFD"
                                      "7zXZ\0\0",
                                      7)),
            "xz");
  EXPECT_EQ(CompressionOf(std::string("\x04\x22\x4D\x18\x64", 5)), "lz4");
  EXPECT_EQ(CompressionOf("{\"traceEvents\": []}"), "");
  EXPECT_EQ(CompressionOf("BZh"), "");
  EXPECT_EQ(UnreadCompression("t.json.zst", "zstd").message(),
            "t.json.zst: a zstd-compressed file; decompress it first (zstd -d t.json.zst)");
}

TEST(OpenByteSource, StandardInputIsRefused) {
  auto source = OpenByteSource("-");
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(source.status().message().find("-: reading a trace from standard input is not supported"),
            std::string::npos);
}

// Every file opened for reading is recorded (for io/output_file.h); a peek is not.
TEST(OpenByteSource, RecordsTheFilesItReads) {
  ForgetFilesRead();
  const std::string read = TempPath("read.json"), peeked = TempPath("peeked.json");
  WriteBytes(read, "{}");
  WriteBytes(peeked, "{}");
  ASSERT_TRUE(OpenByteSource(read).ok());
  ASSERT_TRUE(PeekHead(peeked, 2).ok());
  struct stat st;
  ASSERT_EQ(::stat(read.c_str(), &st), 0);
  EXPECT_EQ(FileReadAt(st.st_dev, st.st_ino), read);
  ASSERT_EQ(::stat(peeked.c_str(), &st), 0);
  EXPECT_EQ(FileReadAt(st.st_dev, st.st_ino), "");
  ::unlink(read.c_str());
  ::unlink(peeked.c_str());
  ForgetFilesRead();
}

// The small files importers read whole (a rank's settings, a flag's JSON) go through io too: recorded as
// read, gunzipped as traces are, an empty file as no bytes, and a file past the limit refused, not held.
TEST(ReadWholeFile, RecordsReadsEmptyAndBoundsTheFile) {
  ForgetFilesRead();
  const std::string small = TempPath("small.json"), empty = TempPath("empty.json"), gz = TempPath("small.json.gz");
  const std::string big = TempPath("big.json");
  WriteBytes(small, "{\"rank_id\": 3}");
  WriteBytes(empty, "");
  WriteBytes(gz, Gzip("{\"rank_id\": 4}"));
  WriteBytes(big, std::string(300 << 10, ' '));
  auto text = ReadWholeFile(small, 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "{\"rank_id\": 3}");
  struct stat st;
  ASSERT_EQ(::stat(small.c_str(), &st), 0);
  EXPECT_EQ(FileReadAt(st.st_dev, st.st_ino), small);
  text = ReadWholeFile(empty, 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "");
  text = ReadWholeFile(gz, 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "{\"rank_id\": 4}");
  EXPECT_TRUE(ReadWholeFile(big, 1 << 20).ok());
  text = ReadWholeFile(big, 128 << 10);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(text.status().message().find(big + ": over"), std::string::npos) << text.status().message();
  EXPECT_FALSE(ReadWholeFile("-", 1 << 20).ok());
  for (const std::string& path : {small, empty, gz, big}) ::unlink(path.c_str());
  ForgetFilesRead();
}

}  // namespace
}  // namespace tuneprof

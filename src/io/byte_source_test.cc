#include "io/byte_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

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

// A second reader of a plain file starts where it is asked and leaves the first reader's position alone;
// a gzip stream cannot be entered midway and has none.
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

  const std::string gz = path + ".gz";
  file = std::fopen(gz.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  const unsigned char magic[] = {0x1f, 0x8b, 0x08, 0x00};
  std::fwrite(magic, 1, sizeof magic, file);
  std::fclose(file);
  auto compressed = OpenByteSource(gz);
  ::unlink(gz.c_str());
  ASSERT_TRUE(compressed.ok());
  EXPECT_EQ((*compressed)->ReaderAt(0), nullptr);
}

}  // namespace
}  // namespace tuneprof

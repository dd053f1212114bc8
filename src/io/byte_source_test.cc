#include "io/byte_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace
}  // namespace tuneprof

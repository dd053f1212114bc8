#include "io/read_roots.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <unistd.h>

#include "io/scratch_dir_for_test.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

class ReadRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(base_ / "allowed" / "run");
    fs::create_directories(base_ / "allowed2");
    fs::create_directories(base_ / "outside");
    std::ofstream(base_ / "outside" / "t.json") << "{}";
    std::ofstream(base_ / "allowed" / "run" / "t.json") << "{}";
    fs::create_symlink(base_ / "outside" / "t.json", base_ / "allowed" / "link.json");
    fs::create_symlink(base_ / "outside", base_ / "allowed" / "dirlink");
  }
  void TearDown() override { ASSERT_TRUE(RestrictReadsTo({}).ok()); }
  std::string At(const std::string& relative) const { return (base_ / relative).string(); }

  ScratchDir scratch_{"read_roots_"};
  const fs::path& base_ = scratch_.path();
};

TEST_F(ReadRootsTest, UnrestrictedAllowsAnything) { EXPECT_TRUE(CheckReadAllowed("/etc/passwd").ok()); }

TEST_F(ReadRootsTest, PathsResolveBeforeTheCheck) {
  ASSERT_TRUE(RestrictReadsTo({At("allowed")}).ok());
  EXPECT_TRUE(CheckReadAllowed(At("allowed/run/t.json")).ok());
  EXPECT_TRUE(CheckReadAllowed(At("allowed")).ok());
  EXPECT_TRUE(CheckReadAllowed(At("allowed/run/missing.json")).ok());  // the command says it is missing
  EXPECT_FALSE(CheckReadAllowed(At("allowed/link.json")).ok());
  EXPECT_FALSE(CheckReadAllowed(At("allowed/dirlink/t.json")).ok());
  EXPECT_FALSE(CheckReadAllowed(At("allowed/run/../../outside/t.json")).ok());
  EXPECT_FALSE(CheckReadAllowed(At("allowed2")).ok());
  const Status refused = CheckReadAllowed("/etc/passwd");
  EXPECT_EQ(refused.message(),
            "path /etc/passwd is outside the allowed directories: " + fs::canonical(At("allowed")).string());
}

TEST_F(ReadRootsTest, AnOpenFileIsCheckedByWhatItHolds) {
  ASSERT_TRUE(RestrictReadsTo({At("allowed")}).ok());
  const int inside = ::open(At("allowed/run/t.json").c_str(), O_RDONLY | O_CLOEXEC);
  const int outside = ::open(At("outside/t.json").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(inside, 0);
  ASSERT_GE(outside, 0);
  EXPECT_TRUE(CheckOpenedAllowed(inside, At("allowed/run/t.json")).ok());
  // As if allowed/run/t.json had been swapped for a symlink out after the check by name.
  EXPECT_FALSE(CheckOpenedAllowed(outside, At("allowed/run/t.json")).ok());
  ::close(inside);
  ::close(outside);
}

TEST_F(ReadRootsTest, ARootThatIsNoDirectoryIsAnError) {
  EXPECT_FALSE(RestrictReadsTo({At("nowhere")}).ok());
  EXPECT_FALSE(RestrictReadsTo({At("outside/t.json")}).ok());
}

}  // namespace
}  // namespace tuneprof

// Every file an import opens is recorded as read (io/files_read.h), so that no output is ever written over
// it. The kernel says which files were opened (inotify watches on every folder of a copy of the input), the
// registry says which were recorded: the first set must lie inside the second. A reader that opened a file
// its own way (a JSON library's load, an ifstream) would show here as a file opened but not recorded.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "importers/import.h"
#include "io/files_read.h"
#include "io/scratch_dir_for_test.h"
#include "test_corpus.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

const std::string kTorchNpu = std::string(TUNEPROF_SHARED_DIR) + "/traces/ascend/msinsight/test/data/pytorch/";
const std::string kNsys = std::string(TUNEPROF_SHARED_DIR) + "/traces/nsys/synthetic_healthy_1pct.sqlite";

// The regular files opened under a folder tree while it is watched. A copy of the input is watched, not
// the corpus itself, so that another process reading the corpus at the same time adds nothing.
class OpenedFiles {
 public:
  explicit OpenedFiles(const fs::path& root) : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (fd_ < 0) return;
    Watch(root);
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_directory()) Watch(entry.path());
    }
  }
  ~OpenedFiles() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenedFiles(const OpenedFiles&) = delete;
  OpenedFiles& operator=(const OpenedFiles&) = delete;

  bool ok() const { return fd_ >= 0 && !watches_.empty(); }

  std::set<fs::path> Drain() {
    std::set<fs::path> opened;
    alignas(inotify_event) char buffer[64 << 10];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        if ((event->mask & IN_OPEN) && !(event->mask & IN_ISDIR) && event->len > 0) {
          opened.insert(watches_.at(event->wd) / event->name);
        }
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
    return opened;
  }

 private:
  void Watch(const fs::path& dir) {
    const int wd = ::inotify_add_watch(fd_, dir.c_str(), IN_OPEN);
    if (wd >= 0) watches_[wd] = dir;
  }
  int fd_;
  std::map<int, fs::path> watches_;
};

bool Recorded(const fs::path& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 &&
         !FileReadAt(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)).empty();
}

class FilesReadTest : public ::testing::Test {
 protected:
  void SetUp() override { ForgetFilesRead(); }
  void TearDown() override { ForgetFilesRead(); }

  // A writable copy of `source` (a folder or a file) under the test's folder.
  fs::path Copy(const fs::path& source) {
    const fs::path copy = base_ / source.filename();
    fs::copy(source, copy, fs::copy_options::recursive);
    fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);  // the corpus is read-only
    if (fs::is_directory(copy)) {
      for (const auto& entry : fs::recursive_directory_iterator(copy)) {
        fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
      }
    }
    return copy;
  }

  // Imports `input` (inside the watched folder `watched`); every regular file opened is recorded, and the
  // files named in `must_open` were among them (so that the check checks something).
  void ExpectEveryOpenedFileRecorded(const fs::path& watched, const fs::path& input,
                                     const std::set<std::string>& must_open) {
    OpenedFiles watch(watched);
    ASSERT_TRUE(watch.ok()) << "inotify: " << std::strerror(errno);
    auto ranks = ImportFileRanks(input.string());
    ASSERT_TRUE(ranks.ok()) << ranks.status().message();
    const std::set<fs::path> opened = watch.Drain();
    std::set<std::string> names;
    for (const fs::path& path : opened) {
      names.insert(path.filename().string());
      EXPECT_TRUE(Recorded(path)) << path << " was opened by the import but not recorded as read";
    }
    for (const std::string& name : must_open) EXPECT_TRUE(names.count(name)) << name << " was not opened";
  }

  ScratchDir scratch_{"tp_files_read_test_"};
  const fs::path& base_ = scratch_.path();
};

TEST_F(FilesReadTest, TorchNpuTextRank) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path rank = Copy(kTorchNpu + "text/level1/rank0_ascend_pt");
  ExpectEveryOpenedFileRecorded(
      rank, rank, {"profiler_info_0.json", "profiler_metadata.json", "trace_view.json", "kernel_details.csv"});
}

TEST_F(FilesReadTest, TorchNpuDbRank) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path rank = Copy(kTorchNpu + "db/level1/rank0_ascend_pt");
  ExpectEveryOpenedFileRecorded(rank, rank, {"profiler_info_0.json", "ascend_pytorch_profiler_0.db"});
}

TEST_F(FilesReadTest, MsprofDirectory) {
  const fs::path root = base_ / "PROF_000001_20260101120000000_ABCDEFGH";
  fs::create_directories(root / "mindstudio_profiler_output");
  fs::create_directories(root / "device_3");
  std::ofstream(root / "mindstudio_profiler_output/op_summary_20260101120000.csv")
      << "Device_id,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us)\n"
         "3,aclnnMatmul_MatMulV3,MatMulV3,AI_CORE,1767268800000000.123,12.345,0\n";
  std::ofstream(root / "device_3/info.json") << R"({"DeviceInfo": [{"id": 3}], "platform_version": "Ascend910B2"})";
  ExpectEveryOpenedFileRecorded(root, root, {"info.json", "op_summary_20260101120000.csv"});
}

TEST_F(FilesReadTest, NsysExport) {
  TUNEPROF_REQUIRE_CORPUS();
  const fs::path file = Copy(kNsys);
  ExpectEveryOpenedFileRecorded(base_, file, {file.filename().string()});
}

}  // namespace
}  // namespace tuneprof

#include "io/files_read.h"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <utility>

namespace tuneprof {
namespace {

struct FilesRead {
  std::mutex mutex;
  std::map<std::pair<uint64_t, uint64_t>, std::string> names;  // (device, inode) -> the first name read by
};

FilesRead& Registry() {
  static FilesRead* files = new FilesRead();  // never destroyed: readers may run during static destruction
  return *files;
}

void Record(const struct stat& st, const std::string& path) {
  FilesRead& files = Registry();
  const std::lock_guard<std::mutex> lock(files.mutex);
  files.names.try_emplace({static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}, path);
}

}  // namespace

void RecordFileRead(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) == 0) Record(st, path);
}

void RecordFileRead(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) Record(st, path);
}

std::string FileReadAt(uint64_t device, uint64_t inode) {
  FilesRead& files = Registry();
  const std::lock_guard<std::mutex> lock(files.mutex);
  const auto found = files.names.find({device, inode});
  return found == files.names.end() ? std::string() : found->second;
}

void ForgetFilesRead() {
  FilesRead& files = Registry();
  const std::lock_guard<std::mutex> lock(files.mutex);
  files.names.clear();
}

}  // namespace tuneprof

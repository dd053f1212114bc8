#pragma once
// Output files written whole or not at all, and never over an input. The bytes go to a temporary file
// beside the target (same directory, so same file system) that is renamed over the target only once
// every byte is written and flushed: a full disk or a killed process leaves the previous file (or none),
// never half a report.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tuneprof {

// The rules every output follows, whichever command or edge writes it:
// - a file name, never "-": standard output is refused (kUsage), not written as a file named "-";
// - only a regular file is replaced (or a new one created): a directory, FIFO, device or socket is
//   refused (kIoError) before anything is written;
// - a symlink is written through: the link stays and its target is replaced, the target checked by these
//   same rules (so a link to /dev/null is a device, refused);
// - never a file the run reads: any file this process opened for reading (io/files_read.h; the tables
//   of an input directory too), by device and inode, is refused (kUsage);
// - written whole to a temporary file beside the target and renamed over it, the target checked again
//   just before the rename; a failure leaves the previous file (or none) and no temporary file.
//
// `option` is how the user named the output (-o, --sqlite, a Python argument): a refusal's advice names it
// ("give --sqlite another file"). Every writer's option is -o unless it says otherwise.
//
// kUsage naming `output` when it is the same file as one of `inputs` (device and inode, so a symlink or
// a hard link to an input counts too) or a file read so far; kIoError when it is a directory or not a
// regular file. An output that does not exist yet clashes with nothing. Commands call it before their
// analysis, which can take minutes; the writers below check again when they write.
Status CheckOutputIsNotInput(const std::string& output, const std::vector<std::string>& inputs,
                             std::string_view option = "-o");

// The target checks alone (file type, files read), as the writers below make them.
Status CheckOutputTarget(const std::string& path, std::string_view option = "-o");

// Writes `bytes` to `path` through a temporary file and a rename. kIoError naming `path` and the cause.
Status WriteFileAtomically(const std::string& path, std::string_view bytes, std::string_view option = "-o");

// The same, gzip-compressed (level 6).
Status WriteGzipFileAtomically(const std::string& path, std::string_view bytes, std::string_view option = "-o");

// An output written piece by piece, so that a file of many GB (a merged trace) never sits in memory;
// gzip-compressed (level 6) when the name ends in ".gz". Whole or not at all, as above: the pieces go to
// a temporary file beside the target, renamed over it by Commit(); destroyed uncommitted, it leaves
// the previous file (or none).
class StreamingOutputFile {
 public:
  enum class Compression : uint8_t {
    kByName,  // gzip where the name ends in ".gz"
    kNone,    // the bytes as they are, whatever the name (as WriteFileAtomically writes them)
  };
  static Result<std::unique_ptr<StreamingOutputFile>> Open(const std::string& path,
                                                           Compression compression = Compression::kByName,
                                                           std::string_view option = "-o");
  ~StreamingOutputFile();
  StreamingOutputFile(const StreamingOutputFile&) = delete;
  StreamingOutputFile& operator=(const StreamingOutputFile&) = delete;

  Status Write(std::string_view bytes);
  Status Commit();
  uint64_t bytes_written() const { return bytes_written_; }  // before compression

 private:
  struct Impl;
  explicit StreamingOutputFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  uint64_t bytes_written_ = 0;
};

// An output a library writes by name (SQLite opens its database itself): an empty temporary file beside
// the target, checked and created as every output is; the writer fills temp_path(), Commit() renames it
// over the target. Destroyed uncommitted, it is removed and leaves the previous file (or none).
class PendingOutputFile {
 public:
  static Result<std::unique_ptr<PendingOutputFile>> Create(const std::string& path, std::string_view option);
  ~PendingOutputFile();
  PendingOutputFile(const PendingOutputFile&) = delete;
  PendingOutputFile& operator=(const PendingOutputFile&) = delete;

  const std::string& temp_path() const;
  Status Commit();

 private:
  struct Impl;
  explicit PendingOutputFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tuneprof

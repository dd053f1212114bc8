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

// kUsage naming `output` when it is the same file as one of `inputs` (device and inode, so a symlink or
// a hard link to an input counts too); kIoError when it is a directory. An output that does not exist
// yet clashes with nothing.
Status CheckOutputIsNotInput(const std::string& output, const std::vector<std::string>& inputs);

// Writes `bytes` to `path` through a temporary file and a rename. A symlink at `path` is followed, so
// the link stays and its target is replaced. kIoError naming `path` and the cause.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

// The same, gzip-compressed (level 6).
Status WriteGzipFileAtomically(const std::string& path, std::string_view bytes);

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
                                                           Compression compression = Compression::kByName);
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

}  // namespace tuneprof

#pragma once
// Sequential byte sources over a file, transparently gunzipping .gz content (detected by its magic
// bytes, not the name). Importers read traces in chunks through this so that memory stays bounded.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tuneprof {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `capacity` bytes; 0 means end of input.
  virtual Result<size_t> Read(char* buffer, size_t capacity) = 0;
  // True when the content is compressed (offsets in messages then refer to the decompressed bytes).
  virtual bool compressed() const { return false; }
  // True once a compressed stream ended inside a member (a cut-off .gz).
  virtual bool truncated() const { return false; }
  // Bytes of the file on disk.
  virtual uint64_t file_size() const = 0;
  // The size of the content, exact for a plain file, an estimate for a compressed one (from what gzip
  // records of its last member), for sizing buffers and choosing where a second thread starts.
  virtual uint64_t content_size_hint() const { return file_size(); }
  // Bytes of the file on disk read so far (compressed bytes for a compressed source), for progress
  // reported on another thread than the one that reads.
  virtual uint64_t file_bytes_read() const { return 0; }
  // A second reader of the same content from byte `offset` on, independent of this one's position, so
  // that two threads can read one document; nullptr where the content cannot be entered midway. A
  // compressed stream is entered by inflating it from its start and passing over `offset` bytes, which
  // costs a core the time of that inflate (igzip: about 0.1 s for 250 MB of JSON). It reads nothing
  // towards load progress, may be made on any thread, and must not outlive this source.
  virtual std::unique_ptr<ByteSource> ReaderAt(uint64_t offset) const {
    (void)offset;
    return nullptr;
  }
  // For a source that inflates ahead on a thread of its own: read on the caller's thread instead, if
  // nothing was read yet. For a caller that keeps every core busy with threads of its own.
  virtual void ReadOnCallersThread() {}
  const std::string& path() const { return path_; }

 protected:
  explicit ByteSource(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

// Opens `path` for reading, and records it as read (io/files_read.h). Empty files and unreadable paths are
// errors naming the file; so is "-": the run reads files, never standard input.
Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path);

// The whole (decompressed) content of a small file read at once (a rank's settings, a flag's JSON), opened
// and recorded as read as every source is: every file the run reads goes through OpenByteSource. An empty
// file is "" (its reader says what it lacks); kInvalidInput past `limit` bytes, so that a damaged or hostile
// file of many GB is refused rather than held.
Result<std::string> ReadWholeFile(const std::string& path, size_t limit);

// The error for "-" as a trace: the run reads files only (some twice: a sniff, then the load), never a
// stream.
Status StandardInputRefused();

// Reads at most `limit` bytes from the start of the (decompressed) content, for format sniffing.
Result<std::string> ReadHead(const std::string& path, size_t limit);

// The same for a file a listing only looks at, and may leave out of the run: not recorded as read, and
// through a small gzip input buffer, since a listing peeks at every file of a directory.
Result<std::string> PeekHead(const std::string& path, size_t limit);

// The compression a file's first bytes name, among those not read (zstd, bzip2, xz, lz4), or "".
std::string_view CompressionOf(std::string_view head);

// The error for a file compressed with one of those: `FILE: a zstd-compressed file; decompress it first
// (zstd -d FILE)`.
Status UnreadCompression(const std::string& path, std::string_view compression);

}  // namespace tuneprof

#include "io/byte_source.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "base/cores.h"
#include "io/file_kind.h"
#include "io/files_read.h"
#include "io/read_roots.h"

#include "io/gzip_source.h"
#include "io/load_progress.h"
#include "io/read_ahead_source.h"

namespace tuneprof {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

// Reads a file from an offset with pread(), leaving the descriptor's position to its owner.
class FileRangeSource final : public ByteSource {
 public:
  FileRangeSource(std::string path, int fd, uint64_t size, uint64_t offset)
      : ByteSource(std::move(path)), fd_(fd), size_(size), offset_(offset) {}

  Result<size_t> Read(char* buffer, size_t capacity) override {
    size_t total = 0;
    while (total < capacity) {
      const ssize_t n = ::pread(fd_, buffer + total, capacity - total, static_cast<off_t>(offset_));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status(StatusCode::kIoError, path() + ": read failed: " + ErrnoText());
      }
      if (n == 0) break;
      total += static_cast<size_t>(n);
      offset_ += static_cast<uint64_t>(n);
    }
    return total;
  }
  uint64_t file_size() const override { return size_; }
  std::unique_ptr<ByteSource> ReaderAt(uint64_t offset) const override {
    return std::make_unique<FileRangeSource>(path(), fd_, size_, offset);
  }

 private:
  int fd_;  // owned by the FileSource that made this reader
  uint64_t size_;
  uint64_t offset_;
};

class FileSource final : public ByteSource {
 public:
  FileSource(std::string path, int fd, uint64_t size, bool report_progress)
      : ByteSource(std::move(path)), fd_(fd), size_(size), report_progress_(report_progress) {}
  ~FileSource() override { ::close(fd_); }

  Result<size_t> Read(char* buffer, size_t capacity) override {
    size_t total = 0;
    while (total < capacity) {
      ssize_t n = ::read(fd_, buffer + total, capacity - total);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status(StatusCode::kIoError, path() + ": read failed: " + ErrnoText());
      }
      if (n == 0) break;
      total += static_cast<size_t>(n);
    }
    consumed_ += total;
    if (report_progress_) ReportBytesRead(total);
    return total;
  }
  uint64_t file_size() const override { return size_; }
  std::unique_ptr<ByteSource> ReaderAt(uint64_t offset) const override {
    return std::make_unique<FileRangeSource>(path(), fd_, size_, offset);
  }
  uint64_t file_bytes_read() const override { return consumed_; }
  void set_report_progress(bool report) { report_progress_ = report; }
  // The first bytes, read without moving the stream.
  bool StartsWithGzipMagic() const {
    unsigned char magic[2] = {0, 0};
    return ::pread(fd_, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  }

 private:
  int fd_;
  uint64_t size_;
  uint64_t consumed_ = 0;
  bool report_progress_;  // off for sniffing reads, which are not the load
};

constexpr size_t kGzipInputBytes = 1 << 20;
constexpr size_t kMinGzipInputBytes = 4 << 10;

// A gzip'd trace is inflated on a thread of its own while it is parsed, in chunks of kReadAheadChunk:
// ISA-L inflates a real trace at about 2.7 GB/s on this class of machine, so two chunks in flight and a
// third being parsed keep both cores busy, and 4 MiB is all the memory it costs.
constexpr size_t kReadAheadChunk = 1 << 20;
constexpr size_t kReadAheadChunks = 4;
// Below this much compressed input (about 15 MB of JSON) a thread is not worth starting: a directory
// of small ranks is read on every core already.
constexpr uint64_t kReadAheadMinBytes = 1 << 20;

// Whether a load of a gzip'd file of `bytes` inflates on a thread of its own. TUNEPROF_READ_AHEAD=0
// never, =1 always (for comparisons on small files); otherwise from kReadAheadMinBytes on, with a
// second core to run it.
bool ReadsAhead(uint64_t bytes) {
  static const int forced = [] {
    const char* text = std::getenv("TUNEPROF_READ_AHEAD");
    if (text == nullptr || (std::string_view(text) != "0" && std::string_view(text) != "1")) return -1;
    return text[0] - '0';
  }();
  if (forced >= 0) return forced == 1;
  return bytes >= kReadAheadMinBytes && UsableCores() > 1;
}

// Only regular files are read: a FIFO would block the open (and every read) until a writer came, a
// device like /dev/zero never ends. The open itself does not block (O_NONBLOCK), and the type is
// checked on the opened descriptor, so a path swapped for a FIFO after the first look is refused too.
Status CheckRegular(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return InvalidInput(path + ": is a directory, expected a file");
  if (!S_ISREG(st.st_mode)) {
    return InvalidInput(path + ": is " + SpecialFileKind(st.st_mode) +
                        ", not a trace file; save the trace to a file first");
  }
  return Status::Ok();
}

// How a source is opened: a load (counted towards progress) or a sniff of its first bytes; recorded as an
// input of the run (io/files_read.h) or only peeked at by a listing.
struct OpenMode {
  bool report_progress = true;
  bool record = true;
  size_t gzip_input = kGzipInputBytes;
  bool empty_ok = false;  // an empty file is read as no bytes rather than refused
};

Result<std::unique_ptr<FileSource>> OpenFile(const std::string& path, const OpenMode& mode) {
  if (path == "-") return StandardInputRefused();
  TP_RETURN_IF_ERROR(CheckReadAllowed(path));
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Status(StatusCode::kNotFound, path + ": " + ErrnoText());
  }
  TP_RETURN_IF_ERROR(CheckRegular(path, st));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status(StatusCode::kIoError, path + ": cannot open: " + ErrnoText());
  Status regular = ::fstat(fd, &st) == 0 ? CheckRegular(path, st)
                                         : Status(StatusCode::kIoError, path + ": cannot open: " + ErrnoText());
  if (regular.ok()) regular = CheckOpenedAllowed(fd, path);
  if (regular.ok() && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    regular = Status(StatusCode::kIoError, path + ": cannot open: " + ErrnoText());
  }
  if (!regular.ok()) {
    ::close(fd);
    return regular;
  }
  if (st.st_size == 0 && !mode.empty_ok) {
    ::close(fd);
    return InvalidInput(path + ": empty file (0 bytes)");
  }
  if (mode.record) RecordFileRead(fd, path);
  return std::make_unique<FileSource>(path, fd, static_cast<uint64_t>(st.st_size), mode.report_progress);
}

// The gzip source over `file`; inflated ahead on a thread of its own for a load of a large file, whose
// progress then counts the compressed bytes as the parse takes their chunks.
std::unique_ptr<ByteSource> OpenGzip(std::unique_ptr<FileSource> file, const OpenMode& mode) {
  const size_t input =
      std::clamp<uint64_t>(file->file_size(), kMinGzipInputBytes, std::max(mode.gzip_input, kMinGzipInputBytes));
  const bool ahead = mode.report_progress && ReadsAhead(file->file_size());
  if (ahead) file->set_report_progress(false);
  std::unique_ptr<ByteSource> gzip = MakeGzipSource(std::move(file), input, DefaultGzipInflater());
  if (!ahead) return gzip;
  return ReadAhead(std::move(gzip), kReadAheadChunk, kReadAheadChunks);
}

Result<std::unique_ptr<ByteSource>> OpenSource(const std::string& path, const OpenMode& mode) {
  TP_ASSIGN_OR_RETURN(auto file, OpenFile(path, mode));
  std::unique_ptr<ByteSource> source;
  if (file->StartsWithGzipMagic()) {
    source = OpenGzip(std::move(file), mode);
  } else {
    source = std::move(file);
  }
  return source;
}

}  // namespace

Status StandardInputRefused() {
  return InvalidInput("-: reading a trace from standard input is not supported; save the trace to a file");
}

Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path) { return OpenSource(path, OpenMode()); }

namespace {

Result<std::string> ReadHeadWith(const std::string& path, size_t limit, const OpenMode& mode) {
  TP_ASSIGN_OR_RETURN(auto source, OpenSource(path, mode));
  std::string head(limit, '\0');
  TP_ASSIGN_OR_RETURN(size_t n, source->Read(head.data(), limit));
  head.resize(n);
  return head;
}

}  // namespace

Result<std::string> ReadHead(const std::string& path, size_t limit) {
  return ReadHeadWith(path, limit, OpenMode{.report_progress = false});
}

Result<std::string> ReadWholeFile(const std::string& path, size_t limit) {
  TP_ASSIGN_OR_RETURN(auto source, OpenSource(path, OpenMode{.report_progress = false, .empty_ok = true}));
  std::string text;
  for (;;) {
    const size_t done = text.size();
    if (done > limit) return InvalidInput(path + ": over " + std::to_string(limit >> 20) + " MiB; not read");
    text.resize(done + (64 << 10));
    TP_ASSIGN_OR_RETURN(size_t n, source->Read(text.data() + done, text.size() - done));
    text.resize(done + n);
    if (n == 0) return text;
  }
}

Result<std::string> PeekHead(const std::string& path, size_t limit) {
  // A few KiB of compressed input hold the first bytes of any gzip stream tuneprof writes.
  return ReadHeadWith(path, limit, OpenMode{.report_progress = false, .record = false, .gzip_input = 16 << 10});
}

std::string_view CompressionOf(std::string_view head) {
  if (head.starts_with("\x28\xB5\x2F\xFD")) return "zstd";
  if (head.size() >= 4 && head.starts_with("BZh") && head[3] >= '1' && head[3] <= '9') return "bzip2";
  if (head.starts_with(std::string_view("\xFD"
                                        "7zXZ\0",
                                        6)))
    return "xz";
  if (head.starts_with("\x04\x22\x4D\x18")) return "lz4";
  return {};
}

Status UnreadCompression(const std::string& path, std::string_view compression) {
  const std::string name(compression);
  return InvalidInput(path + ": a " + name + "-compressed file; decompress it first (" + name + " -d " + path + ")");
}

}  // namespace tuneprof

#include "io/byte_source.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "io/file_kind.h"
#include "io/files_read.h"
#include "io/read_roots.h"
#include "io/load_progress.h"

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
  uint64_t consumed() const { return consumed_; }
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

// Streams gzip (also concatenated members) through zlib so that a multi-GB .gz never sits inflated
// in memory.
class GzipSource final : public ByteSource {
 public:
  GzipSource(std::unique_ptr<FileSource> file, size_t max_input)
      // A small file needs no 1 MiB input buffer: allocating and zeroing it dominated tiny ranks.
      : ByteSource(file->path()),
        file_(std::move(file)),
        input_(std::clamp<uint64_t>(file_->file_size(), kMinInputBytes, std::max(max_input, kMinInputBytes))) {
    std::memset(&stream_, 0, sizeof(stream_));
    inflateInit2(&stream_, 16 + MAX_WBITS);
  }
  ~GzipSource() override { inflateEnd(&stream_); }

  bool compressed() const override { return true; }
  uint64_t file_size() const override { return file_->file_size(); }

  Result<size_t> Read(char* buffer, size_t capacity) override {
    stream_.next_out = reinterpret_cast<Bytef*>(buffer);
    stream_.avail_out = static_cast<uInt>(capacity);
    while (stream_.avail_out > 0 && !finished_) {
      if (stream_.avail_in == 0 && !input_ended_) {
        TP_ASSIGN_OR_RETURN(size_t n, file_->Read(input_.data(), input_.size()));
        if (n == 0) {
          input_ended_ = true;
        } else {
          stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
          stream_.avail_in = static_cast<uInt>(n);
        }
      }
      if (input_ended_ && at_member_start_) {  // the file ended cleanly after a whole member
        finished_ = true;
        break;
      }
      if (at_member_start_ && SkipZeroPadding()) continue;
      if (stream_.avail_in > 0) at_member_start_ = false;
      const uInt out_before = stream_.avail_out;
      int rc = inflate(&stream_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another gzip member may follow (concatenated .gz files are valid gzip).
        inflateReset(&stream_);
        at_member_start_ = true;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        uint64_t offset = file_->consumed() - stream_.avail_in;
        return InvalidInput(path() + ": corrupt gzip data near compressed byte " + std::to_string(offset) + ": " +
                            (stream_.msg ? stream_.msg : "inflate failed"));
      }
      // With the input all consumed, zlib may still hold output that did not fit the last buffer; only
      // when it gives nothing more has the file ended inside a member (a cut-off .gz). Say so once.
      if (input_ended_ && stream_.avail_out == out_before) {
        truncated_ = true;
        finished_ = true;
        break;
      }
    }
    return capacity - stream_.avail_out;
  }

  bool truncated() const override { return truncated_; }

  static constexpr size_t kInputBytes = 1 << 20;

 private:
  // tar and dd pad a file with zero bytes to a whole block; where a member could start, gzip ignores
  // them, and so does this source. True when the input in hand was all zeros (consumed), so more is read.
  // A member after the zeros is read as one; anything else fails as corrupt data in inflate.
  bool SkipZeroPadding() {
    if (stream_.avail_in == 0 || *stream_.next_in != 0) return false;
    while (stream_.avail_in > 0 && *stream_.next_in == 0) {
      ++stream_.next_in;
      --stream_.avail_in;
    }
    return stream_.avail_in == 0;
  }

  static constexpr size_t kMinInputBytes = 4 << 10;
  std::unique_ptr<FileSource> file_;
  std::vector<char> input_;
  z_stream stream_;
  bool finished_ = false;
  bool input_ended_ = false;
  bool at_member_start_ = true;
  bool truncated_ = false;
};

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
  size_t gzip_input = GzipSource::kInputBytes;
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

Result<std::unique_ptr<ByteSource>> OpenSource(const std::string& path, const OpenMode& mode) {
  TP_ASSIGN_OR_RETURN(auto file, OpenFile(path, mode));
  std::unique_ptr<ByteSource> source;
  if (file->StartsWithGzipMagic()) {
    source = std::make_unique<GzipSource>(std::move(file), mode.gzip_input);
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
  if (head.starts_with(std::string_view("\xFD" "7zXZ\0", 6))) return "xz";
  if (head.starts_with("\x04\x22\x4D\x18")) return "lz4";
  return {};
}

Status UnreadCompression(const std::string& path, std::string_view compression) {
  const std::string name(compression);
  return InvalidInput(path + ": a " + name + "-compressed file; decompress it first (" + name + " -d " + path + ")");
}

}  // namespace tuneprof

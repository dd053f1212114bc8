#include "io/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "io/file_kind.h"
#include "io/files_read.h"
#include "io/trace_files.h"

namespace tuneprof {
namespace {

Status IoError(const std::string& path, std::string_view what) {
  return Status(StatusCode::kIoError, path + ": cannot write the output file: " + std::string(what));
}

// "-" names standard output to most tools; no writer here writes a stream (every output is renamed into
// place whole), and a file named "-" is never what was meant.
Status StandardOutputRefused() {
  return Status(StatusCode::kUsage, "-: writing to standard output is not supported; give a file name");
}

// Links followed before a target is called a loop, as the kernel's own limit.
constexpr int kMaxLinks = 40;

// The file a write to `path` lands in: a symlink's target, followed link by link as open() would, else
// `path`. A link whose target's directory does not exist is refused: the temporary file would go beside the
// link and the rename replace the link itself with a regular file.
Result<std::string> ResolvedTarget(const std::string& path) {
  namespace fs = std::filesystem;
  if (path == "-") return StandardOutputRefused();
  fs::path at = path;
  for (int hop = 0; hop <= kMaxLinks; ++hop) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(at, ec))) {
      const fs::path dir = at.has_parent_path() ? at.parent_path() : fs::path(".");
      if (hop > 0 && !fs::exists(at, ec) && !fs::is_directory(dir, ec)) {
        return IoError(path,
                       "a symbolic link to " + at.string() + ", whose directory " + dir.string() + " does not exist");
      }
      return at.string();
    }
    const fs::path next = fs::read_symlink(at, ec);
    if (ec) return IoError(path, ec.message());
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  return IoError(path, "a symbolic link loop (over " + std::to_string(kMaxLinks) + " links)");
}

Status CheckWritableTarget(const std::string& target, const std::string& shown, std::string_view option);

// A temporary file beside the target; removed on destruction unless committed.
class TempFile {
 public:
  TempFile(std::string target, std::string_view option) : target_(std::move(target)), option_(option) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty() && !committed_) ::unlink(temp_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  Status Create(const std::string& shown) {
    const std::filesystem::path target(target_);
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
    // Created 0666 less the umask, as a plain open would; a replaced file keeps its own mode.
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      temp_ = (dir / fmt::format(".{}.tuneprof-{}-{}", target.filename().string(), ::getpid(), attempt)).string();
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) break;
    }
    if (fd_ < 0) {
      const std::string reason = std::strerror(errno);
      temp_.clear();
      return IoError(shown, reason);
    }
    struct stat st;
    if (::stat(target_.c_str(), &st) == 0) ::fchmod(fd_, st.st_mode & 07777);
    return Status::Ok();
  }
  int fd() const { return fd_; }
  const std::string& path() const { return temp_; }
  // Hands the descriptor over (to zlib, which closes it).
  int ReleaseFd() { return std::exchange(fd_, -1); }

  Status Commit(const std::string& shown) {
    if (fd_ >= 0) {
      const bool synced = ::fsync(fd_) == 0;
      const int closed = ::close(std::exchange(fd_, -1));
      if (!synced || closed != 0) return IoError(shown, std::strerror(errno));
    }
    // Looked at again: the target may have been read, or swapped for a device, since the output began.
    TP_RETURN_IF_ERROR(CheckWritableTarget(target_, shown, option_));
    if (::rename(temp_.c_str(), target_.c_str()) != 0) return IoError(shown, std::strerror(errno));
    committed_ = true;
    return Status::Ok();
  }

 private:
  std::string target_;
  std::string option_;  // how the user named the output, for a refusal's advice
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

Status WriteAll(int fd, std::string_view bytes, const std::string& shown) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError(shown, n < 0 ? std::strerror(errno) : "nothing written");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// The file at `target`, as it is now: a directory, a FIFO, a device or a socket is refused (renaming
// over it would fail or replace something that is not an output), and so is any file this process
// read (io/files_read.h): a rank directory's own tables are inputs no command line names. `shown` is the
// name the user gave.
Status CheckWritableTarget(const std::string& target, const std::string& shown, std::string_view option) {
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) return Status::Ok();
  if (S_ISDIR(st.st_mode)) return Status(StatusCode::kIoError, shown + ": is a directory; give a file name to write");
  if (!S_ISREG(st.st_mode)) {
    return Status(StatusCode::kIoError,
                  shown + ": is " + SpecialFileKind(st.st_mode) + ", not a regular file; give a file name to write");
  }
  const std::string read = FileReadAt(static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino));
  if (!read.empty()) {
    const std::string how = read == shown ? "" : " (" + read + ")";
    return Status(StatusCode::kUsage, shown + ": the output is a file this run reads" + how +
                                          "; writing it would destroy the input, give " + std::string(option) +
                                          " another file");
  }
  return Status::Ok();
}

}  // namespace

Status CheckOutputTarget(const std::string& path, std::string_view option) {
  TP_ASSIGN_OR_RETURN(const std::string target, ResolvedTarget(path));
  return CheckWritableTarget(target, path, option);
}

Status CheckOutputIsNotInput(const std::string& output, const std::vector<std::string>& inputs,
                             std::string_view option) {
  if (output == "-") return StandardOutputRefused();
  struct stat out;
  if (::stat(output.c_str(), &out) != 0) return CheckOutputTarget(output, option);  // a link to nothing yet too
  if (S_ISDIR(out.st_mode)) return Status(StatusCode::kIoError, output + ": is a directory; give a file name to write");
  for (const std::string& input : inputs) {
    struct stat in;
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      const std::string how = input == output ? "" : " (" + input + ", through a link)";
      // A summary among the inputs: one an earlier `summarize` wrote into the directory it reads again.
      const std::string what = IsSummaryPath(input) ? "a summary among this command's inputs" : "the input trace";
      return Status(StatusCode::kUsage, output + ": the output is " + what + how +
                                            "; writing it would destroy the input, give " + std::string(option) +
                                            " another file");
    }
  }
  return CheckOutputTarget(output, option);
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes, std::string_view option) {
  TP_ASSIGN_OR_RETURN(const std::string target, ResolvedTarget(path));
  TP_RETURN_IF_ERROR(CheckWritableTarget(target, path, option));
  TempFile temp(target, option);
  TP_RETURN_IF_ERROR(temp.Create(path));
  TP_RETURN_IF_ERROR(WriteAll(temp.fd(), bytes, path));
  return temp.Commit(path);
}

Status WriteGzipFileAtomically(const std::string& path, std::string_view bytes, std::string_view option) {
  TP_ASSIGN_OR_RETURN(const std::string target, ResolvedTarget(path));
  TP_RETURN_IF_ERROR(CheckWritableTarget(target, path, option));
  TempFile temp(target, option);
  TP_RETURN_IF_ERROR(temp.Create(path));
  // zlib owns the descriptor from here; a duplicate stays for the fsync before the rename.
  const int keep = ::dup(temp.fd());
  if (keep < 0) return IoError(path, std::strerror(errno));
  const int fd = temp.ReleaseFd();
  gzFile file = ::gzdopen(fd, "wb6");
  if (file == nullptr) ::close(fd);
  bool ok = file != nullptr;
  for (size_t done = 0; ok && done < bytes.size();) {
    const unsigned part = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 30));
    ok = ::gzwrite(file, bytes.data() + done, part) == static_cast<int>(part);
    done += part;
  }
  if (file != nullptr && ::gzclose(file) != Z_OK) ok = false;
  const bool synced = ok && ::fsync(keep) == 0;
  const std::string reason = std::strerror(errno);
  ::close(keep);
  if (!ok) return IoError(path, "gzip write failed (disk full?)");
  if (!synced) return IoError(path, reason);
  return temp.Commit(path);
}

struct PendingOutputFile::Impl {
  std::string path;  // as the user named it
  TempFile temp;
  Impl(std::string shown, const std::string& target, std::string_view option)
      : path(std::move(shown)), temp(target, option) {}
};

PendingOutputFile::PendingOutputFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PendingOutputFile::~PendingOutputFile() = default;

Result<std::unique_ptr<PendingOutputFile>> PendingOutputFile::Create(const std::string& path, std::string_view option) {
  TP_ASSIGN_OR_RETURN(const std::string target, ResolvedTarget(path));
  TP_RETURN_IF_ERROR(CheckWritableTarget(target, path, option));
  auto impl = std::make_unique<Impl>(path, target, option);
  TP_RETURN_IF_ERROR(impl->temp.Create(path));
  ::close(impl->temp.ReleaseFd());  // the writer opens the file by its name
  return std::unique_ptr<PendingOutputFile>(new PendingOutputFile(std::move(impl)));
}

const std::string& PendingOutputFile::temp_path() const { return impl_->temp.path(); }

Status PendingOutputFile::Commit() { return impl_->temp.Commit(impl_->path); }

struct StreamingOutputFile::Impl {
  std::string path;  // as the user named it
  TempFile temp;
  gzFile gzip = nullptr;
  int keep = -1;  // a duplicate of zlib's descriptor, for the fsync before the rename
  bool failed = false;

  Impl(std::string shown, const std::string& target, std::string_view option)
      : path(std::move(shown)), temp(target, option) {}
  ~Impl() {
    if (gzip != nullptr) ::gzclose(gzip);
    if (keep >= 0) ::close(keep);
  }
};

StreamingOutputFile::StreamingOutputFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamingOutputFile::~StreamingOutputFile() = default;

Result<std::unique_ptr<StreamingOutputFile>> StreamingOutputFile::Open(const std::string& path, Compression compression,
                                                                       std::string_view option) {
  TP_ASSIGN_OR_RETURN(const std::string target, ResolvedTarget(path));
  TP_RETURN_IF_ERROR(CheckWritableTarget(target, path, option));
  auto impl = std::make_unique<Impl>(path, target, option);
  TP_RETURN_IF_ERROR(impl->temp.Create(path));
  if (compression == Compression::kByName && path.ends_with(".gz")) {
    impl->keep = ::dup(impl->temp.fd());
    if (impl->keep < 0) return IoError(path, std::strerror(errno));
    const int fd = impl->temp.ReleaseFd();
    impl->gzip = ::gzdopen(fd, "wb6");
    if (impl->gzip == nullptr) {
      ::close(fd);
      return IoError(path, "cannot start gzip compression");
    }
  }
  return std::unique_ptr<StreamingOutputFile>(new StreamingOutputFile(std::move(impl)));
}

Status StreamingOutputFile::Write(std::string_view bytes) {
  Impl& f = *impl_;
  if (f.failed) return IoError(f.path, "an earlier write failed");
  bytes_written_ += bytes.size();
  if (f.gzip == nullptr) {
    const Status written = WriteAll(f.temp.fd(), bytes, f.path);
    f.failed = !written.ok();
    return written;
  }
  while (!bytes.empty()) {
    const unsigned part = static_cast<unsigned>(std::min<size_t>(bytes.size(), 1u << 30));
    if (::gzwrite(f.gzip, bytes.data(), part) != static_cast<int>(part)) {
      f.failed = true;
      return IoError(f.path, "gzip write failed (disk full?)");
    }
    bytes.remove_prefix(part);
  }
  return Status::Ok();
}

Status StreamingOutputFile::Commit() {
  Impl& f = *impl_;
  if (f.failed) return IoError(f.path, "an earlier write failed");
  if (f.gzip != nullptr) {
    const int closed = ::gzclose(std::exchange(f.gzip, nullptr));
    const bool synced = closed == Z_OK && ::fsync(f.keep) == 0;
    const std::string reason = std::strerror(errno);
    ::close(std::exchange(f.keep, -1));
    if (closed != Z_OK) return IoError(f.path, "gzip write failed (disk full?)");
    if (!synced) return IoError(f.path, reason);
  }
  return f.temp.Commit(f.path);
}

}  // namespace tuneprof

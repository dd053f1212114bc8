#include "io/gzip_source.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#ifdef TUNEPROF_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace tuneprof {
namespace {

// Neither library takes more than 4 GiB of room in one call.
uint32_t Room(size_t bytes) {
  return static_cast<uint32_t>(std::min<size_t>(bytes, std::numeric_limits<uint32_t>::max()));
}

// The content of another source from byte `skip` on: what a compressed stream entered midway reads.
class SkipSource final : public ByteSource {
 public:
  SkipSource(std::unique_ptr<ByteSource> source, uint64_t skip)
      : ByteSource(source->path()), source_(std::move(source)), skip_(skip) {}

  bool compressed() const override { return source_->compressed(); }
  bool truncated() const override { return source_->truncated(); }
  uint64_t file_size() const override { return source_->file_size(); }
  uint64_t content_size_hint() const override { return source_->content_size_hint(); }

  Result<size_t> Read(char* buffer, size_t capacity) override {
    if (skip_ > 0) {
      std::vector<char> passed(std::min<uint64_t>(skip_, 1 << 20));
      while (skip_ > 0) {
        TP_ASSIGN_OR_RETURN(size_t n, source_->Read(passed.data(), std::min<uint64_t>(skip_, passed.size())));
        if (n == 0) return size_t{0};
        skip_ -= n;
      }
    }
    return source_->Read(buffer, capacity);
  }

 private:
  std::unique_ptr<ByteSource> source_;
  uint64_t skip_;
};

// What both inflaters share: the compressed file and what is known of the content without inflating it.
class GzipSourceBase : public ByteSource {
 public:
  bool compressed() const override { return true; }
  uint64_t file_size() const override { return file_->file_size(); }
  uint64_t file_bytes_read() const override { return file_->file_bytes_read(); }

  // gzip ends each member with its length mod 4 GiB. Taken as the content's when it is at least twice
  // the file (JSON compresses 5-20x); else (several members, a short last one, or past 4 GiB and
  // wrapped) the file's size times 12, a typical trace's ratio. At most kMaxHintRatio times the file: the
  // trailer can claim anything, and the hint sizes buffers.
  uint64_t content_size_hint() const override {
    constexpr uint64_t kMaxHintRatio = 64;
    const uint64_t size = file_->file_size();
    std::unique_ptr<ByteSource> tail = size >= 18 ? file_->ReaderAt(size - 4) : nullptr;
    unsigned char bytes[4] = {0, 0, 0, 0};
    Result<size_t> n = tail == nullptr ? Result<size_t>(size_t{0}) : tail->Read(reinterpret_cast<char*>(bytes), 4);
    const uint64_t recorded =
        uint64_t{bytes[0]} | uint64_t{bytes[1]} << 8 | uint64_t{bytes[2]} << 16 | uint64_t{bytes[3]} << 24;
    return n.ok() && *n == 4 && recorded >= 2 * size ? std::min(recorded, size * kMaxHintRatio) : size * 12;
  }

  std::unique_ptr<ByteSource> ReaderAt(uint64_t offset) const override {
    std::unique_ptr<ByteSource> again = file_->ReaderAt(0);
    if (again == nullptr) return nullptr;
    return std::make_unique<SkipSource>(MakeGzipSource(std::move(again), input_.size(), inflater_), offset);
  }

 protected:
  GzipSourceBase(std::unique_ptr<ByteSource> file, size_t input_bytes, GzipInflater inflater)
      : ByteSource(file->path()), file_(std::move(file)), input_(input_bytes), inflater_(inflater) {}

  // Reads the next compressed bytes into input_ and points `stream` (zlib's or igzip's, both of which name
  // their input next_in and avail_in) at them; at the file's end sets input_ended_ instead.
  template <typename Stream>
  Status Refill(Stream* stream) {
    TP_ASSIGN_OR_RETURN(size_t n, file_->Read(input_.data(), input_.size()));
    consumed_ += n;
    if (n == 0) {
      input_ended_ = true;
    } else {
      stream->next_in = reinterpret_cast<decltype(stream->next_in)>(input_.data());
      stream->avail_in = static_cast<decltype(stream->avail_in)>(n);
    }
    return Status::Ok();
  }

  // tar and dd pad a file with zero bytes to a whole block; where a member could start, gzip ignores
  // them, and so do both sources. True when the input in hand was all zeros (consumed), so more is read.
  // A member after the zeros is read as one; anything else fails as corrupt data in inflate.
  template <typename Stream>
  static bool SkipZeroPadding(Stream* stream) {
    if (stream->avail_in == 0 || *stream->next_in != 0) return false;
    while (stream->avail_in > 0 && *stream->next_in == 0) {
      ++stream->next_in;
      --stream->avail_in;
    }
    return stream->avail_in == 0;
  }

  std::unique_ptr<ByteSource> file_;
  std::vector<char> input_;
  GzipInflater inflater_;
  uint64_t consumed_ = 0;  // compressed bytes read from file_
  bool input_ended_ = false;
};

// Streams gzip (also concatenated members) through zlib so that a multi-GB .gz never sits inflated
// in memory.
class ZlibGzipSource final : public GzipSourceBase {
 public:
  ZlibGzipSource(std::unique_ptr<ByteSource> file, size_t input_bytes)
      : GzipSourceBase(std::move(file), input_bytes, GzipInflater::kZlib) {
    std::memset(&stream_, 0, sizeof(stream_));
    inflateInit2(&stream_, 16 + MAX_WBITS);
  }
  ~ZlibGzipSource() override { inflateEnd(&stream_); }

  bool truncated() const override { return truncated_; }

  Result<size_t> Read(char* buffer, size_t capacity) override {
    stream_.next_out = reinterpret_cast<Bytef*>(buffer);
    stream_.avail_out = Room(capacity);
    const uInt room = stream_.avail_out;
    while (stream_.avail_out > 0 && !finished_) {
      if (stream_.avail_in == 0 && !input_ended_) TP_RETURN_IF_ERROR(Refill(&stream_));
      if (input_ended_ && at_member_start_) {  // the file ended cleanly after a whole member
        finished_ = true;
        break;
      }
      if (at_member_start_ && SkipZeroPadding(&stream_)) continue;
      if (stream_.avail_in > 0) at_member_start_ = false;
      const uInt out_before = stream_.avail_out;
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another gzip member may follow (concatenated .gz files are valid gzip).
        inflateReset(&stream_);
        at_member_start_ = true;
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        const uint64_t offset = consumed_ - stream_.avail_in;
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
    return room - stream_.avail_out;
  }

 private:
  z_stream stream_;
  bool finished_ = false;
  bool at_member_start_ = true;
  bool truncated_ = false;
};

#ifdef TUNEPROF_HAVE_ISAL

// Streams gzip through ISA-L's igzip, which inflates real traces about 2.7x as fast as zlib. The two
// libraries word their errors differently and notice some damage at different bytes, so igzip only
// inflates sound data: at the first error, or where the file ends inside a member, the content is
// inflated again from the start through zlib, which gives the verdict (past the bytes already handed
// out). Damaged files are rare and pay one more inflate; every file reads exactly as through zlib.
class IsalGzipSource final : public GzipSourceBase {
 public:
  IsalGzipSource(std::unique_ptr<ByteSource> file, size_t input_bytes)
      : GzipSourceBase(std::move(file), input_bytes, GzipInflater::kIsal) {
    StartMember(nullptr, 0);
  }

  bool truncated() const override { return verdict_ != nullptr && verdict_->truncated(); }

  Result<size_t> Read(char* buffer, size_t capacity) override {
    if (verdict_ != nullptr) return verdict_->Read(buffer, capacity);
    size_t made = 0;
    while (made < capacity && !finished_) {
      if (state_.avail_in == 0 && !input_ended_) TP_RETURN_IF_ERROR(Refill(&state_));
      if (input_ended_ && at_member_start_) {
        finished_ = true;
        break;
      }
      if (at_member_start_ && SkipZeroPadding(&state_)) continue;
      if (state_.avail_in > 0) at_member_start_ = false;
      if (HeaderZlibRefuses()) return HandOver(buffer, capacity);
      const uint32_t in_before = state_.avail_in;
      state_.next_out = reinterpret_cast<uint8_t*>(buffer + made);
      state_.avail_out = Room(capacity - made);
      const uint32_t room = state_.avail_out;
      const int rc = isal_inflate(&state_);
      const uint32_t out = room - state_.avail_out;
      member_consumed_ += in_before - state_.avail_in;
      made += out;
      if (rc < 0) return HandOver(buffer, capacity);
      if (state_.block_state == ISAL_BLOCK_FINISH) {
        StartMember(state_.next_in, state_.avail_in);
        continue;
      }
      // No progress with input in hand, or the file ended inside a member: zlib says which.
      const bool stalled = out == 0 && state_.avail_in == in_before && (in_before > 0 || input_ended_);
      if (stalled) return HandOver(buffer, capacity);
    }
    delivered_ += made;
    return made;
  }

 private:
  void StartMember(uint8_t* next_in, uint32_t avail_in) {
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;
    state_.next_in = next_in;
    state_.avail_in = avail_in;
    at_member_start_ = true;
    member_consumed_ = 0;
  }

  // zlib refuses a member header whose method is not deflate or whose reserved flag bits are set; igzip
  // reads past the flags. Such a header is handed to zlib, so that it reads as through zlib.
  bool HeaderZlibRefuses() const {
    constexpr uint64_t kMethodAt = 2;
    constexpr uint64_t kFlagsAt = 3;
    constexpr uint8_t kDeflate = 8;
    constexpr uint8_t kReservedFlags = 0xe0;
    const auto at = [&](uint64_t position) -> std::optional<uint8_t> {
      if (position < member_consumed_ || position - member_consumed_ >= state_.avail_in) return std::nullopt;
      return state_.next_in[position - member_consumed_];
    };
    const std::optional<uint8_t> method = at(kMethodAt);
    const std::optional<uint8_t> flags = at(kFlagsAt);
    return (method && *method != kDeflate) || (flags && (*flags & kReservedFlags) != 0);
  }

  // zlib reads the file again from its start, passes over what was handed out, and reads on from there
  // (this call's output included): its error, or its cut-off verdict, is the source's.
  Result<size_t> HandOver(char* buffer, size_t capacity) {
    std::unique_ptr<ByteSource> again = file_->ReaderAt(0);
    if (again == nullptr) return InvalidInput(path() + ": corrupt gzip data");
    verdict_ = std::make_unique<ZlibGzipSource>(std::move(again), input_.size());
    std::vector<char> skipped(std::min<uint64_t>(std::max<uint64_t>(delivered_, 1), 1 << 20));
    for (uint64_t left = delivered_; left > 0;) {
      TP_ASSIGN_OR_RETURN(size_t n, verdict_->Read(skipped.data(), std::min<uint64_t>(left, skipped.size())));
      if (n == 0) return size_t{0};
      left -= n;
    }
    return verdict_->Read(buffer, capacity);
  }

  inflate_state state_;
  uint64_t delivered_ = 0;        // bytes handed out by earlier reads
  uint64_t member_consumed_ = 0;  // compressed bytes igzip took of the member it is in
  bool finished_ = false;
  bool at_member_start_ = true;
  std::unique_ptr<ByteSource> verdict_;  // zlib, once igzip met anything but sound data
};

#endif  // TUNEPROF_HAVE_ISAL

}  // namespace

bool IsalBuiltIn() {
#ifdef TUNEPROF_HAVE_ISAL
  return true;
#else
  return false;
#endif
}

GzipInflater DefaultGzipInflater() {
  static const GzipInflater inflater = [] {
    const char* forced = std::getenv("TUNEPROF_INFLATE");
    if (forced != nullptr && std::string_view(forced) == "zlib") return GzipInflater::kZlib;
    return IsalBuiltIn() ? GzipInflater::kIsal : GzipInflater::kZlib;
  }();
  return inflater;
}

std::unique_ptr<ByteSource> MakeGzipSource(std::unique_ptr<ByteSource> file, size_t input_bytes,
                                           GzipInflater inflater) {
#ifdef TUNEPROF_HAVE_ISAL
  if (inflater == GzipInflater::kIsal) return std::make_unique<IsalGzipSource>(std::move(file), input_bytes);
#else
  (void)inflater;
#endif
  return std::make_unique<ZlibGzipSource>(std::move(file), input_bytes);
}

Status PreferGzipDamage(const ByteSource& source, Status status) {
  if (status.ok() || !source.compressed()) return status;
  std::unique_ptr<ByteSource> again = source.ReaderAt(0);
  if (again == nullptr) return status;
  std::vector<char> passed(1 << 20);
  for (;;) {
    Result<size_t> n = again->Read(passed.data(), passed.size());
    if (!n.ok()) return n.status();
    if (*n == 0) return status;
  }
}

}  // namespace tuneprof

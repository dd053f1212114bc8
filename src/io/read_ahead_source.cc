#include "io/read_ahead_source.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "io/load_progress.h"

namespace tuneprof {
namespace {

// One read of the wrapped source: its bytes, or its error; `last` once it gave 0 bytes or an error.
struct Chunk {
  std::unique_ptr<char[]> bytes;
  size_t size = 0;
  uint64_t file_bytes = 0;  // the wrapped source's file_bytes_read() after this read
  Status status;
  bool last = false;
};

class ReadAheadSource final : public ByteSource {
 public:
  ReadAheadSource(std::unique_ptr<ByteSource> source, size_t chunk_bytes, size_t chunks)
      : ByteSource(source->path()),
        source_(std::move(source)),
        compressed_(source_->compressed()),
        file_size_(source_->file_size()),
        content_size_hint_(source_->content_size_hint()),
        chunk_bytes_(std::max<size_t>(chunk_bytes, 1)),
        ring_(std::max<size_t>(chunks, 1)) {}

  ~ReadAheadSource() override {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    space_.notify_one();
    thread_.join();
  }

  void ReadOnCallersThread() override {
    if (!thread_.joinable()) direct_ = true;
  }

  bool compressed() const override { return compressed_; }
  bool truncated() const override { return direct_ ? source_->truncated() : ended_ && truncated_; }
  uint64_t file_size() const override { return file_size_; }
  uint64_t file_bytes_read() const override { return file_bytes_; }
  uint64_t content_size_hint() const override { return content_size_hint_; }
  // Made from the wrapped source, whose readers share nothing with its position (the thread's).
  std::unique_ptr<ByteSource> ReaderAt(uint64_t offset) const override { return source_->ReaderAt(offset); }

  Result<size_t> Read(char* buffer, size_t capacity) override {
    if (direct_) return ReadDirect(buffer, capacity);
    // The thread starts with the first read, so that a caller may still keep the reading on its own.
    if (!thread_.joinable()) thread_ = std::thread([this] { Fill(); });
    size_t total = 0;
    while (total < capacity && !ended_) {
      if (current_ == nullptr) TakeNext();
      if (current_->last) {
        // The bytes before an error go out first; the error comes with the next read, as it came.
        if (!current_->status.ok() && total > 0) break;
        Status status = current_->status;
        ended_ = true;
        Release();
        if (!status.ok()) return status;
        break;
      }
      const size_t n = std::min(capacity - total, current_->size - position_);
      std::memcpy(buffer + total, current_->bytes.get() + position_, n);
      position_ += n;
      total += n;
      if (position_ == current_->size) Release();
    }
    return total;
  }

 private:
  // The thread: reads chunk after chunk while the ring has room, until the source ends or fails.
  void Fill() {
    for (size_t i = 0;; ++i) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        space_.wait(lock, [&] { return stop_ || filled_ < ring_.size(); });
        if (stop_) return;
      }
      Chunk& chunk = ring_[i % ring_.size()];
      if (chunk.bytes == nullptr) chunk.bytes.reset(new char[chunk_bytes_]);
      Result<size_t> n = source_->Read(chunk.bytes.get(), chunk_bytes_);
      chunk.size = n.ok() ? *n : 0;
      chunk.status = n.ok() ? Status::Ok() : n.status();
      chunk.last = chunk.size == 0;
      chunk.file_bytes = source_->file_bytes_read();
      if (chunk.last) truncated_ = source_->truncated();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++filled_;
      }
      ready_.notify_one();
      if (chunk.last) return;
    }
  }

  Result<size_t> ReadDirect(char* buffer, size_t capacity) {
    Result<size_t> n = source_->Read(buffer, capacity);
    const uint64_t read = source_->file_bytes_read();
    if (read > file_bytes_) ReportBytesRead(read - file_bytes_);
    file_bytes_ = std::max(file_bytes_, read);
    return n;
  }

  void TakeNext() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return filled_ > 0; });
    current_ = &ring_[head_ % ring_.size()];
    position_ = 0;
    lock.unlock();
    // Progress is the caller's (a thread-local load): the file's bytes count as their chunk is taken.
    if (current_->file_bytes > file_bytes_) {
      ReportBytesRead(current_->file_bytes - file_bytes_);
      file_bytes_ = current_->file_bytes;
    }
  }

  void Release() {
    current_ = nullptr;
    ++head_;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --filled_;
    }
    space_.notify_one();
  }

  std::unique_ptr<ByteSource> source_;  // read on the thread only
  const bool compressed_;
  const uint64_t file_size_;
  const uint64_t content_size_hint_;
  const size_t chunk_bytes_;
  std::vector<Chunk> ring_;

  std::mutex mutex_;
  std::condition_variable ready_;  // a chunk was filled
  std::condition_variable space_;  // a chunk was released, or stop
  size_t filled_ = 0;              // chunks filled and not yet released
  bool stop_ = false;
  bool truncated_ = false;  // the source's verdict, set before the last chunk is published

  // The caller's side.
  Chunk* current_ = nullptr;
  size_t position_ = 0;
  size_t head_ = 0;
  uint64_t file_bytes_ = 0;  // reported as read
  bool ended_ = false;
  bool direct_ = false;  // read on the caller's thread: no thread was started

  std::thread thread_;  // started by the first read, unless direct_
};

}  // namespace

std::unique_ptr<ByteSource> ReadAhead(std::unique_ptr<ByteSource> source, size_t chunk_bytes, size_t chunks) {
  return std::make_unique<ReadAheadSource>(std::move(source), chunk_bytes, chunks);
}

}  // namespace tuneprof

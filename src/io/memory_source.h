#pragma once
// A ByteSource over bytes already in memory, for tests and fuzzers: the importers read it exactly as
// they read a file, and a per-Read() cap makes every refill boundary reachable with small inputs.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "io/byte_source.h"

namespace tuneprof {

class MemorySource final : public ByteSource {
 public:
  // Views `bytes`, which must outlive the source. `name` stands in for the path in messages.
  // `max_read` > 0 caps the bytes one Read() returns (short reads, as pipes and inflate give).
  MemorySource(std::string name, std::string_view bytes, size_t max_read = 0);
  // Takes a copy of `bytes` (or its buffer, when moved in).
  static std::unique_ptr<MemorySource> Owning(std::string name, std::string bytes, size_t max_read = 0);

  // bytes_ may point into owned_: a copy would view the original's buffer.
  MemorySource(const MemorySource&) = delete;
  MemorySource& operator=(const MemorySource&) = delete;

  Result<size_t> Read(char* buffer, size_t capacity) override;
  uint64_t file_size() const override { return bytes_.size(); }
  // Views the same bytes from `offset` on, with the same cap per read.
  std::unique_ptr<ByteSource> ReaderAt(uint64_t offset) const override;
  // Bytes handed out so far.
  uint64_t consumed() const { return pos_; }

 private:
  std::string owned_;
  std::string_view bytes_;
  size_t max_read_;
  size_t pos_ = 0;
};

}  // namespace tuneprof

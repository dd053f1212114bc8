#include "io/memory_source.h"

#include <algorithm>
#include <cstring>

namespace tuneprof {

MemorySource::MemorySource(std::string name, std::string_view bytes, size_t max_read)
    : ByteSource(std::move(name)), bytes_(bytes), max_read_(max_read) {}

std::unique_ptr<MemorySource> MemorySource::Owning(std::string name, std::string bytes, size_t max_read) {
  auto source = std::make_unique<MemorySource>(std::move(name), std::string_view(), max_read);
  source->owned_ = std::move(bytes);
  // Set only now: the view must name the string's final buffer (a short string lives inside it).
  source->bytes_ = source->owned_;
  return source;
}

Result<size_t> MemorySource::Read(char* buffer, size_t capacity) {
  size_t n = std::min(capacity, bytes_.size() - pos_);
  if (max_read_ > 0) n = std::min(n, max_read_);
  if (n > 0) std::memcpy(buffer, bytes_.data() + pos_, n);
  pos_ += n;
  return n;
}

std::unique_ptr<ByteSource> MemorySource::ReaderAt(uint64_t offset) const {
  const size_t from = static_cast<size_t>(std::min<uint64_t>(offset, bytes_.size()));
  return std::make_unique<MemorySource>(path(), bytes_.substr(from), max_read_);
}

}  // namespace tuneprof

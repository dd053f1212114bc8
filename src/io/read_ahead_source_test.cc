#include "io/read_ahead_source.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/memory_source.h"

namespace tuneprof {
namespace {

std::string Numbers(size_t bytes) {
  std::string text;
  for (size_t i = 0; text.size() < bytes; ++i) text += std::to_string(i) + ',';
  text.resize(bytes);
  return text;
}

Result<std::string> ReadAll(ByteSource* source, size_t read_size) {
  std::string text;
  std::vector<char> buffer(read_size);
  for (;;) {
    TP_ASSIGN_OR_RETURN(size_t n, source->Read(buffer.data(), buffer.size()));
    if (n == 0) return text;
    text.append(buffer.data(), n);
  }
}

TEST(ReadAhead, GivesTheSameBytesWhateverTheChunksAndReads) {
  const std::string text = Numbers(30000);
  for (size_t chunk : {size_t{7}, size_t{4096}, size_t{1} << 20}) {
    for (size_t chunks : {size_t{1}, size_t{3}}) {
      for (size_t read : {size_t{5}, size_t{4096}, size_t{50000}}) {
        auto source = ReadAhead(std::make_unique<MemorySource>("t.json", text, 333), chunk, chunks);
        Result<std::string> all = ReadAll(source.get(), read);
        ASSERT_TRUE(all.ok());
        EXPECT_EQ(*all, text) << chunk << " x " << chunks << ", reads of " << read;
        EXPECT_EQ(source->Read(nullptr, 0).value(), 0u);
      }
    }
  }
}

// Gives `good` bytes, then an error.
class FailingSource final : public ByteSource {
 public:
  explicit FailingSource(size_t good) : ByteSource("bad.json.gz"), good_(good) {}
  Result<size_t> Read(char* buffer, size_t capacity) override {
    if (good_ == 0) return InvalidInput("bad.json.gz: corrupt gzip data near compressed byte 9");
    const size_t n = std::min(capacity, good_);
    std::fill(buffer, buffer + n, 'x');
    good_ -= n;
    return n;
  }
  bool compressed() const override { return true; }
  uint64_t file_size() const override { return 42; }

 private:
  size_t good_;
};

TEST(ReadAhead, AnErrorComesAfterTheBytesBeforeIt) {
  auto source = ReadAhead(std::make_unique<FailingSource>(10), 4, 2);
  EXPECT_TRUE(source->compressed());
  EXPECT_EQ(source->file_size(), 42u);
  std::string bytes;
  char buffer[64];
  Result<size_t> n = source->Read(buffer, sizeof buffer);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 10u);
  n = source->Read(buffer, sizeof buffer);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(), "bad.json.gz: corrupt gzip data near compressed byte 9");
  EXPECT_EQ(source->Read(buffer, sizeof buffer).value(), 0u);
}

// The thread waits for room while the caller stops early; closing the source ends it.
TEST(ReadAhead, ClosingBeforeTheEndStopsTheThread) {
  const std::string text = Numbers(1 << 20);
  auto source = ReadAhead(std::make_unique<MemorySource>("t.json", text), 1024, 2);
  char buffer[100];
  ASSERT_EQ(source->Read(buffer, sizeof buffer).value(), sizeof buffer);
  EXPECT_EQ(std::string(buffer, sizeof buffer), text.substr(0, sizeof buffer));
  source.reset();
}

// Asked before the first read, the source reads on the caller's thread, with the same bytes and verdict.
TEST(ReadAhead, ReadsOnTheCallersThreadWhenAskedFirst) {
  const std::string text = Numbers(10000);
  auto source = ReadAhead(std::make_unique<MemorySource>("t.json", text, 333), 64, 2);
  source->ReadOnCallersThread();
  Result<std::string> all = ReadAll(source.get(), 1000);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, text);
  auto failing = ReadAhead(std::make_unique<FailingSource>(10), 4, 2);
  failing->ReadOnCallersThread();
  char buffer[64];
  EXPECT_EQ(failing->Read(buffer, sizeof buffer).value(), 10u);
  EXPECT_FALSE(failing->Read(buffer, sizeof buffer).ok());
}

}  // namespace
}  // namespace tuneprof

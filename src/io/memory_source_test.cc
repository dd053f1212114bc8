#include "io/memory_source.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneprof {
namespace {

// Drains `source` with reads of `capacity`, recording each read's size.
std::string Drain(ByteSource* source, size_t capacity, std::vector<size_t>* sizes = nullptr) {
  std::string out;
  std::vector<char> buffer(capacity);
  for (;;) {
    Result<size_t> n = source->Read(buffer.data(), buffer.size());
    EXPECT_TRUE(n.ok());
    if (!n.ok() || *n == 0) break;
    if (sizes != nullptr) sizes->push_back(*n);
    out.append(buffer.data(), *n);
  }
  return out;
}

TEST(MemorySourceTest, ReadsEverythingThenEnds) {
  const std::string text = "{\"traceEvents\": []}";
  MemorySource source("mem.json", text);
  EXPECT_EQ(source.path(), "mem.json");
  EXPECT_EQ(source.file_size(), text.size());
  EXPECT_FALSE(source.compressed());
  EXPECT_FALSE(source.truncated());
  std::vector<size_t> sizes;
  EXPECT_EQ(Drain(&source, 1024, &sizes), text);
  EXPECT_EQ(sizes, std::vector<size_t>{text.size()});
  EXPECT_EQ(source.consumed(), text.size());
  // End of input stays the end.
  char c;
  EXPECT_EQ(source.Read(&c, 1).value(), 0u);
}

TEST(MemorySourceTest, CapacityBoundsEachRead) {
  const std::string text = "0123456789";
  MemorySource source("mem", text);
  std::vector<size_t> sizes;
  EXPECT_EQ(Drain(&source, 3, &sizes), text);
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 3, 1}));
}

TEST(MemorySourceTest, MaxReadCapsEachReadBelowCapacity) {
  const std::string text = "0123456789";
  MemorySource source("mem", text, /*max_read=*/4);
  std::vector<size_t> sizes;
  EXPECT_EQ(Drain(&source, 100, &sizes), text);
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 4, 2}));
}

TEST(MemorySourceTest, OneByteReads) {
  const std::string text = "[{\"ph\":\"X\"}]";
  MemorySource source("mem", text, 1);
  std::vector<size_t> sizes;
  EXPECT_EQ(Drain(&source, 64, &sizes), text);
  EXPECT_EQ(sizes.size(), text.size());
}

TEST(MemorySourceTest, EmptyInputEndsAtOnce) {
  MemorySource source("empty", std::string_view());
  EXPECT_EQ(source.file_size(), 0u);
  EXPECT_EQ(Drain(&source, 16), "");
}

TEST(MemorySourceTest, ZeroCapacityReadsNothing) {
  MemorySource source("mem", "abc");
  char c = 'x';
  EXPECT_EQ(source.Read(&c, 0).value(), 0u);
  EXPECT_EQ(c, 'x');
  EXPECT_EQ(Drain(&source, 8), "abc");
}

TEST(MemorySourceTest, OwningKeepsItsOwnCopy) {
  std::unique_ptr<MemorySource> small;
  std::unique_ptr<MemorySource> large;
  {
    std::string short_text = "[1]";  // lives inside the string object (small-string buffer)
    std::string long_text(10000, 'x');
    small = MemorySource::Owning("small", short_text, 2);
    large = MemorySource::Owning("large", std::move(long_text));
    short_text.assign("garbage");
  }
  EXPECT_EQ(small->file_size(), 3u);
  EXPECT_EQ(Drain(small.get(), 16), "[1]");
  EXPECT_EQ(Drain(large.get(), 4096), std::string(10000, 'x'));
}

TEST(MemorySourceTest, BinaryBytesPassThrough) {
  const std::string bytes("\x1f\x8b\0\xff\0", 5);
  MemorySource source("bin", bytes, 2);
  EXPECT_EQ(Drain(&source, 3), bytes);
}

}  // namespace
}  // namespace tuneprof

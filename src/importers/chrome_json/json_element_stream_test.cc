#include "importers/chrome_json/json_element_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tuneprof {
namespace {

// Hands out at most `step` bytes per read, to push element boundaries across refills.
class StringSource final : public ByteSource {
 public:
  StringSource(std::string text, size_t step) : ByteSource("mem.json"), text_(std::move(text)), step_(step) {}
  Result<size_t> Read(char* buffer, size_t capacity) override {
    size_t n = std::min({capacity, step_, text_.size() - at_});
    text_.copy(buffer, n, at_);
    at_ += n;
    return n;
  }
  uint64_t file_size() const override { return text_.size(); }

 private:
  std::string text_;
  size_t step_;
  size_t at_ = 0;
};

struct Collected : JsonElementSink {
  std::vector<std::string> events;
  std::vector<uint64_t> offsets;
  std::vector<std::string> keys;
  Status OnTopLevelValue(std::string_view key, const JsonElement& value) override {
    keys.push_back(std::string(key) + "=" + std::string(value.data, value.length));
    return Status::Ok();
  }
  Status OnEvents(const JsonElementRun& run) override {
    for (size_t i = 0; i < run.count; ++i) {
      JsonElement event = run.element(i);
      events.emplace_back(event.data, event.length);
      offsets.push_back(event.offset);
      // Between elements of a run there is only whitespace (the commas were blanked).
      if (i + 1 < run.count) {
        std::string_view gap(run.data + run.bounds[i].second, run.bounds[i + 1].first - run.bounds[i].second);
        EXPECT_EQ(gap.find_first_not_of(" \n\t\r"), std::string_view::npos) << gap;
      }
    }
    return Status::Ok();
  }
};

struct Outcome {
  Collected collected;
  bool truncated = false;
  Status status;
};

Outcome Split(const std::string& text, size_t chunk, size_t step) {
  StringSource source(text, step);
  JsonElementStream stream(&source, chunk);
  Outcome out;
  out.status = stream.Run(&out.collected);
  out.truncated = stream.truncated();
  return out;
}

// Escapes at every position relative to 64-byte blocks, brackets inside strings, nesting.
std::string TrickyTrace() {
  std::string text = "{\"schemaVersion\": 1, \"traceEvents\": [\n";
  for (int i = 0; i < 90; ++i) {
    std::string pad(static_cast<size_t>(i), 'x');
    std::string backslashes(static_cast<size_t>(i % 5), '\\');
    if (backslashes.size() % 2 == 1) backslashes += '\\';  // keep the string valid JSON
    text += "  {\"name\": \"" + pad + backslashes + "\\\"}]{[\", \"args\": {\"a\": [[1], {\"b\": \"]\"}]}},\n";
  }
  text += "  {\"ph\": \"X\"}\n], \"baseTimeNanoseconds\": 17, \"traceName\": \"t\\\"x\"}\n";
  return text;
}

TEST(JsonElementStreamTest, SameElementsForEveryChunkAndReadSize) {
  const std::string text = TrickyTrace();
  Outcome reference = Split(text, 1 << 20, 1 << 20);
  ASSERT_TRUE(reference.status.ok()) << reference.status.message();
  ASSERT_EQ(reference.collected.events.size(), 91u);
  EXPECT_EQ(reference.collected.events.back(), "{\"ph\": \"X\"}");
  ASSERT_EQ(reference.collected.keys.size(), 3u);
  EXPECT_EQ(reference.collected.keys[2], "traceName=\"t\\\"x\"");
  for (size_t chunk : {1, 2, 3, 7, 63, 64, 65, 100, 127, 128, 129, 1000}) {
    for (size_t step : {size_t{1}, size_t{5}, chunk}) {
      Outcome got = Split(text, chunk, step);
      ASSERT_TRUE(got.status.ok()) << chunk << "/" << step << ": " << got.status.message();
      EXPECT_EQ(got.collected.events, reference.collected.events) << chunk << "/" << step;
      EXPECT_EQ(got.collected.offsets, reference.collected.offsets) << chunk << "/" << step;
      EXPECT_EQ(got.collected.keys, reference.collected.keys);
      EXPECT_FALSE(got.truncated);
    }
  }
}

TEST(JsonElementStreamTest, CutOffInputKeepsCompleteEvents) {
  const std::string text = TrickyTrace();
  for (size_t cut : {text.find("\"args\"", 500), text.size() / 2, text.size() - 30}) {
    for (size_t chunk : {7, 64, 4096}) {
      Outcome got = Split(text.substr(0, cut), chunk, chunk);
      ASSERT_TRUE(got.status.ok()) << got.status.message();
      EXPECT_TRUE(got.truncated);
      Outcome reference = Split(text, 1 << 20, 1 << 20);
      ASSERT_LE(got.collected.events.size(), reference.collected.events.size());
      for (size_t i = 0; i < got.collected.events.size(); ++i) {
        EXPECT_EQ(got.collected.events[i], reference.collected.events[i]);
      }
      EXPECT_GT(got.collected.events.size(), 0u);
    }
  }
}

TEST(JsonElementStreamTest, BareArrayAndErrorsWithOffsets) {
  Outcome bare = Split("[{\"a\":1},{\"b\":\"}\"}]", 3, 3);
  ASSERT_TRUE(bare.status.ok());
  EXPECT_EQ(bare.collected.events.size(), 2u);

  Outcome junk = Split("{\"traceEvents\": [{}] } x", 64, 64);
  EXPECT_FALSE(junk.status.ok());
  EXPECT_NE(junk.status.message().find("mem.json: byte 23"), std::string::npos) << junk.status.message();

  Outcome missing_comma = Split("[{} {}]", 64, 64);
  EXPECT_FALSE(missing_comma.status.ok());
  EXPECT_NE(missing_comma.status.message().find("byte 4"), std::string::npos) << missing_comma.status.message();

  Outcome text = Split("hello", 64, 64);
  EXPECT_FALSE(text.status.ok());
}

// `head`, then `blanks` spaces, then `tail`, generated as read: the blanks are never held in memory.
class BlankRunSource final : public ByteSource {
 public:
  BlankRunSource(std::string head, uint64_t blanks, std::string tail)
      : ByteSource("blanks.json"), head_(std::move(head)), blanks_(blanks), tail_(std::move(tail)) {}
  Result<size_t> Read(char* buffer, size_t capacity) override {
    size_t n = 0;
    for (; n < capacity && at_ < size(); ++n, ++at_) {
      if (at_ < head_.size()) {
        buffer[n] = head_[at_];
      } else if (at_ < head_.size() + blanks_) {
        buffer[n] = ' ';
      } else {
        buffer[n] = tail_[at_ - head_.size() - blanks_];
      }
    }
    return n;
  }
  uint64_t file_size() const override { return size(); }

 private:
  uint64_t size() const { return head_.size() + blanks_ + tail_.size(); }
  std::string head_;
  uint64_t blanks_;
  std::string tail_;
  uint64_t at_ = 0;
};

// With a value limit of 64 KiB, 8 MiB of blanks kept in the buffer would be an error: they must stream by,
// between elements (before and after the comma, in the block scan and in the one-element path) and
// between top-level keys.
TEST(JsonElementStreamTest, LongBlanksBetweenElementsAreNotBuffered) {
  constexpr uint64_t kBlanks = uint64_t{8} << 20;
  const std::pair<std::string, std::string> cases[] = {
      {"{\"traceEvents\": [{\"a\": 1},", "{\"b\": 2}]}"},           {"{\"traceEvents\": [{\"a\": 1}", ", {\"b\": 2}]}"},
      {"{\"traceEvents\": [", "{\"a\": 1}, {\"b\": 2}]}"},          {"[1, 2,", "{\"a\": 1}]"},
      {"{\"x\": 1,", "\"traceEvents\": [{\"a\": 1}, {\"b\": 2}]}"},
  };
  for (const auto& [head, tail] : cases) {
    BlankRunSource source(head, kBlanks, tail);
    JsonElementStream stream(&source, 4096, 64 << 10);
    Collected collected;
    Status status = stream.Run(&collected);
    ASSERT_TRUE(status.ok()) << head << ": " << status.message();
    EXPECT_FALSE(stream.truncated());
    EXPECT_EQ(collected.events.size(), head[0] == '[' ? 3u : 2u) << head;
    EXPECT_EQ(stream.bytes_read(), head.size() + kBlanks + tail.size());
  }
}

TEST(JsonElementStreamTest, ValueOverTheLimitIsAnErrorNamingItsStart) {
  BlankRunSource source("{\"traceEvents\": [{}, {\"a\":", uint64_t{1} << 20, "1}]}");
  JsonElementStream stream(&source, 4096, 64 << 10);
  Collected collected;
  Status status = stream.Run(&collected);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("blanks.json: byte 21: one JSON value runs past 64 KiB"), std::string::npos)
      << status.message();
  EXPECT_EQ(collected.events.size(), 1u);  // what came before it was delivered
}

}  // namespace
}  // namespace tuneprof

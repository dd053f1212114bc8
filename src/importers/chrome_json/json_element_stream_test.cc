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

}  // namespace
}  // namespace tuneprof

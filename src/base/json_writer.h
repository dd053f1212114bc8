#pragma once
// A small streaming JSON writer: escapes strings, keeps commas right, prints int64 exactly.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tuneprof {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}
  // Hands the text to `sink` (and empties `out`) whenever `flush_bytes` are buffered, and on Flush(): a
  // document of many MB, as thousands of ranks make, then never sits whole in memory.
  using Sink = std::function<void(std::string_view)>;
  static constexpr size_t kFlushBytes = size_t{1} << 16;
  JsonWriter(std::string* out, Sink sink, size_t flush_bytes = kFlushBytes)
      : out_(out), sink_(std::move(sink)), flush_bytes_(flush_bytes) {}
  void Flush();

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Uint(uint64_t value);
  JsonWriter& Double(double value);  // non-finite values are written as null
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

 private:
  void BeforeValue();
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);
  std::string* out_;
  Sink sink_;
  size_t flush_bytes_ = 0;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Appends `text` to `out` as JSON string content (without quotes); invalid UTF-8 becomes U+FFFD.
void AppendJsonEscaped(std::string_view text, std::string* out);

}  // namespace tuneprof

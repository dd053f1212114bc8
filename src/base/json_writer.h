#pragma once
// A small streaming JSON writer: escapes strings, keeps commas right, prints int64 exactly.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

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
  std::string* out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Appends `text` to `out` as JSON string content (without quotes); invalid UTF-8 becomes U+FFFD.
void AppendJsonEscaped(std::string_view text, std::string* out);

}  // namespace tuneprof

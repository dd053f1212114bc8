#include "base/json_writer.h"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace tuneprof {
namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 if it is not valid.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  if (length == 2 && c < 0xC2) return 0;  // overlong
  return length;
}

}  // namespace

void AppendJsonEscaped(std::string_view text, std::string* out) {
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '"':
        *out += "\\\"";
        ++i;
        continue;
      case '\\':
        *out += "\\\\";
        ++i;
        continue;
      case '\n':
        *out += "\\n";
        ++i;
        continue;
      case '\r':
        *out += "\\r";
        ++i;
        continue;
      case '\t':
        *out += "\\t";
        ++i;
        continue;
      default:
        break;
    }
    if (static_cast<unsigned char>(c) < 0x20) {
      *out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      ++i;
      continue;
    }
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      *out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out->append(text.data() + i, length);
    i += length;
  }
}

void JsonWriter::Flush() {
  if (!sink_ || out_->empty()) return;
  sink_(*out_);
  out_->clear();
}

void JsonWriter::BeforeValue() {
  if (sink_ && out_->size() >= flush_bytes_) Flush();
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) *out_ += ',';
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::Open(char bracket) {
  BeforeValue();
  *out_ += bracket;
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  *out_ += bracket;
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginObject() { return Open('{'); }
JsonWriter& JsonWriter::EndObject() { return Close('}'); }
JsonWriter& JsonWriter::BeginArray() { return Open('['); }
JsonWriter& JsonWriter::EndArray() { return Close(']'); }

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  *out_ += '"';
  AppendJsonEscaped(key, out_);
  *out_ += "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  *out_ += '"';
  AppendJsonEscaped(value, out_);
  *out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  *out_ += fmt::format("{}", value);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  *out_ += fmt::format("{}", value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    *out_ += "null";
  } else {
    *out_ += fmt::format("{}", value);
  }
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  *out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  *out_ += "null";
  return *this;
}

}  // namespace tuneprof

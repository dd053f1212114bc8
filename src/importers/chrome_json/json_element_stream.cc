#include "importers/chrome_json/json_element_stream.h"

#include <emmintrin.h>

#include <cstring>
#include <string>

namespace tuneprof {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Position of the first '"' or '\\' in [p, p+n), or n. Reads up to 15 bytes past n (the buffer is padded).
size_t FindQuoteOrBackslash(const char* p, size_t n) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (size_t i = 0; i < n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (mask != 0) {
      size_t hit = i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
      return hit < n ? hit : n;
    }
  }
  return n;
}

}  // namespace

JsonElementStream::JsonElementStream(ByteSource* source, size_t chunk_bytes)
    : source_(source), buffer_(chunk_bytes + kPadding, '\0'), chunk_bytes_(chunk_bytes) {}

Result<bool> JsonElementStream::Refill(size_t keep_from) {
  if (eof_) return false;
  const size_t kept = end_ - keep_from;
  if (keep_from > 0) {
    std::memmove(buffer_.data(), buffer_.data() + keep_from, kept);
    base_offset_ += keep_from;
    pos_ -= keep_from;
    end_ = kept;
  }
  if (end_ + chunk_bytes_ + kPadding > buffer_.size()) buffer_.resize(end_ + chunk_bytes_ + kPadding);
  TP_ASSIGN_OR_RETURN(size_t n, source_->Read(buffer_.data() + end_, chunk_bytes_));
  end_ += n;
  std::memset(buffer_.data() + end_, 0, kPadding);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  return true;
}

Result<bool> JsonElementStream::SkipBlanks() {
  for (;;) {
    while (pos_ < end_ && IsBlank(buffer_[pos_])) ++pos_;
    if (pos_ < end_) return true;
    TP_ASSIGN_OR_RETURN(bool more, Refill(pos_));
    if (!more) return false;
  }
}

Result<bool> JsonElementStream::ScanValue(size_t* value_end) {
  // Offsets are relative to pos_ (the value's start), which Refill() keeps at the buffer front.
  size_t cursor = 0;
  int depth = 0;
  bool in_string = false;
  bool escape = false;
  const char first = buffer_[pos_];
  const bool scalar = first != '{' && first != '[' && first != '"';
  for (;;) {
    const char* base = buffer_.data() + pos_;
    const size_t avail = end_ - pos_;
    while (cursor < avail) {
      if (in_string) {
        if (escape) {
          escape = false;
          ++cursor;
          continue;
        }
        cursor += FindQuoteOrBackslash(base + cursor, avail - cursor);
        if (cursor >= avail) break;
        if (base[cursor] == '\\') {
          escape = true;
          ++cursor;
          continue;
        }
        in_string = false;
        ++cursor;
        if (depth == 0) {  // a top-level string value ends here
          *value_end = pos_ + cursor;
          return true;
        }
        continue;
      }
      const char c = base[cursor];
      if (scalar) {
        if (c == ',' || c == ']' || c == '}' || IsBlank(c)) {
          *value_end = pos_ + cursor;
          return true;
        }
        ++cursor;
        continue;
      }
      ++cursor;
      switch (c) {
        case '"':
          in_string = true;
          break;
        case '{':
        case '[':
          ++depth;
          break;
        case '}':
        case ']':
          if (--depth == 0) {
            *value_end = pos_ + cursor;
            return true;
          }
          break;
        default:
          break;
      }
    }
    TP_ASSIGN_OR_RETURN(bool more, Refill(pos_));
    if (!more) {
      if (scalar && cursor > 0) {  // a number at the very end of input
        *value_end = pos_ + cursor;
        return true;
      }
      return false;
    }
  }
}

JsonElement JsonElementStream::ElementAt(size_t begin, size_t end) const {
  return JsonElement{buffer_.data() + begin, end - begin, buffer_.size() - begin, base_offset_ + begin};
}

Status JsonElementStream::Unexpected(const char* expected) const {
  std::string found = pos_ < end_ ? std::string("'") + buffer_[pos_] + "'" : "end of input";
  if (pos_ < end_ && static_cast<unsigned char>(buffer_[pos_]) < 0x20) found = "a control byte";
  return InvalidInput(source_->path() + ": byte " + std::to_string(base_offset_ + pos_) + ": expected " + expected +
                      ", found " + found);
}

Status JsonElementStream::Run(JsonElementSink* sink) {
  TP_ASSIGN_OR_RETURN(bool any, SkipBlanks());
  // A UTF-8 byte order mark is harmless; skip it.
  if (any && end_ - pos_ >= 3 && std::memcmp(buffer_.data() + pos_, "\xEF\xBB\xBF", 3) == 0) {
    pos_ += 3;
    TP_ASSIGN_OR_RETURN(any, SkipBlanks());
  }
  if (!any) return InvalidInput(source_->path() + ": no JSON content (only blanks)");
  if (buffer_[pos_] == '[') {
    top_level_is_array_ = true;
    TP_RETURN_IF_ERROR(RunArray(sink));
  } else if (buffer_[pos_] == '{') {
    TP_RETURN_IF_ERROR(RunObject(sink));
  } else {
    return Unexpected("a JSON object or array (not a Chrome-trace JSON file)");
  }
  if (truncated_) return Status::Ok();
  TP_ASSIGN_OR_RETURN(bool trailing, SkipBlanks());
  if (trailing) return Unexpected("end of input after the JSON document");
  return Status::Ok();
}

Status JsonElementStream::RunArray(JsonElementSink* sink) {
  ++pos_;  // '['
  for (bool first = true;; first = false) {
    TP_ASSIGN_OR_RETURN(bool any, SkipBlanks());
    if (!any) {
      truncated_ = true;
      return Status::Ok();
    }
    if (buffer_[pos_] == ']') {
      ++pos_;
      return Status::Ok();
    }
    if (!first) {
      if (buffer_[pos_] != ',') return Unexpected("',' or ']' between trace events");
      ++pos_;
      TP_ASSIGN_OR_RETURN(any, SkipBlanks());
      if (!any) {
        truncated_ = true;
        return Status::Ok();
      }
      if (buffer_[pos_] == ']') {  // tolerate a trailing comma, as Chrome's viewer does
        ++pos_;
        return Status::Ok();
      }
    }
    size_t value_end = 0;
    TP_ASSIGN_OR_RETURN(bool complete, ScanValue(&value_end));
    if (!complete) {
      truncated_ = true;
      return Status::Ok();
    }
    TP_RETURN_IF_ERROR(sink->OnEvent(ElementAt(pos_, value_end)));
    pos_ = value_end;
  }
}

Status JsonElementStream::RunObject(JsonElementSink* sink) {
  ++pos_;  // '{'
  for (bool first = true;; first = false) {
    TP_ASSIGN_OR_RETURN(bool any, SkipBlanks());
    if (!any) {
      truncated_ = true;
      return Status::Ok();
    }
    if (buffer_[pos_] == '}') {
      ++pos_;
      return Status::Ok();
    }
    if (!first) {
      if (buffer_[pos_] != ',') return Unexpected("',' or '}' in the top-level object");
      ++pos_;
      TP_ASSIGN_OR_RETURN(any, SkipBlanks());
      if (!any) {
        truncated_ = true;
        return Status::Ok();
      }
    }
    if (buffer_[pos_] != '"') return Unexpected("a quoted key in the top-level object");
    size_t key_end = 0;
    TP_ASSIGN_OR_RETURN(bool complete, ScanValue(&key_end));
    if (!complete) {
      truncated_ = true;
      return Status::Ok();
    }
    std::string key(buffer_.data() + pos_ + 1, key_end - pos_ - 2);
    pos_ = key_end;
    TP_ASSIGN_OR_RETURN(any, SkipBlanks());
    if (!any || buffer_[pos_] != ':') {
      if (!any) {
        truncated_ = true;
        return Status::Ok();
      }
      return Unexpected("':' after a top-level key");
    }
    ++pos_;
    TP_ASSIGN_OR_RETURN(any, SkipBlanks());
    if (!any) {
      truncated_ = true;
      return Status::Ok();
    }
    if (key == "traceEvents") {
      if (buffer_[pos_] != '[') return Unexpected("an array as the value of traceEvents");
      TP_RETURN_IF_ERROR(RunArray(sink));
      if (truncated_) return Status::Ok();
      continue;
    }
    size_t value_end = 0;
    TP_ASSIGN_OR_RETURN(complete, ScanValue(&value_end));
    if (!complete) {
      truncated_ = true;
      return Status::Ok();
    }
    TP_RETURN_IF_ERROR(sink->OnTopLevelValue(key, ElementAt(pos_, value_end)));
    pos_ = value_end;
  }
}

}  // namespace tuneprof

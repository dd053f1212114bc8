#include "importers/chrome_json/json_element_stream.h"

#include <emmintrin.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace tuneprof {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Bit masks over one 64-byte block, the way simdjson's stage 1 finds structure (the idea, not its code).
struct BlockMasks {
  uint64_t quote = 0;
  uint64_t backslash = 0;
  uint64_t open = 0;   // { [
  uint64_t close = 0;  // } ]
};

inline uint64_t Eq16(__m128i v, char c) {
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))));
}

// Reads 64 bytes; the buffer is padded so reading past the valid end is safe.
BlockMasks ClassifyBlock(const char* p) {
  BlockMasks m;
  for (int lane = 0; lane < 4; ++lane) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * lane));
    const int shift = 16 * lane;
    m.quote |= Eq16(v, '"') << shift;
    m.backslash |= Eq16(v, '\\') << shift;
    m.open |= (Eq16(v, '{') | Eq16(v, '[')) << shift;
    m.close |= (Eq16(v, '}') | Eq16(v, ']')) << shift;
  }
  return m;
}

// Bits of the characters that a backslash escapes. Backslashes are rare in traces, so this walks them
// one by one: each escaping backslash makes the next byte literal (a backslash there escapes nothing).
// `carry` is 1 when the previous block's last byte was an escaping backslash.
uint64_t EscapedBits(uint64_t backslash, uint64_t* carry) {
  uint64_t escaped = *carry;
  backslash &= ~escaped;
  *carry = 0;
  while (backslash != 0) {
    const int i = __builtin_ctzll(backslash);
    if (i == 63) {
      *carry = 1;
      break;
    }
    escaped |= uint64_t{1} << (i + 1);
    backslash &= ~(uint64_t{3} << i);
  }
  return escaped;
}

// Inclusive prefix XOR: bit i = xor of bits 0..i. Turns quote positions into "inside a string".
uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

}  // namespace

JsonElementStream::JsonElementStream(ByteSource* source, size_t chunk_bytes)
    : source_(source), buffer_(chunk_bytes + kPadding, '\0'), chunk_bytes_(chunk_bytes) {}

Result<bool> JsonElementStream::Refill(size_t keep_from) {
  if (eof_) return false;
  if (run_begin_ != kNoRun && run_begin_ < keep_from) keep_from = run_begin_;
  const size_t kept = end_ - keep_from;
  if (keep_from > 0) {
    std::memmove(buffer_.data(), buffer_.data() + keep_from, kept);
    base_offset_ += keep_from;
    pos_ -= keep_from;
    end_ = kept;
    if (run_begin_ != kNoRun) run_begin_ -= keep_from;
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
  const char first = buffer_[pos_];
  if (first == '"') return ScanString(value_end);
  if (first != '{' && first != '[') return ScanScalar(value_end);
  // Offsets are relative to pos_ (the value's start), which Refill() keeps at the buffer front.
  // Whole 64-byte blocks are classified at once; only brackets outside strings are visited.
  size_t cursor = 0;
  int64_t depth = 0;
  uint64_t escape_carry = 0;
  uint64_t in_string_carry = 0;  // all ones when the previous block ended inside a string
  for (;;) {
    const char* base = buffer_.data() + pos_;
    const size_t avail = end_ - pos_;
    // A partial last block is only classified at end of input: its carries would be wrong otherwise.
    while (cursor + 64 <= avail || (eof_ && cursor < avail)) {
      BlockMasks m = ClassifyBlock(base + cursor);
      if (avail - cursor < 64) {
        const uint64_t valid = (uint64_t{1} << (avail - cursor)) - 1;
        m.quote &= valid;
        m.backslash &= valid;
        m.open &= valid;
        m.close &= valid;
      }
      const uint64_t escaped = m.backslash == 0 && escape_carry == 0 ? 0 : EscapedBits(m.backslash, &escape_carry);
      const uint64_t quotes = m.quote & ~escaped;
      const uint64_t in_string = PrefixXor(quotes) ^ in_string_carry;
      in_string_carry = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
      uint64_t brackets = (m.open | m.close) & ~in_string;
      while (brackets != 0) {
        const int bit = __builtin_ctzll(brackets);
        brackets &= brackets - 1;
        if ((m.open >> bit) & 1) {
          ++depth;
        } else if (--depth == 0) {
          *value_end = pos_ + cursor + static_cast<size_t>(bit) + 1;
          return true;
        }
      }
      cursor += 64;
    }
    if (eof_) return false;
    TP_ASSIGN_OR_RETURN(bool more, Refill(pos_));
    (void)more;  // at end of input the loop above finishes the partial block, then reports truncation
  }
}

Result<bool> JsonElementStream::ScanString(size_t* value_end) {
  size_t cursor = 1;  // past the opening quote
  bool escape = false;
  for (;;) {
    const char* base = buffer_.data() + pos_;
    const size_t avail = end_ - pos_;
    for (; cursor < avail; ++cursor) {
      if (escape) {
        escape = false;
      } else if (base[cursor] == '\\') {
        escape = true;
      } else if (base[cursor] == '"') {
        *value_end = pos_ + cursor + 1;
        return true;
      }
    }
    TP_ASSIGN_OR_RETURN(bool more, Refill(pos_));
    if (!more) return false;
  }
}

Result<bool> JsonElementStream::ScanScalar(size_t* value_end) {
  size_t cursor = 0;
  for (;;) {
    const char* base = buffer_.data() + pos_;
    const size_t avail = end_ - pos_;
    for (; cursor < avail; ++cursor) {
      const char c = base[cursor];
      if (c == ',' || c == ']' || c == '}' || IsBlank(c)) {
        *value_end = pos_ + cursor;
        return true;
      }
    }
    TP_ASSIGN_OR_RETURN(bool more, Refill(pos_));
    if (!more) {
      *value_end = pos_ + cursor;  // a number at the very end of input
      return cursor > 0;
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

Status JsonElementStream::FlushRun(JsonElementSink* sink) {
  if (run_begin_ == kNoRun) return Status::Ok();
  JsonElementRun run;
  run.data = buffer_.data() + run_begin_;
  run.length = run_bounds_.back().second;
  run.capacity = buffer_.size() - run_begin_;
  run.offset = base_offset_ + run_begin_;
  run.bounds = run_bounds_.data();
  run.count = run_bounds_.size();
  run_begin_ = kNoRun;
  Status status = sink->OnEvents(run);
  run_bounds_.clear();
  return status;
}

Status JsonElementStream::RunArray(JsonElementSink* sink) {
  Status status = ScanArray(sink);
  Status flushed = FlushRun(sink);  // what was complete before an error or cut-off still counts
  // The run lies before the scan position: its error is the first in the file, whatever the read size.
  return flushed.ok() ? status : flushed;
}

Status JsonElementStream::ScanArray(JsonElementSink* sink) {
  // Hand the run over before the unread tail gets short, so refills rarely have to carry it.
  const size_t min_tail = std::min<size_t>(64 << 10, chunk_bytes_ / 4);
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
      buffer_[pos_] = ' ';  // the run handed to the parser is whitespace-separated
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
    if (run_begin_ != kNoRun && (end_ - pos_ < min_tail || run_bounds_.size() >= kMaxRunEvents) && !eof_) {
      TP_RETURN_IF_ERROR(FlushRun(sink));
    }
    size_t value_end = 0;
    TP_ASSIGN_OR_RETURN(bool complete, ScanValue(&value_end));
    if (!complete) {
      truncated_ = true;
      return Status::Ok();
    }
    if (run_begin_ == kNoRun) run_begin_ = pos_;
    run_bounds_.emplace_back(static_cast<uint32_t>(pos_ - run_begin_), static_cast<uint32_t>(value_end - run_begin_));
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

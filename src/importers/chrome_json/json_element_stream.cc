#include "importers/chrome_json/json_element_stream.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

namespace tuneprof {
namespace {

// "64 MiB", "64 KiB".
std::string SizeText(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Bit masks over one 64-byte block, the way simdjson's stage 1 finds structure (the idea, not its code).
struct BlockMasks {
  uint64_t quote = 0;
  uint64_t backslash = 0;
  uint64_t open = 0;   // { [
  uint64_t close = 0;  // } ]
  uint64_t blank = 0;  // space, tab, CR, LF (and any other byte below 0x20)
  uint64_t space = 0;
};

// '[' and '{' differ only in bit 5, as do ']' and '}'; bytes up to 0x20 outside strings can only be
// blanks in valid JSON (and anything else there is rejected by the parser). Five compares per vector.
inline uint64_t Mask16(__m128i eq) { return static_cast<uint32_t>(_mm_movemask_epi8(eq)); }

// Each reads 64 bytes; the buffer is padded so reading past the valid end is safe.
BlockMasks ClassifyBlockSse2(const char* p) {
  BlockMasks m;
  const __m128i bit5 = _mm_set1_epi8(0x20);
  for (int lane = 0; lane < 4; ++lane) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * lane));
    const __m128i folded = _mm_or_si128(v, bit5);
    const int shift = 16 * lane;
    m.quote |= Mask16(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) << shift;
    m.backslash |= Mask16(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) << shift;
    m.open |= Mask16(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{'))) << shift;
    m.close |= Mask16(_mm_cmpeq_epi8(folded, _mm_set1_epi8('}'))) << shift;
    m.blank |= Mask16(_mm_cmpeq_epi8(_mm_min_epu8(v, bit5), v)) << shift;
    m.space |= Mask16(_mm_cmpeq_epi8(v, bit5)) << shift;
  }
  return m;
}

__attribute__((target("avx2"))) inline uint64_t Mask32(__m256i eq) {
  return static_cast<uint32_t>(_mm256_movemask_epi8(eq));
}

__attribute__((target("avx2"))) BlockMasks ClassifyBlockAvx2(const char* p) {
  BlockMasks m;
  const __m256i bit5 = _mm256_set1_epi8(0x20);
  for (int half = 0; half < 2; ++half) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * half));
    const __m256i folded = _mm256_or_si256(v, bit5);
    const int shift = 32 * half;
    m.quote |= Mask32(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))) << shift;
    m.backslash |= Mask32(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))) << shift;
    m.open |= Mask32(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('{'))) << shift;
    m.close |= Mask32(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('}'))) << shift;
    m.blank |= Mask32(_mm256_cmpeq_epi8(_mm256_min_epu8(v, bit5), v)) << shift;
    m.space |= Mask32(_mm256_cmpeq_epi8(v, bit5)) << shift;
  }
  return m;
}

// Chosen once; one indirect call per 64 bytes costs little next to the classification.
using ClassifyFn = BlockMasks (*)(const char*);
const ClassifyFn ClassifyBlock = __builtin_cpu_supports("avx2") ? ClassifyBlockAvx2 : ClassifyBlockSse2;

// The first byte below 0x20 other than tab, CR and LF among `candidates` (bits of bytes below 0x21
// outside strings), or -1. JSON allows none there; the parser's verdict on one depended on how many
// events it read at once, so the stream rejects it wherever it falls. Newlines are the only common
// candidates: a few per event.
int FirstControlByte(const char* p, uint64_t candidates) {
  while (candidates != 0) {
    const int i = __builtin_ctzll(candidates);
    const char c = p[i];
    if (c != '\n' && c != '\r' && c != '\t') return i;
    candidates &= candidates - 1;
  }
  return -1;
}

// Bits of a block's bytes before `bit` (all of them when bit < 0): a scan stops at a control byte, so that
// which error it reports does not depend on where its 64-byte blocks begin.
uint64_t BitsBefore(int bit) { return bit < 0 ? ~uint64_t{0} : (uint64_t{1} << bit) - 1; }

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

// simdjson On-Demand reads the byte just past a value as its end: on malformed input a '}' there can
// turn an error into success, so the verdict would depend on what the last read happened to hold. The
// sink sees a blank there instead, restored afterwards (the buffer is padded, so the byte exists).
template <typename Call>
Status WithBlankAfter(char* after, Call&& call) {
  const char saved = *after;
  *after = ' ';
  Status status = call();
  *after = saved;
  return status;
}

}  // namespace

JsonElementStream::JsonElementStream(ByteSource* source, size_t chunk_bytes, size_t max_value_bytes)
    : source_(source),
      buffer_(chunk_bytes + kPadding, '\0'),
      chunk_bytes_(chunk_bytes),
      max_value_bytes_(max_value_bytes) {}

Result<bool> JsonElementStream::Refill(size_t keep_from) {
  if (eof_) return false;
  if (end_ - keep_from > max_value_bytes_) {
    return InvalidInput(source_->path() + ": byte " + std::to_string(base_offset_ + keep_from) +
                        ": one JSON value runs past " + SizeText(max_value_bytes_) +
                        "; no trace event is that large (damaged file?)");
  }
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
    if (run_begin_ != kNoRun && sink_ != nullptr) TP_RETURN_IF_ERROR(FlushRun(sink_));
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
      const uint64_t valid = avail - cursor < 64 ? (uint64_t{1} << (avail - cursor)) - 1 : ~uint64_t{0};
      const int control = FirstControlByte(base + cursor, m.blank & ~m.space & ~in_string & valid);
      uint64_t brackets = (m.open | m.close) & ~in_string & BitsBefore(control);
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
      if (control >= 0) return ControlByteError(pos_ + cursor + static_cast<size_t>(control));
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
        // An empty value (a stray ',') is no element: handed on, the parser's verdict on it would depend
        // on which events shared its run.
        if (cursor == 0) return Unexpected("a JSON value");
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

Status JsonElementStream::ControlByteError(size_t at) const {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(buffer_[at])));
  return InvalidInput(source_->path() + ": byte " + std::to_string(base_offset_ + at) + ": a control byte (" + hex +
                      ") outside a string; JSON allows none there");
}

Status JsonElementStream::Unexpected(const char* expected) const {
  std::string found = pos_ < end_ ? std::string("'") + buffer_[pos_] + "'" : "end of input";
  if (pos_ < end_ && static_cast<unsigned char>(buffer_[pos_]) < 0x20) found = "a control byte";
  return InvalidInput(source_->path() + ": byte " + std::to_string(base_offset_ + pos_) + ": expected " + expected +
                      ", found " + found);
}

Status JsonElementStream::Run(JsonElementSink* sink) {
  sink_ = sink;
  TP_ASSIGN_OR_RETURN(bool any, SkipBlanks());
  // A UTF-8 byte order mark is harmless; skip it. A short first read may hold only part of it.
  while (any && end_ - pos_ < 3 && buffer_[pos_] == '\xEF') {
    TP_ASSIGN_OR_RETURN(bool more, Refill(pos_));
    if (!more) break;
  }
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
  return EndOfDocument();
}

Status JsonElementStream::RunFromElement(JsonElementSink* sink, uint64_t offset, bool top_level_is_array) {
  sink_ = sink;
  base_offset_ = offset;
  top_level_is_array_ = top_level_is_array;
  saw_trace_events_ = !top_level_is_array;
  TP_RETURN_IF_ERROR(RunArray(sink, /*opened=*/true));
  if (!top_level_is_array && !truncated_) TP_RETURN_IF_ERROR(RunObjectMembers(sink, /*first=*/false));
  return EndOfDocument();
}

Status JsonElementStream::EndOfDocument() {
  if (truncated_ || stopped_) return Status::Ok();
  TP_ASSIGN_OR_RETURN(bool trailing, SkipBlanks());
  if (trailing) return Unexpected("end of input after the JSON document");
  return Status::Ok();
}

bool JsonElementStream::AtStopElement() {
  if (stop_at_ == kNoStop) return false;
  const uint64_t at = base_offset_ + pos_;
  if (stop_found_later_ && at >= stop_at_) {
    stop_at_ = std::exchange(stop_found_later_, nullptr)();
    if (stop_at_ == kNoStop) return false;
  }
  if (at == stop_at_) {
    stopped_ = true;
    return true;
  }
  if (at > stop_at_) stop_at_ = kNoStop;  // passed without an element starting there
  return false;
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
  char* after = buffer_.data() + run_begin_ + run.length;
  run_begin_ = kNoRun;
  Status status = WithBlankAfter(after, [&] { return sink->OnEvents(run); });
  run_bounds_.clear();
  return status;
}

Status JsonElementStream::RunArray(JsonElementSink* sink, bool opened) {
  Status status = ScanArray(sink, opened);
  Status flushed = FlushRun(sink);  // what was complete before an error or cut-off still counts
  // The run lies before the scan position: its error is the first in the file, whatever the read size.
  return flushed.ok() ? status : flushed;
}

Status JsonElementStream::ScanArray(JsonElementSink* sink, bool opened) {
  if (!opened) ++pos_;  // '['
  for (bool need_comma = false;; need_comma = true) {
    TP_ASSIGN_OR_RETURN(FastOutcome outcome, ScanObjectsFast(sink, &need_comma));
    if (outcome == FastOutcome::kArrayEnd || outcome == FastOutcome::kStopped) return Status::Ok();
    if (outcome == FastOutcome::kTruncated) {
      truncated_ = true;
      return Status::Ok();
    }
    // Anything the block scan does not expect (an element that is not an object, a stray byte) is
    // handled here one element at a time, with precise messages.
    TP_ASSIGN_OR_RETURN(bool more, ScanOneElement(sink, need_comma));
    if (!more) return Status::Ok();
  }
}

Result<bool> JsonElementStream::ScanOneElement(JsonElementSink* sink, bool need_comma) {
  TP_ASSIGN_OR_RETURN(bool any, SkipBlanks());
  if (!any) {
    truncated_ = true;
    return false;
  }
  if (buffer_[pos_] == ']') {
    ++pos_;
    return false;
  }
  if (need_comma) {
    if (buffer_[pos_] != ',') return Unexpected("',' or ']' between trace events");
    buffer_[pos_] = ' ';  // the run handed to the parser is whitespace-separated
    ++pos_;
    TP_ASSIGN_OR_RETURN(any, SkipBlanks());
    if (!any) {
      truncated_ = true;
      return false;
    }
    if (buffer_[pos_] == ']') {  // tolerate a trailing comma, as Chrome's viewer does
      ++pos_;
      return false;
    }
  }
  if (AtStopElement()) return false;
  TP_RETURN_IF_ERROR(MaybeFlushRun(sink));
  size_t value_end = 0;
  TP_ASSIGN_OR_RETURN(bool complete, ScanValue(&value_end));
  if (!complete) {
    truncated_ = true;
    return false;
  }
  AddToRun(pos_, value_end);
  pos_ = value_end;
  return true;
}

void JsonElementStream::AddToRun(size_t begin, size_t end) {
  if (run_begin_ == kNoRun) run_begin_ = begin;
  run_bounds_.emplace_back(static_cast<uint32_t>(begin - run_begin_), static_cast<uint32_t>(end - run_begin_));
}

// Hand the run over before the unread tail gets short, so refills rarely have to carry it.
Status JsonElementStream::MaybeFlushRun(JsonElementSink* sink) {
  const size_t min_tail = std::min<size_t>(64 << 10, chunk_bytes_ / 4);
  if (run_begin_ != kNoRun && (end_ - pos_ < min_tail || run_bounds_.size() >= kMaxRunEvents) && !eof_) {
    return FlushRun(sink);
  }
  return Status::Ok();
}

// The common case at block speed: object elements separated by commas and blanks. Classifies 64 bytes
// at a time and visits only the non-blank bytes between elements and the brackets outside strings
// within them. Stops (kSlow) at anything else, with pos_ at the start of what it did not take.
Result<JsonElementStream::FastOutcome> JsonElementStream::ScanObjectsFast(JsonElementSink* sink, bool* need_comma) {
  int64_t depth = 0;  // 0 between elements; pos_ is then the next unread byte
  uint64_t escape_carry = 0;
  uint64_t in_string_carry = 0;
  size_t block = pos_;  // buffer index of the next block to classify
  for (;;) {
    if (depth == 0) {
      TP_RETURN_IF_ERROR(MaybeFlushRun(sink));
    }
    if (block + 64 > end_ && !eof_) {
      const size_t block_from_pos = block - pos_;
      TP_ASSIGN_OR_RETURN(bool more, Refill(pos_));
      (void)more;  // at end of input the partial block below is classified as is
      block = pos_ + block_from_pos;
      continue;
    }
    if (block >= end_) return FastOutcome::kTruncated;  // input ended before the array did
    const char* base = buffer_.data() + block;
    BlockMasks m = ClassifyBlock(base);
    uint64_t valid = ~uint64_t{0};
    if (end_ - block < 64) valid = (uint64_t{1} << (end_ - block)) - 1;
    const uint64_t escaped =
        (m.backslash & valid) == 0 && escape_carry == 0 ? 0 : EscapedBits(m.backslash & valid, &escape_carry);
    const uint64_t in_string = PrefixXor(m.quote & valid & ~escaped) ^ in_string_carry;
    in_string_carry = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    // A control byte is an error where the scan reaches it: what completes before it still counts.
    const int control = FirstControlByte(base, m.blank & ~m.space & ~in_string & valid);
    const uint64_t reached = valid & BitsBefore(control);
    const uint64_t brackets = (m.open | m.close) & ~in_string & reached;
    const uint64_t visible = ~m.blank & reached;  // every non-blank byte, strings included
    uint64_t from = ~uint64_t{0};                 // bits not yet visited in this block
    for (;;) {
      if (depth == 0) {
        const uint64_t bits = visible & from;
        if (bits == 0) break;
        const int i = __builtin_ctzll(bits);
        const char c = base[i];
        from = i == 63 ? 0 : ~uint64_t{0} << (i + 1);
        if (*need_comma) {
          if (c == ',') {
            buffer_[block + static_cast<size_t>(i)] = ' ';  // runs are whitespace-separated
            *need_comma = false;
            pos_ = block + static_cast<size_t>(i) + 1;
            continue;
          }
          if (c == ']') {
            pos_ = block + static_cast<size_t>(i) + 1;
            return FastOutcome::kArrayEnd;
          }
        } else if (c == '{' || c == '[') {
          pos_ = block + static_cast<size_t>(i);  // the element's start: Refill() keeps it
          if (AtStopElement()) return FastOutcome::kStopped;
          depth = 1;
          continue;
        } else if (c == ']') {  // empty array, or a trailing comma
          pos_ = block + static_cast<size_t>(i) + 1;
          return FastOutcome::kArrayEnd;
        }
        pos_ = block + static_cast<size_t>(i);
        return FastOutcome::kSlow;
      }
      const uint64_t bits = brackets & from;
      if (bits == 0) break;
      const int i = __builtin_ctzll(bits);
      from = i == 63 ? 0 : ~uint64_t{0} << (i + 1);
      if ((m.open >> i) & 1) {
        ++depth;
      } else if (--depth == 0) {
        const size_t element_end = block + static_cast<size_t>(i) + 1;
        AddToRun(pos_, element_end);
        pos_ = element_end;
        *need_comma = true;
      }
    }
    if (control >= 0) return ControlByteError(block + static_cast<size_t>(control));
    // Between elements everything up to the block's end is blank: move past it, so that a refill does
    // not keep it (a long run of blanks would otherwise grow the buffer with the input).
    if (depth == 0) pos_ = std::min(block + 64, end_);
    block += 64;
  }
}

Status JsonElementStream::RunObject(JsonElementSink* sink) {
  ++pos_;  // '{'
  return RunObjectMembers(sink, /*first=*/true);
}

Result<bool> JsonElementStream::SkipBlanksOrTruncate() {
  TP_ASSIGN_OR_RETURN(bool any, SkipBlanks());
  if (!any) truncated_ = true;
  return any;
}

Result<std::optional<std::string>> JsonElementStream::ReadTopLevelKey(bool first) {
  const std::optional<std::string> none;
  TP_ASSIGN_OR_RETURN(bool any, SkipBlanksOrTruncate());
  if (!any) return none;
  if (buffer_[pos_] == '}') {
    ++pos_;
    return none;
  }
  if (!first) {
    if (buffer_[pos_] != ',') return Unexpected("',' or '}' in the top-level object");
    ++pos_;
    TP_ASSIGN_OR_RETURN(any, SkipBlanksOrTruncate());
    if (!any) return none;
  }
  if (buffer_[pos_] != '"') return Unexpected("a quoted key in the top-level object");
  size_t key_end = 0;
  TP_ASSIGN_OR_RETURN(bool complete, ScanValue(&key_end));
  if (!complete) {
    truncated_ = true;
    return none;
  }
  std::optional<std::string> key(std::in_place, buffer_.data() + pos_ + 1, key_end - pos_ - 2);
  pos_ = key_end;
  TP_ASSIGN_OR_RETURN(any, SkipBlanksOrTruncate());
  if (!any) return none;
  if (buffer_[pos_] != ':') return Unexpected("':' after a top-level key");
  ++pos_;
  TP_ASSIGN_OR_RETURN(any, SkipBlanksOrTruncate());
  if (!any) return none;
  return key;
}

Status JsonElementStream::RunObjectMembers(JsonElementSink* sink, bool first) {
  for (;; first = false) {
    TP_ASSIGN_OR_RETURN(std::optional<std::string> key, ReadTopLevelKey(first));
    if (!key) return Status::Ok();
    if (*key == "traceEvents") {
      if (buffer_[pos_] != '[') return Unexpected("an array as the value of traceEvents");
      saw_trace_events_ = true;
      TP_RETURN_IF_ERROR(RunArray(sink));
      if (truncated_ || stopped_) return Status::Ok();
      continue;
    }
    size_t value_end = 0;
    TP_ASSIGN_OR_RETURN(bool complete, ScanValue(&value_end));
    if (!complete) {
      truncated_ = true;
      return Status::Ok();
    }
    TP_RETURN_IF_ERROR(WithBlankAfter(buffer_.data() + value_end,
                                      [&] { return sink->OnTopLevelValue(*key, ElementAt(pos_, value_end)); }));
    pos_ = value_end;
  }
}

}  // namespace tuneprof

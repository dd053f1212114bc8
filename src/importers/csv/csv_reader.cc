#include "importers/csv/csv_reader.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/decimal.h"

namespace tuneprof {
namespace {

constexpr size_t kReadChunk = 1 << 16;
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

std::string_view TrimBlanks(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

bool EndsField(char c) { return c == ',' || c == '\n' || c == '\r'; }

// The first ',', LF or CR from `p` on, else `end`. Sixteen bytes at a time where SSE2 is there (every
// x86-64): the tables' cells are short, but timestamps and kernel names are not.
const char* FieldEnd(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r');
  for (; end - p >= 16; p += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i stops =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, comma), _mm_cmpeq_epi8(bytes, lf)), _mm_cmpeq_epi8(bytes, cr));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stops));
    if (mask != 0) return p + __builtin_ctz(mask);
  }
#endif
  while (p < end && !EndsField(*p)) ++p;
  return p;
}

}  // namespace

Result<CsvReader> CsvReader::Open(const std::string& path) {
  TP_ASSIGN_OR_RETURN(auto source, OpenByteSource(path));
  CsvReader reader(path, std::string(), std::move(source));
  TP_RETURN_IF_ERROR(reader.ReadHeader());
  return reader;
}

Result<CsvReader> CsvReader::FromText(std::string name, std::string text) {
  CsvReader reader(std::move(name), std::move(text), nullptr);
  TP_RETURN_IF_ERROR(reader.ReadHeader());
  return reader;
}

Status CsvReader::Fill(size_t want) {
  text_.erase(0, pos_);
  consumed_ += pos_;
  pos_ = 0;
  const size_t target = text_.size() + want;
  while (!eof_ && text_.size() < target) {
    const size_t used = text_.size();
    const size_t room = std::max(kReadChunk, target - used);
    text_.resize(used + room);
    auto got = source_->Read(text_.data() + used, room);
    if (!got.ok()) {
      text_.resize(used);
      return got.status();
    }
    text_.resize(used + *got);
    if (*got == 0) eof_ = true;
  }
  return Status::Ok();
}

Status CsvReader::ReadHeader() {
  if (!eof_) TP_RETURN_IF_ERROR(Fill(kReadChunk));
  if (std::string_view(text_).starts_with(kUtf8Bom)) pos_ = kUtf8Bom.size();
  TP_ASSIGN_OR_RETURN(bool any, ParseRecord());
  if (!any) return InvalidInput(name_ + ": empty CSV (no header row)");
  for (std::string_view field : fields_) header_.emplace_back(TrimBlanks(field));
  fields_.clear();  // views into text_ must not outlive a move of the reader (short strings relocate)
  return Status::Ok();
}

int CsvReader::Column(std::string_view column) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == column) return static_cast<int>(i);
  }
  return kNoColumn;
}

int CsvReader::AnyColumn(std::initializer_list<std::string_view> names) const {
  for (std::string_view name : names) {
    const int column = Column(name);
    if (column != kNoColumn) return column;
  }
  return kNoColumn;
}

Result<bool> CsvReader::Next() {
  for (;;) {
    TP_ASSIGN_OR_RETURN(bool any, ParseRecord());
    if (!any) return false;
    ++row_;
    const bool blank = fields_.size() == 1 && TrimBlanks(fields_[0]).empty();
    if (blank) {
      --row_;  // a blank line is not a row: Python's csv module and the producers agree
      continue;
    }
    if (fields_.size() == header_.size()) return true;
    if (dropped_rows_++ == 0) first_dropped_row_ = row_;
  }
}

std::string CsvReader::DroppedRowsWarning() const {
  if (dropped_rows_ == 0) return "";
  return name_ + ": " + std::to_string(dropped_rows_) + (dropped_rows_ == 1 ? " row" : " rows") +
         " with a cell count other than the header's " + std::to_string(header_.size()) + " dropped (first: row " +
         std::to_string(first_dropped_row_) + ")";
}

#if defined(__SSE2__)
// The common record, with neither quotes nor CRs but one before its LF, whole in the window: split on
// its commas sixteen bytes at a time. False, with nothing changed, for any other (ParseBuffered reads it).
bool CsvReader::ParseSimple() {
  const char* const base = text_.data();
  const char* const end = base + text_.size();
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r');
  const __m128i quote = _mm_set1_epi8('"');
  fields_.clear();
  const char* field = base + pos_;
  for (const char* p = field; end - p >= 16; p += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const unsigned lfs = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, lf)));
    // Only the bytes before the record's LF count.
    const unsigned in_record = lfs != 0 ? (lfs & (0u - lfs)) - 1 : 0xFFFFu;
    const unsigned crs = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, cr))) & in_record;
    const unsigned quotes = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, quote))) & in_record;
    const unsigned ending_cr = lfs != 0 ? (in_record + 1) >> 1 : 0;  // the byte just before the LF
    if (quotes != 0 || (crs & ~ending_cr) != 0) break;
    for (unsigned commas = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, comma))) & in_record;
         commas != 0; commas &= commas - 1) {
      const char* const at = p + __builtin_ctz(commas);
      fields_.emplace_back(field, static_cast<size_t>(at - field));
      field = at + 1;
    }
    if (lfs == 0) continue;
    const char* const at = p + __builtin_ctz(lfs);
    fields_.emplace_back(field, static_cast<size_t>(at - ((crs & ending_cr) != 0 ? 1 : 0) - field));
    pos_ = static_cast<size_t>(at + 1 - base);
    return true;
  }
  fields_.clear();
  return false;
}
#else
bool CsvReader::ParseSimple() { return false; }
#endif

Result<bool> CsvReader::ParseRecord() {
  if (ParseSimple()) return true;
  // A record cut by the window's end is parsed again once more is read; the read at least doubles
  // what is held, so that a record of any length costs time in proportion to its length.
  for (;;) {
    const size_t start = pos_;
    bool short_read = false;
    Result<bool> record = ParseBuffered(&short_read);
    if (!short_read) return record;
    pos_ = start;
    TP_RETURN_IF_ERROR(Fill(std::max(kReadChunk, text_.size() - start)));
  }
}

// One record from pos_: fields split on ',' outside quotes, ended by LF, CRLF or the end of text.
// Quote handling is lenient past RFC 4180 where producers are: text after a closing quote is kept.
Result<bool> CsvReader::ParseBuffered(bool* short_read) {
  fields_.clear();
  scratch_.clear();
  spans_.clear();
  const size_t n = text_.size();
  // Every test of pos_ < n goes through here: reaching the window's end decides nothing until the
  // input's end is known.
  auto more = [&]() {
    if (pos_ < n) return true;
    if (!eof_) *short_read = true;
    return false;
  };
  if (!more()) return false;
  for (;;) {
    Span span{pos_, 0, false};
    if (more() && text_[pos_] == '"') {
      // Quoted: copy into scratch_, turning "" into ".
      span = Span{scratch_.size(), 0, true};
      const size_t opened = pos_++;
      for (;;) {
        if (!more()) {
          if (*short_read) return false;
          // The record being read is the next row (the header is row 0).
          const uint64_t row = header_.empty() ? 0 : row_ + 1;
          return InvalidInput(name_ + ": row " + std::to_string(row) + ": unterminated quoted field from byte " +
                              std::to_string(consumed_ + opened));
        }
        // The text up to the next quote goes over whole (shapes such as """1024,1024""" are quoted).
        const char* const quote = static_cast<const char*>(std::memchr(text_.data() + pos_, '"', n - pos_));
        const size_t stop = quote == nullptr ? n : static_cast<size_t>(quote - text_.data());
        scratch_.append(text_, pos_, stop - pos_);
        pos_ = stop;
        if (pos_ == n) continue;  // more() above says whether the input goes on
        ++pos_;
        if (more() && text_[pos_] == '"') {
          scratch_ += '"';
          ++pos_;
        } else {
          break;
        }
      }
      while (more() && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '\r') scratch_ += text_[pos_++];
      span.size = scratch_.size() - span.begin;
    } else {
      pos_ = static_cast<size_t>(FieldEnd(text_.data() + pos_, text_.data() + n) - text_.data());
      (void)more();
      span.size = pos_ - span.begin;
    }
    if (*short_read) return false;
    spans_.push_back(span);
    if (more() && text_[pos_] == ',') {
      ++pos_;
      continue;
    }
    if (more() && text_[pos_] == '\r') ++pos_;
    if (more() && text_[pos_] == '\n') ++pos_;
    if (*short_read) return false;
    break;
  }
  for (const Span& s : spans_) {
    fields_.emplace_back(s.in_scratch ? std::string_view(scratch_).substr(s.begin, s.size)
                                      : std::string_view(text_).substr(s.begin, s.size));
  }
  return true;
}

std::string_view CsvReader::Text(int column) const {
  if (column < 0 || static_cast<size_t>(column) >= fields_.size()) return {};
  std::string_view text = TrimBlanks(fields_[column]);
  // """32,3,224,224""" unescapes to "32,3,224,224": the producer quoted text that was already quoted.
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  return text;
}

std::optional<std::string_view> CsvReader::Cell(int column) const {
  std::string_view text = Text(column);
  if (text.empty() || text == "N/A") return std::nullopt;
  return text;
}

std::string CsvReader::Where(std::string_view message) const {
  return name_ + ": row " + std::to_string(row_) + ": " + std::string(message);
}

bool CsvInt(std::optional<std::string_view> cell, int64_t* out) { return cell && ParseInt64(*cell, out); }

bool CsvDouble(std::optional<std::string_view> cell, double* out) {
  if (!cell) return false;
  std::string_view text = *cell;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool CsvMicrosToNanos(std::optional<std::string_view> cell, int64_t* out) {
  return cell && ParseMicrosToNanos(*cell, out);
}

}  // namespace tuneprof

#pragma once
// A small CSV reader for the profilers' text summaries (torch_npu / msprof CSVs). RFC 4180 records
// (quoted fields, "" escapes, CRLF or LF), plus the quirks those producers write:
//   - absolute timestamps end with a TAB inside the field ("1736408883704643.212\t", kept for Excel);
//   - shapes wrapped in triple quotes ("""32,3,224,224"""), i.e. a quoted field whose text is quoted;
//   - "N/A" and empty cells for absent values.
// Columns are found by header name, never by position: every producer version orders them differently.
// The file is streamed through a window of kReadChunk bytes (more only for a record longer than that),
// so that memory stays flat whatever the number of rows: torch_npu's kernel_details and operator_memory
// reach millions of rows.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "io/byte_source.h"

namespace tuneprof {

constexpr int kNoColumn = -1;

class CsvReader {
 public:
  // Streams `path` (gzip is undone by the byte source). Errors name the file.
  static Result<CsvReader> Open(const std::string& path);
  // Over text already in memory; `name` is used in messages.
  static Result<CsvReader> FromText(std::string name, std::string text);

  CsvReader(CsvReader&&) = default;
  CsvReader& operator=(CsvReader&&) = default;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  // The index of the first header cell equal to `column` (blanks trimmed), kNoColumn when absent.
  int Column(std::string_view column) const;
  // The first of several names a column has had across versions ("Block Dim", "Block Num").
  int AnyColumn(std::initializer_list<std::string_view> names) const;

  // Advances to the next data record; false at the end. Blank lines are skipped. A malformed record
  // (an unterminated quote) is an error naming the file and row. A record whose cell count differs
  // from the header's is skipped and counted: columns are found by name, so a missing or extra cell
  // would put every later value under the wrong name.
  Result<bool> Next();

  // Records skipped for their cell count so far, and the first of them (0 when none).
  uint64_t dropped_rows() const { return dropped_rows_; }
  uint64_t first_dropped_row() const { return first_dropped_row_; }
  // One warning for the skipped records ("" when none), for callers to pass on once per file.
  std::string DroppedRowsWarning() const;

  // 1-based number of the current data record (the header is row 0), for messages.
  uint64_t row() const { return row_; }
  // How many input bytes lie before the next record, and the input's size (for a compressed file, the
  // byte source's estimate): with row(), what a caller sizes a table by.
  uint64_t offset() const { return consumed_ + pos_; }
  uint64_t input_size() const { return source_ != nullptr ? source_->content_size_hint() : text_.size(); }
  size_t field_count() const { return fields_.size(); }
  // The field with surrounding blanks/tabs and one level of leftover quotes removed; "" when the
  // column is absent or the row is short.
  std::string_view Text(int column) const;
  // As Text, but nullopt for absent, empty and "N/A" cells.
  std::optional<std::string_view> Cell(int column) const;
  // "file: row N: message", for callers' warnings.
  std::string Where(std::string_view message) const;

 private:
  CsvReader(std::string name, std::string text, std::unique_ptr<ByteSource> source)
      : name_(std::move(name)), text_(std::move(text)), source_(std::move(source)), eof_(source_ == nullptr) {}
  Status ReadHeader();
  // One record from pos_, read further into the window when it does not end inside it.
  Result<bool> ParseRecord();
  // The common record (no quotes, no CR but before its LF) when it lies whole in the window; false else.
  bool ParseSimple();
  // One record from pos_ within the window; *short_read when it ran into the window's end before the
  // input's, in which case the record is to be parsed again with more of the input.
  Result<bool> ParseBuffered(bool* short_read);
  // Drops the bytes before pos_ and reads at least `want` more (less at the end of the input).
  Status Fill(size_t want);

  std::string name_;
  std::string text_;                    // the window: input bytes from consumed_ on
  std::unique_ptr<ByteSource> source_;  // null for text given whole
  bool eof_ = true;
  uint64_t consumed_ = 0;  // input bytes dropped from the window's front
  size_t pos_ = 0;
  uint64_t row_ = 0;
  uint64_t dropped_rows_ = 0;
  uint64_t first_dropped_row_ = 0;
  std::vector<std::string> header_;
  // Fields of the current record: views into text_ when unquoted or free of "" escapes, else into
  // scratch_ (which is rebuilt per record, so views are only valid until the next Next()).
  std::vector<std::string_view> fields_;
  std::string scratch_;
  // Where each field of the record being parsed lies, before views are taken (scratch_ may still
  // grow). Kept across records so that a row costs no allocation.
  struct Span {
    size_t begin = 0;
    size_t size = 0;
    bool in_scratch = false;
  };
  std::vector<Span> spans_;
};

// Cell text -> value helpers; all return false for absent or malformed text.
bool CsvInt(std::optional<std::string_view> cell, int64_t* out);
bool CsvDouble(std::optional<std::string_view> cell, double* out);
// Microseconds with up to nanosecond digits -> int64 ns, exactly (base/decimal.h).
bool CsvMicrosToNanos(std::optional<std::string_view> cell, int64_t* out);

}  // namespace tuneprof

#pragma once
// Streams a Chrome-trace JSON document without holding it: the top-level object's small values are
// handed over whole, the `traceEvents` array (or a bare top-level array) one element at a time. Each
// element is a view into a reusable chunk buffer that carries simdjson's padding, so the event parser
// can run simdjson On-Demand on it in place. Memory stays at one chunk plus the largest element:
// blanks between elements are skipped as they stream by, and one value larger than a limit no trace
// event comes near is an error rather than a buffer that grows with the input.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "io/byte_source.h"

namespace tuneprof {

struct JsonElement {
  const char* data = nullptr;
  size_t length = 0;
  size_t capacity = 0;  // readable bytes from data (>= length + padding)
  uint64_t offset = 0;  // byte offset of data in the decompressed content
};

// Consecutive complete events, delivered together so that the parser can run one simdjson stage 1
// over all of them. The separating commas are blanked in place: `data` is a whitespace-separated
// sequence of JSON values (simdjson's iterate_many input).
struct JsonElementRun {
  const char* data = nullptr;
  size_t length = 0;
  size_t capacity = 0;                                    // readable bytes from data (>= length + padding)
  uint64_t offset = 0;                                    // content offset of data
  const std::pair<uint32_t, uint32_t>* bounds = nullptr;  // [start, end) of each element, relative to data
  size_t count = 0;

  JsonElement element(size_t i) const {
    return JsonElement{data + bounds[i].first, bounds[i].second - bounds[i].first, capacity - bounds[i].first,
                       offset + bounds[i].first};
  }
};

class JsonElementSink {
 public:
  virtual ~JsonElementSink() = default;
  // A top-level key other than traceEvents, with its value's raw text.
  virtual Status OnTopLevelValue(std::string_view key, const JsonElement& value) = 0;
  virtual Status OnEvents(const JsonElementRun& run) = 0;
};

class JsonElementStream {
 public:
  static constexpr size_t kPadding = 64;  // >= SIMDJSON_PADDING
  // Trace events are hundreds of bytes, top-level values (deviceProperties, distributedInfo) a few
  // kilobytes; a value of 64 MiB is a damaged file or a decompression bomb, not a trace.
  static constexpr size_t kMaxValueBytes = size_t{64} << 20;

  explicit JsonElementStream(ByteSource* source, size_t chunk_bytes = 4 << 20, size_t max_value_bytes = kMaxValueBytes);

  Status Run(JsonElementSink* sink);

  // Streams the rest of a document from one element of its event array on: the source starts at that
  // element, `offset` bytes into the content, and `top_level_is_array` says whether the array is the
  // document (else it is the top-level object's traceEvents, whose remaining keys follow it). What the
  // sink sees is what Run() would hand it from that element on, when the offset is an element's start.
  Status RunFromElement(JsonElementSink* sink, uint64_t offset, bool top_level_is_array);

  // Makes Run() stop before the event-array element that starts at content byte `offset`, having handed
  // over every element before it; stopped_at_element() then says so. When no element starts there (the
  // offset falls inside one, or outside the array) the stream reads on to the end as usual.
  void StopAtElement(uint64_t offset) { stop_at_ = offset; }
  // The same for an offset not known yet but at or after `not_before`: at the first element from there
  // on, `found()` gives it (waiting for it if need be), or kNoStop where there is none.
  void StopAtElementFoundLater(uint64_t not_before, std::function<uint64_t()> found) {
    stop_at_ = not_before;
    stop_found_later_ = std::move(found);
  }
  static constexpr uint64_t kNoStop = static_cast<uint64_t>(-1);
  bool stopped_at_element() const { return stopped_; }

  // The input ended before the document did; every complete element was delivered.
  bool truncated() const { return truncated_; }
  uint64_t bytes_read() const { return base_offset_ + end_; }
  bool top_level_is_array() const { return top_level_is_array_; }
  // The top-level object had a traceEvents array (possibly empty).
  bool saw_trace_events() const { return saw_trace_events_; }

 private:
  // Reads more input, keeping bytes from `keep_from` on. Returns false at end of input; an error when
  // the bytes kept from `keep_from` (one value being scanned) exceed max_value_bytes_.
  Result<bool> Refill(size_t keep_from);
  // Skips blanks; false at end of input. Blanks are dropped as they are read: a pending run is handed
  // to the sink first, so that no run of blanks, however long, is kept in the buffer.
  Result<bool> SkipBlanks();
  // Finds the end of the JSON value that starts at pos_; sets *end (exclusive). False when the input
  // ended inside the value. May move the buffer: pos_ stays the value's start.
  Result<bool> ScanValue(size_t* end);
  Result<bool> ScanScalar(size_t* end);
  Result<bool> ScanString(size_t* end);
  // `opened`: the '[' is already behind (a stream started at an element).
  Status RunArray(JsonElementSink* sink, bool opened = false);
  Status ScanArray(JsonElementSink* sink, bool opened);
  // True when the element starting at pos_ is where StopAtElement() asked to stop.
  bool AtStopElement();
  enum class FastOutcome { kArrayEnd, kTruncated, kSlow, kStopped };
  Result<FastOutcome> ScanObjectsFast(JsonElementSink* sink, bool* need_comma);
  Result<bool> ScanOneElement(JsonElementSink* sink, bool need_comma);
  Status MaybeFlushRun(JsonElementSink* sink);
  void AddToRun(size_t begin, size_t end);
  Status FlushRun(JsonElementSink* sink);
  static constexpr size_t kMaxRunEvents = 1 << 16;
  Status RunObject(JsonElementSink* sink);
  Status RunObjectMembers(JsonElementSink* sink, bool first);
  // SkipBlanks, noting a truncated input where none is left.
  Result<bool> SkipBlanksOrTruncate();
  // The next top-level member's key, pos_ then at its value; nothing at the object's end, or where the
  // input ends first (truncated_ then set).
  Result<std::optional<std::string>> ReadTopLevelKey(bool first);
  Status EndOfDocument();
  Status Unexpected(const char* expected) const;
  Status ControlByteError(size_t at) const;  // `at`: a buffer index
  JsonElement ElementAt(size_t begin, size_t end) const;

  ByteSource* source_;
  JsonElementSink* sink_ = nullptr;  // set by Run(), so that skipping blanks can hand the run over
  std::vector<char> buffer_;
  size_t chunk_bytes_;
  size_t max_value_bytes_;
  size_t pos_ = 0;            // next unread byte
  size_t end_ = 0;            // end of valid bytes
  uint64_t base_offset_ = 0;  // content offset of buffer_[0]
  bool eof_ = false;
  bool truncated_ = false;
  bool top_level_is_array_ = false;
  bool saw_trace_events_ = false;
  uint64_t stop_at_ = kNoStop;
  std::function<uint64_t()> stop_found_later_;
  bool stopped_ = false;
  // The run of complete events not yet handed to the sink; Refill() keeps it in the buffer.
  static constexpr size_t kNoRun = static_cast<size_t>(-1);
  size_t run_begin_ = kNoRun;
  std::vector<std::pair<uint32_t, uint32_t>> run_bounds_;
};

}  // namespace tuneprof

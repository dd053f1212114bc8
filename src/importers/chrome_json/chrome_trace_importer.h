#pragma once
// Imports Chrome-trace JSON (Kineto, legacy autograd profiler, torch_npu trace_view.json) into a Trace.
#include <string_view>

#include "base/status.h"
#include "io/byte_source.h"
#include "model/trace.h"

namespace tuneprof {

constexpr size_t kDefaultChunkBytes = 4 << 20;
// Uncompressed traces from this size on are read on two threads while a core is spare.
constexpr uint64_t kMinSplitBytes = uint64_t{64} << 20;

// How an import used a second thread, for tests and benchmarks that must know which path ran.
enum class SplitOutcome {
  kOneThread,  // no split tried, or the first thread found no element at the split and read on alone
  kMerged,     // the second thread's part was merged into the first's
  kReadAgain,  // the second thread's part could not be merged exactly and was read again on the first
};

struct ChromeImportOptions {
  static constexpr uint64_t kSplitAuto = static_cast<uint64_t>(-1);
  static constexpr uint64_t kSplitNever = static_cast<uint64_t>(-2);
  // The read size (tests and fuzzers make it tiny to hit every buffer boundary).
  size_t chunk_bytes = kDefaultChunkBytes;
  // Where a second thread may take over the rest of the event array, building its part of the model
  // beside the first thread's and merged into it afterwards (the same model as one thread builds).
  // kSplitAuto: from the middle of an uncompressed trace of kMinSplitBytes or more, while fewer imports
  // than cores run; kSplitNever: one thread; else the content offset from which to look for an
  // element's start (tests).
  uint64_t split_from = kSplitAuto;
  SplitOutcome* outcome = nullptr;  // set when not null
};

// True when the first bytes look like a Chrome trace: a JSON object or array after optional blanks/BOM.
bool SniffChromeTrace(std::string_view head);

// Streams `source` (never holding the whole document) into a Trace. Fatal problems (not JSON, invalid
// UTF-8, an event that is no object) return an error naming the file and byte offset; an event field of
// the wrong JSON type skips its event, counted in one warning per field; a cut-off file returns every
// complete event with a warning in the metadata.
Result<Trace> ImportChromeTrace(ByteSource* source, const ChromeImportOptions& options);
// With the default options but the read size.
Result<Trace> ImportChromeTrace(ByteSource* source, size_t chunk_bytes = kDefaultChunkBytes);

}  // namespace tuneprof

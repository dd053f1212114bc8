#pragma once
// Imports Chrome-trace JSON (Kineto, legacy autograd profiler, torch_npu trace_view.json) into a Trace.
#include <string_view>

#include "base/status.h"
#include "io/byte_source.h"
#include "model/trace.h"

namespace tuneprof {

constexpr size_t kDefaultChunkBytes = 4 << 20;

// True when the first bytes look like a Chrome trace: a JSON object or array after optional blanks/BOM.
bool SniffChromeTrace(std::string_view head);

// Streams `source` (never holding the whole document) into a Trace. Fatal problems (not JSON, wrong
// types, invalid UTF-8) return an error naming the file and byte offset; a cut-off file returns every
// complete event with a warning in the metadata.
// `chunk_bytes` is the read size (tests and fuzzers make it tiny to hit every buffer boundary).
Result<Trace> ImportChromeTrace(ByteSource* source, size_t chunk_bytes = kDefaultChunkBytes);

}  // namespace tuneprof

// libFuzzer target: arbitrary bytes through the Chrome-trace import path that `tuneprof info` takes
// after sniffing. Byte 0 picks how the input is read so that every buffer refill boundary gets hit;
// the rest is the document. The document is then imported again in one read: the outcome must not
// depend on where the reads fell, so a difference is reported as a crash. It is imported a third time
// on two threads, split at a point byte 0 also picks: that model must be the one-thread model, whole.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "importers/chrome_json/chrome_trace_importer.h"
#include "io/memory_source.h"
#include "model/trace_dump.h"

namespace tuneprof {
namespace {

// What an import produced, in a form two runs can be compared by.
std::string Outcome(const Result<Trace>& result) {
  if (!result.ok()) {
    return "error " + std::to_string(static_cast<int>(result.status().code())) + ": " + result.status().message();
  }
  const TraceMetadata& meta = result->metadata();
  std::string out =
      "ok entries=" + std::to_string(meta.entry_count) + " events=" + std::to_string(result->events().size()) +
      " flows=" + std::to_string(result->flow_points().size()) +
      " counters=" + std::to_string(result->counter_samples().size()) +
      " content_bytes=" + std::to_string(meta.content_bytes) + " truncated=" + std::to_string(meta.truncated) +
      " format=" + std::to_string(static_cast<int>(meta.format));
  for (const std::string& warning : meta.warnings) out += "\n  warning: " + warning;
  return out;
}

}  // namespace
}  // namespace tuneprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const std::string_view document(reinterpret_cast<const char*>(data) + 1, size - 1);
  (void)SniffChromeTrace(document.substr(0, 64));

  // 0x00..0xEF: chunks of 1..240 bytes, so the buffer grows and shifts all the time. 0xF0..0xFF: the
  // real chunk size with short reads of 1..16 bytes, so elements straddle many partial refills.
  size_t chunk_bytes = kDefaultChunkBytes;
  size_t max_read = 0;
  if (selector < 0xF0) {
    chunk_bytes = static_cast<size_t>(selector) + 1;
  } else {
    max_read = static_cast<size_t>(selector - 0xEF);
  }
  MemorySource chunked("fuzz.json", document, max_read);
  const std::string got = Outcome(ImportChromeTrace(&chunked, chunk_bytes));

  MemorySource whole("fuzz.json", document);
  ChromeImportOptions one_read;
  one_read.chunk_bytes = document.size() + 1;
  one_read.split_from = ChromeImportOptions::kSplitNever;
  const Result<Trace> whole_trace = ImportChromeTrace(&whole, one_read);
  const std::string want = Outcome(whole_trace);
  if (got != want) {
    std::fprintf(stderr,
                 "chrome_trace_fuzzer: outcome depends on read size (chunk %zu, max read %zu)\n"
                 "--- chunked:\n%s\n--- one read:\n%s\n",
                 chunk_bytes, max_read, got.c_str(), want.c_str());
    std::abort();
  }

  MemorySource split_source("fuzz.json", document, max_read);
  ChromeImportOptions split;
  split.chunk_bytes = chunk_bytes;
  split.split_from = document.size() * selector / 256;
  const Result<Trace> split_trace = ImportChromeTrace(&split_source, split);
  const auto model = [](const Result<Trace>& trace) {
    return trace.ok() ? DumpTrace(trace.value()) : "error: " + trace.status().message();
  };
  if (model(split_trace) != model(whole_trace)) {
    std::fprintf(stderr, "chrome_trace_fuzzer: two threads split from byte %llu build another model\n",
                 static_cast<unsigned long long>(split.split_from));
    std::abort();
  }
  return 0;
}

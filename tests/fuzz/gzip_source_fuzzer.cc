// libFuzzer target: arbitrary bytes as a file on disk through OpenByteSource (gzip when they start
// with its magic) and the Chrome-trace importer. The gzip reader is only reachable through a path, so
// each input is written to a scratch file first. Draining the source with tiny and with large reads
// must give the same bytes and the same verdict; so must zlib, igzip and a read-ahead thread.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "importers/chrome_json/chrome_trace_importer.h"
#include "io/byte_source.h"
#include "io/gzip_source.h"
#include "io/memory_source.h"
#include "io/read_ahead_source.h"
#include "scratch_file.h"

namespace tuneprof {
namespace {

const std::string& ScratchPath() { return fuzz::ScratchPath("gzip_fuzzer", ".gz"); }

// The whole decompressed content read `capacity` bytes at a time plus the cut-off flag, or the error.
std::string Drain(const std::string& path, size_t capacity) {
  auto source = OpenByteSource(path);
  if (!source.ok()) return "open error: " + source.status().message();
  std::string content;
  std::vector<char> buffer(capacity);
  for (;;) {
    Result<size_t> n = (*source)->Read(buffer.data(), buffer.size());
    // What was inflated before the error depends on the read size (a failing Read returns none of it).
    if (!n.ok()) return "read error: " + n.status().message();
    if (*n == 0) break;
    if (*n > capacity) std::abort();
    content.append(buffer.data(), *n);
  }
  return content + ((*source)->truncated() ? "\n[truncated]" : "\n[complete]");
}

// The same through one inflater over the bytes in memory, read ahead on a thread in small chunks or not.
std::string DrainWith(std::string_view bytes, GzipInflater inflater, bool ahead) {
  std::unique_ptr<ByteSource> source = MakeGzipSource(std::make_unique<MemorySource>("f.gz", bytes), 4096, inflater);
  if (ahead) source = ReadAhead(std::move(source), 97, 2);
  std::string content;
  std::vector<char> buffer(1000);
  for (;;) {
    Result<size_t> n = source->Read(buffer.data(), buffer.size());
    if (!n.ok()) return "read error: " + n.status().message();
    if (*n == 0) break;
    content.append(buffer.data(), *n);
  }
  return content + (source->truncated() ? "\n[truncated]" : "\n[complete]");
}

void ExpectSameInflaters(const uint8_t* data, size_t size) {
  if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) return;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string zlib = DrainWith(bytes, GzipInflater::kZlib, false);
  for (const bool ahead : {false, true}) {
    if (DrainWith(bytes, GzipInflater::kIsal, ahead) != zlib) {
      std::fprintf(stderr, "gzip_source_fuzzer: igzip%s reads differently from zlib\n", ahead ? " read ahead" : "");
      std::abort();
    }
  }
}

}  // namespace
}  // namespace tuneprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  if (!fuzz::WriteScratch(ScratchPath(), data, size)) {
    std::perror("gzip_source_fuzzer: cannot write the scratch file");
    std::abort();
  }
  const std::string& path = ScratchPath();

  // Small reads stop the inflater at every output boundary; large ones let it run a whole buffer.
  const size_t small = size % 13 + 1;
  const std::string a = Drain(path, small);
  const std::string b = Drain(path, 1 << 16);
  if (a != b) {
    std::fprintf(stderr,
                 "gzip_source_fuzzer: content differs between %zu-byte and 65536-byte reads\n"
                 "--- small reads (%zu bytes), ending:\n%s\n--- large reads (%zu bytes), ending:\n%s\n",
                 small, a.size(), a.substr(a.size() > 300 ? a.size() - 300 : 0).c_str(), b.size(),
                 b.substr(b.size() > 300 ? b.size() - 300 : 0).c_str());
    std::abort();
  }

  ExpectSameInflaters(data, size);

  // And on into the importer, as `tuneprof info` does once the head sniffs as JSON.
  auto head = ReadHead(path, 64);
  if (head.ok() && SniffChromeTrace(*head)) {
    auto source = OpenByteSource(path);
    if (source.ok()) (void)ImportChromeTrace(source->get(), size % 251 + 1);
  }
  return 0;
}

// This machine's ceilings for reading a trace, each on one core from memory:
// - simdjson's stage 1 alone (the structural index every parse starts with) over FILE.json, in 1 MiB
//   slices as the importer hands it runs of events;
// - inflating FILE.json.gz alone, per library: zlib and ISA-L's igzip streaming into a reused 4 MiB
//   window (as the importer does), libdeflate (whole buffers only) into one buffer of the inflated size.
// Prints one line per figure: seconds (median of the runs) and MB/s of JSON.
// Usage: ceilings_benchmark FILE.json FILE.json.gz [RUNS]
#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#ifdef TUNEPROF_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif
#ifdef TUNEPROF_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

namespace {

constexpr size_t kWindow = 4 << 20;

// Inflated bytes, or 0 on an error.
size_t InflateZlib(const std::string& in, std::vector<char>& out) {
  z_stream s{};
  inflateInit2(&s, 16 + MAX_WBITS);
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  size_t total = 0;
  for (;;) {
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = static_cast<uInt>(kWindow);
    const int rc = inflate(&s, Z_NO_FLUSH);
    total += kWindow - s.avail_out;
    if (rc == Z_STREAM_END) {
      if (s.avail_in == 0) break;
      inflateReset(&s);
      continue;
    }
    if (rc != Z_OK) {
      total = 0;
      break;
    }
  }
  inflateEnd(&s);
  return total;
}

#ifdef TUNEPROF_HAVE_ISAL
size_t InflateIsal(const std::string& in, std::vector<char>& out) {
  inflate_state s;
  isal_inflate_init(&s);
  s.crc_flag = ISAL_GZIP;
  s.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uint32_t>(in.size());
  size_t total = 0;
  for (;;) {
    s.next_out = reinterpret_cast<uint8_t*>(out.data());
    s.avail_out = static_cast<uint32_t>(kWindow);
    if (isal_inflate(&s) != ISAL_DECOMP_OK) return 0;
    total += kWindow - s.avail_out;
    if (s.block_state == ISAL_BLOCK_FINISH) {
      if (s.avail_in == 0) break;
      const uint8_t* next = s.next_in;
      const uint32_t left = s.avail_in;
      isal_inflate_reset(&s);
      s.crc_flag = ISAL_GZIP;
      s.next_in = const_cast<uint8_t*>(next);
      s.avail_in = left;
    }
  }
  return total;
}
#endif

#ifdef TUNEPROF_HAVE_LIBDEFLATE
size_t InflateLibdeflate(const std::string& in, std::vector<char>& whole) {
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  size_t total = 0;
  size_t in_pos = 0;
  while (in_pos < in.size()) {
    size_t used = 0;
    size_t made = 0;
    const auto rc = libdeflate_gzip_decompress_ex(d, in.data() + in_pos, in.size() - in_pos, whole.data() + total,
                                                  whole.size() - total, &used, &made);
    if (rc != LIBDEFLATE_SUCCESS) {
      total = 0;
      break;
    }
    in_pos += used;
    total += made;
  }
  libdeflate_free_decompressor(d);
  return total;
}
#endif

// Stage 1 over the document in slices of kSlice bytes (a slice may cut a string; stage 1 does the same
// work either way).
size_t Stage1(const std::string& json, simdjson::ondemand::parser& parser, std::vector<char>& slice) {
  constexpr size_t kSlice = 1 << 20;
  size_t total = 0;
  for (size_t at = 0; at < json.size(); at += kSlice) {
    const size_t n = std::min(kSlice, json.size() - at);
    std::memcpy(slice.data(), json.data() + at, n);
    auto doc = parser.iterate(slice.data(), n, slice.size());
    (void)doc.error();
    total += n;
  }
  return total;
}

double MedianSeconds(const std::function<size_t()>& run, int runs, size_t* bytes) {
  std::vector<double> seconds;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    *bytes = run();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

void Report(const char* name, const std::function<size_t()>& run, int runs) {
  size_t bytes = 0;
  const double s = MedianSeconds(run, runs, &bytes);
  std::printf("%-18s %8.3f s  %7.0f MB/s of JSON  (%zu bytes, median of %d)\n", name, s, bytes / s / 1e6, bytes, runs);
}

}  // namespace

std::string ReadFile(const char* path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: ceilings_benchmark FILE.json FILE.json.gz [RUNS]\n");
    return 2;
  }
  const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  {
    const std::string json = ReadFile(argv[1]);
    simdjson::ondemand::parser parser(1 << 20);
    std::vector<char> slice((1 << 20) + simdjson::SIMDJSON_PADDING);
    Report(
        "simdjson stage 1", [&] { return Stage1(json, parser, slice); }, runs);
  }
  const std::string in = ReadFile(argv[2]);
  std::vector<char> window(kWindow);
  Report(
      "inflate zlib", [&] { return InflateZlib(in, window); }, runs);
#ifdef TUNEPROF_HAVE_ISAL
  Report(
      "inflate isa-l", [&] { return InflateIsal(in, window); }, runs);
#endif
#ifdef TUNEPROF_HAVE_LIBDEFLATE
  {
    // libdeflate needs room for the whole output; sized from zlib's count, outside the timing.
    std::vector<char> whole(InflateZlib(in, window));
    Report(
        "inflate libdeflate", [&] { return InflateLibdeflate(in, whole); }, runs);
  }
#endif
  return 0;
}

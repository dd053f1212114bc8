#pragma once
// What the structure-aware fuzz targets share: hostile JSON and CSV values drawn from the fuzz bytes, a
// scratch directory per process, and the analyses every command runs on an imported input. The first
// choice of every pick is the ordinary one, so that short inputs (and a provider run dry, which returns
// zeros) still make well-formed profiles and the hostile parts come from the bytes that follow.
#include <fuzzer/FuzzedDataProvider.h>
#include <sanitizer/common_interface_defs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/hta/hta_breakdown.h"
#include "analysis/hta/hta_idle_time.h"
#include "analysis/hta/hta_kernels.h"
#include "analysis/hta/hta_launches.h"
#include "analysis/hta/memory_hta_bw.h"
#include "pipeline/run_analyses.h"
#include "pipeline/summary_file.h"

namespace tuneprof::fuzz {

// Reports a broken invariant and stops, as a crash: on stderr and on the sanitizers' report stream,
// which libFuzzer keeps open when -close_fd_mask=2 closes stderr.
[[noreturn]] inline void Fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  __sanitizer_report_error_summary(message.c_str());
  std::abort();
}

// A scratch directory per process (its name carries the pid, so parallel fuzzers never share it),
// removed with everything in it at exit.
inline const std::filesystem::path& ScratchDir(const char* name) {
  static const std::filesystem::path* dir = [&] {
    auto* d = new std::filesystem::path(std::string("/tmp/tuneprof_") + name + "." + std::to_string(::getpid()));
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
    });
    return d;
  }();
  return *dir;
}

// Writes `text` to `path` whole; aborts when it cannot (nothing would be tested).
inline void WriteText(const std::filesystem::path& path, std::string_view text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  const bool written =
      file != nullptr && (text.empty() || std::fwrite(text.data(), 1, text.size(), file) == text.size());
  if (file == nullptr || std::fclose(file) != 0 || !written) Fail("fuzz: cannot write " + path.string());
}

// One of `options`, the first when the bytes have run out.
inline std::string_view Pick(FuzzedDataProvider& fdp, std::initializer_list<std::string_view> options) {
  return *(options.begin() + fdp.ConsumeIntegralInRange<size_t>(0, options.size() - 1));
}

// Up to `max` characters of text from the bytes, valid UTF-8 (a reader refuses a whole document over
// one invalid sequence, which would stop the input before its structure): bytes past ASCII become one of
// a few multi-byte characters, a right-to-left override among them.
inline std::string Text(FuzzedDataProvider& fdp, size_t max) {
  static constexpr std::string_view kWide[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x80\xae"};
  std::string out;
  for (unsigned char c : fdp.ConsumeRandomLengthString(max)) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += kWide[c % std::size(kWide)];
    }
  }
  return out;
}

// A JSON string literal of `text`, escaped as JSON requires.
inline std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Number text at the edges of what a reader holds: int64 and uint64 limits and past them, huge and tiny
// doubles, negative zero, long fractions.
inline std::string HostileNumberText(FuzzedDataProvider& fdp) {
  return std::string(Pick(fdp, {"0",
                                "-1",
                                "9223372036854775807",
                                "-9223372036854775808",
                                "18446744073709551615",
                                "18446744073709551616",
                                "123456789012345678901234567890",
                                "1e308",
                                "-1e308",
                                "1.7976931348623157e308",
                                "4.9e-324",
                                "-0",
                                "-0.0",
                                "0.5",
                                "1e19",
                                "-1e19",
                                "9.223372036854775807e18",
                                "1736408883704643.2125",
                                "0.0000000000000000000000001",
                                "2147483648",
                                "-2147483649"}));
}

// A number near `typical`: itself, scaled, negated or at an edge.
inline std::string NumberNear(FuzzedDataProvider& fdp, int64_t typical) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:
      return std::to_string(typical);
    case 1:
      return std::to_string(typical) + "." + std::to_string(fdp.ConsumeIntegralInRange<int>(0, 999));
    case 2:
      return std::to_string(-typical);
    case 3:
      return std::to_string(fdp.ConsumeIntegral<int16_t>());
    case 4:
      return std::to_string(fdp.ConsumeIntegral<int64_t>());
    default:
      return HostileNumberText(fdp);
  }
}

// Any JSON value; `depth` bounds the nesting of arrays and objects.
inline std::string AnyJson(FuzzedDataProvider& fdp, int depth) {
  const int kind = fdp.ConsumeIntegralInRange<int>(0, depth > 0 ? 9 : 7);
  switch (kind) {
    case 0:
      return std::to_string(fdp.ConsumeIntegralInRange<int>(0, 100));
    case 1:
      return HostileNumberText(fdp);
    case 2:
      return Quote(HostileNumberText(fdp));
    case 3:
      return Quote(Pick(fdp, {"NaN", "nan", "inf", "-Infinity", "", " 12", "12 ", "1,5", "0x10", "1e", "--1", "+7",
                              "12.5.3", "\xe2\x80\xae", "ProfilerStep#", "a\nb"}));
    case 4:
      return Pick(fdp, {"null", "true", "false"}).data();
    case 5:
      return Quote(Text(fdp, 24));
    case 6:
      return "[]";
    case 7:
      return "{}";
    case 8: {
      std::string out = "[";
      const int n = fdp.ConsumeIntegralInRange<int>(0, 4);
      for (int i = 0; i < n; ++i) out += (i ? "," : "") + AnyJson(fdp, depth - 1);
      return out + "]";
    }
    default: {
      std::string out = "{";
      const int n = fdp.ConsumeIntegralInRange<int>(0, 4);
      for (int i = 0; i < n; ++i)
        out += std::string(i ? "," : "") + Quote(Text(fdp, 8)) + ":" + AnyJson(fdp, depth - 1);
      return out + "}";
    }
  }
}

// Arrays nested `levels` deep: past a parser's depth limit when `levels` is large.
inline std::string DeepJson(size_t levels) { return std::string(levels, '[') + "1" + std::string(levels, ']'); }

// Which of `variants` hostile forms a value of the input takes: 0, its ordinary form, four times in
// `variants + 4`; otherwise 1 to `variants`.
inline int HostileVariant(FuzzedDataProvider& fdp, int variants) {
  const int pick = fdp.ConsumeIntegralInRange<int>(0, variants + 3);
  return pick < 4 ? 0 : pick - 3;
}

// How often a field takes another type than its own, set per input (SetTypeHostility). A reader may
// refuse a whole document over one ill-typed field, and then nothing behind the reader runs: most
// inputs keep every field's type and vary only its value.
inline int type_hostility = 0;  // 0 never, 1 one field in 64, 2 one in two

inline void SetTypeHostility(FuzzedDataProvider& fdp) {
  const int pick = fdp.ConsumeIntegralInRange<int>(0, 3);
  type_hostility = pick < 2 ? 0 : pick - 1;
}

// A JSON value for a field whose ordinary value is `typical` (already JSON text): that, or (as often as
// the input's type hostility says) any type at all.
inline std::string FieldJson(FuzzedDataProvider& fdp, const std::string& typical) {
  if (type_hostility == 0) return typical;
  if (type_hostility == 1 && fdp.ConsumeIntegralInRange<int>(0, 63) != 0) return typical;
  switch (HostileVariant(fdp, 4)) {
    case 0:
      return typical;
    case 1:
      return Quote(typical.size() > 1 && typical.front() == '"' ? typical.substr(1, typical.size() - 2) : typical);
    case 2:
      return HostileNumberText(fdp);
    default:
      return AnyJson(fdp, 2);
  }
}

// Runs what the commands run on `path` (a trace file, rank directory or summary): every analysis of
// AnalyzeRun (compare, export, the Python module), HTA's (profile --semantics hta, memory --json) and
// the summary `summarize` writes, which must read back as it was written. Errors are fine: a hostile
// input may be refused; a summary that cannot be read back is not.
inline void RunEveryAnalysis(const std::string& path) {
  const AnalysisFlags flags;
  Result<AnalyzedRun> run = AnalyzeRun({path}, flags);
  if (run.ok()) {
    const std::span<const Trace> traces(run->traces);
    (void)ComputeHtaBreakdown(traces);
    (void)ComputeHtaKernelBreakdown(traces, kHtaDefaultNumKernels);
    (void)ComputeHtaIdleTime(traces);
    (void)ComputeHtaLaunches(traces);
    (void)ComputeHtaMemoryBw(traces);
  }
  Result<SummaryFile> summary = SummarizeRun(path, flags);
  if (!summary.ok()) return;
  const std::string bytes = EncodeSummaryFile(*summary);
  Result<SummaryFile> back = DecodeSummaryFile(bytes, "fuzz.tps", summary->profiles.get());
  if (!back.ok()) Fail("fuzz: a summary does not read back: " + back.status().message());
  back->profiles = summary->profiles;
  if (EncodeSummaryFile(*back) != bytes) Fail("fuzz: a summary reads back as another");
}

}  // namespace tuneprof::fuzz

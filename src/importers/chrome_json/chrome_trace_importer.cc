#include "importers/chrome_json/chrome_trace_importer.h"

#include <cpuid.h>

#include "io/gzip_source.h"

namespace tuneprof {
namespace chrome_json {
namespace haswell {
Result<Trace> ImportChromeTraceImpl(ByteSource* source, const ChromeImportOptions& options);
}
namespace generic {
Result<Trace> ImportChromeTraceImpl(ByteSource* source, const ChromeImportOptions& options);
}
}  // namespace chrome_json

namespace {

// clang's __builtin_cpu_supports does not know "abm"/"lzcnt"; ask CPUID (leaf 0x80000001, ECX bit 5).
bool HasLzcnt() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 5)) != 0;
}

}  // namespace

bool SniffChromeTrace(std::string_view head) {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  size_t i = head.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && (head[i] == '{' || head[i] == '[');
}

Result<Trace> ImportChromeTrace(ByteSource* source, size_t chunk_bytes) {
  ChromeImportOptions options;
  options.chunk_bytes = chunk_bytes;
  return ImportChromeTrace(source, options);
}

Result<Trace> ImportChromeTrace(ByteSource* source, const ChromeImportOptions& options) {
  // The same checks simdjson's own runtime dispatch makes for its "haswell" kernel.
  static const bool kHaswell = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                               __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul") && HasLzcnt();
  Result<Trace> trace = kHaswell ? chrome_json::haswell::ImportChromeTraceImpl(source, options)
                                 : chrome_json::generic::ImportChromeTraceImpl(source, options);
  if (trace.ok()) return trace;
  return PreferGzipDamage(*source, trace.status());
}

}  // namespace tuneprof

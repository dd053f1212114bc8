#include "pipeline/diagnostics.h"

#include <fmt/format.h>

#include <cstdio>

#include "base/text_escape.h"

namespace tuneprof {

std::string ErrorLine(std::string_view message) { return fmt::format("tuneprof: error: {}", EscapeText(message)); }

void PrintError(std::string_view message) { fmt::print(stderr, "{}\n", ErrorLine(message)); }

void PrintWarning(std::string_view message) { fmt::print(stderr, "tuneprof: warning: {}\n", EscapeText(message)); }

std::vector<std::string> InputWarnings(const TraceMetadata& meta) {
  std::vector<std::string> warnings;
  if (meta.truncated) {
    warnings.push_back(
        fmt::format("{}: trace is cut off; using the {} complete events it holds", meta.path, meta.entry_count));
  } else if (meta.has_trace_events_array && meta.entry_count == 0) {
    warnings.push_back(
        fmt::format("{}: the trace holds no events (its traceEvents array is empty); every figure below is empty, "
                    "profile a few steps of the workload",
                    meta.path));
  }
  return warnings;
}

void WarnAboutInputs(const std::vector<Trace>& traces) {
  for (const Trace& trace : traces) {
    for (const std::string& warning : InputWarnings(trace.metadata())) PrintWarning(warning);
  }
}

}  // namespace tuneprof

#pragma once
// Everything the CLI says on stderr, in one form: "tuneprof: error: ..." or "tuneprof: warning: ...",
// one line each, with every control character escaped (base/text_escape.h): messages carry paths and
// names from the trace, and a line break or an escape sequence in one must not forge or hide a line.
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

// The error line as printed (without its newline); the Python module raises it.
std::string ErrorLine(std::string_view message);
void PrintError(std::string_view message);
void PrintWarning(std::string_view message);

// What a reader should know about an imported input before trusting its report: a cut-off trace (read as
// far as it goes) or a trace whose traceEvents array is empty.
std::vector<std::string> InputWarnings(const TraceMetadata& meta);
void WarnAboutInputs(const std::vector<Trace>& traces);

}  // namespace tuneprof

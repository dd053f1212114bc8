#pragma once
// Everything the CLI says on stderr, in one form: "tuneprof: error: ..." or "tuneprof: warning: ...",
// one line each, with every control character escaped (base/text_escape.h): messages carry paths and
// names from the trace, and a line break or an escape sequence in one must not forge or hide a line.
#include <string>
#include <string_view>
#include <vector>

#include "analysis/comm/comm_cross_rank.h"
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

// A run given only some members of a process group (a partial copy of the job's ranks): the waits for the
// missing members count as transfer and a straggler can only be named among the members present. Prints
// one warning per such group (three at most, then how many more) and appends them to `warnings`.
void WarnAboutMissingGroupMembers(const CommAnalysis& comm, std::vector<std::string>* warnings);

}  // namespace tuneprof

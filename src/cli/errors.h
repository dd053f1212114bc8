#pragma once
// How a command ends on a failed Status: its one-line error on stderr (pipeline/diagnostics.h) and the
// exit code it maps to.
#include "base/status.h"

namespace tuneprof::cli {

// Prints the error and returns its exit code: kExitUsage for kUsage, else kExitBadInput.
int ReportError(const Status& status);

// Makes a failed allocation, on any thread, end the process with one error line and exit code 1 rather
// than an abort: a memory limit (ulimit -v, a container's, the Python capture helper's) is an expected
// end of a run too large for it. So does any other exception nothing caught (a thread the system would
// not start under the same limit).
void InstallLastResortHandlers();

}  // namespace tuneprof::cli

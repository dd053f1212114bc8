#pragma once
// How a command ends on a failed Status: its one-line error on stderr (pipeline/diagnostics.h) and the
// exit code it maps to.
#include "base/status.h"

namespace tuneprof::cli {

// Prints the error and returns its exit code: kExitUsage for kUsage, else kExitBadInput.
int ReportError(const Status& status);

}  // namespace tuneprof::cli

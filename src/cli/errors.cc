#include "cli/errors.h"

#include "cli/commands.h"
#include "pipeline/diagnostics.h"

namespace tuneprof::cli {

int ReportError(const Status& status) {
  PrintError(status.message());
  return status.code() == StatusCode::kUsage ? kExitUsage : kExitBadInput;
}

}  // namespace tuneprof::cli

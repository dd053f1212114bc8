#include "cli/errors.h"

#include "cli/commands.h"
#include "cli/json_output.h"
#include "pipeline/diagnostics.h"

namespace tuneprof::cli {

int ReportError(const Status& status) {
  if (OutputCapture* capture = OutputCapture::Current()) capture->error() = status.message();
  PrintError(status.message());
  return status.code() == StatusCode::kUsage ? kExitUsage : kExitBadInput;
}

}  // namespace tuneprof::cli

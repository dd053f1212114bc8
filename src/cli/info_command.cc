#include <fmt/format.h>

#include <cstdio>

#include "analysis/breakdown/trace_summary.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/info_run.h"
#include "report/console/info_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

namespace {

// Each rank summarized on all cores with its trace dropped at once (SummarizeRunTraces), rendered.
Result<std::string> InfoOutput(const InfoOptions& options) {
  std::vector<std::string> warnings;
  TP_ASSIGN_OR_RETURN(const std::vector<TraceSummary> summaries, SummarizeRunTraces(options.paths, &warnings));
  return options.json ? WithWarnings(RenderInfoJson(summaries), warnings) : RenderInfoText(summaries);
}

}  // namespace

int RunInfo(const InfoOptions& options) {
  auto text = InfoOutput(options);
  if (!text.ok()) return ReportError(text.status());
  std::fwrite(text->data(), 1, text->size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

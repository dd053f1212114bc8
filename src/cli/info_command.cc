#include <fmt/format.h>

#include <cstdio>

#include "analysis/breakdown/trace_summary.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/run_analyses.h"
#include "report/console/info_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

int RunInfo(const InfoOptions& options) {
  auto loaded = LoadTraces(options.paths);
  if (!loaded.ok()) return ReportError(loaded.status());
  std::vector<TraceSummary> summaries;
  for (const Trace& trace : loaded->traces) summaries.push_back(SummarizeTrace(trace));
  const std::string text =
      options.json ? WithWarnings(RenderInfoJson(summaries), loaded->warnings) : RenderInfoText(summaries);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

#include <fmt/format.h>

#include <cstdio>

#include "analysis/advisor/advisor.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/run_analyses.h"
#include "report/console/advise_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

int RunAdvise(const AdviseOptions& options, bool summary) {
  auto run = AnalyzeRunInBoundedMemory(options.paths, options.analysis, RunDetail::kAdvice);
  if (!run.ok()) return ReportError(run.status());
  const AdvisorResult& result = run->advice;
  const std::string text =
      options.json
          ? WithWarnings(RenderAdviseJson(result, summary ? "tuneprof.analyze/1" : "tuneprof.advise/1"), run->warnings)
          : (summary ? RenderAnalyzeText(result) : RenderAdviseText(result));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace tuneprof::cli

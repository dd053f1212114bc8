#include <fmt/format.h>

#include <cstdio>
#include <string_view>

#include "analysis/advisor/advisor.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/json_output.h"
#include "pipeline/run_analyses.h"
#include "report/console/advise_report.h"

namespace tuneprof::cli {

int RunAdvise(const AdviseOptions& options, bool summary) {
  auto run = AnalyzeRunInBoundedMemory(options.paths, options.analysis, RunDetail::kAdvice);
  if (!run.ok()) return ReportError(run.status());
  const AdvisorResult& result = run->advice;
  if (options.json) {
    const std::string_view schema = summary ? "tuneprof.analyze/1" : "tuneprof.advise/1";
    PrintJson([&](JsonWriter* w) { WriteAdviseJson(result, schema, run->warnings, w); });
    return kExitOk;
  }
  const std::string text = summary ? RenderAnalyzeText(result) : RenderAdviseText(result);
  PrintOutput(text);
  return kExitOk;
}

}  // namespace tuneprof::cli

#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/json_output.h"
#include "pipeline/comm_run.h"
#include "report/console/comm_report.h"

namespace tuneprof::cli {

int RunComm(const CommOptions& options) {
  CommRunOptions run_options;
  run_options.hardware = options.hardware;
  run_options.hardware_file = options.hardware_file;
  run_options.utilization_threshold = options.utilization_threshold;
  run_options.summaries = true;
  auto run = AnalyzeRunCommunication(options.paths, run_options);
  if (!run.ok()) return ReportError(run.status());
  if (options.json) {
    PrintJson([&](JsonWriter* w) { WriteCommJson(run->analysis, run->warnings, w); });
    return kExitOk;
  }
  const std::string text = RenderCommText(run->analysis);
  PrintOutput(text);
  return kExitOk;
}

}  // namespace tuneprof::cli

#include <filesystem>

#include "cli/commands.h"
#include "cli/errors.h"
#include "io/output_file.h"
#include "pipeline/run_analyses.h"
#include "pipeline/summary_file.h"

namespace tuneprof::cli {

int RunSummarize(const SummarizeOptions& options) {
  // "-" is refused as standard output, as every writer refuses it, before its name is judged.
  if (options.output == "-") return ReportError(CheckOutputTarget(options.output));
  if (!IsSummaryPath(options.output) || std::filesystem::path(options.output).filename() == kSummaryExtension) {
    return ReportError(Status(
        StatusCode::kUsage, "summarize -o " + options.output + ": name the summary *" + std::string(kSummaryExtension) +
                                ", as analyze, advise, comm, memory, profile and report find them in directories"));
  }
  // Checked before the analysis, which can take minutes: the answer does not depend on it.
  const Status clash = CheckOutputIsNotInput(options.output, InputFiles({options.path}));
  if (!clash.ok()) return ReportError(clash);
  auto summary = SummarizeRun(options.path, options.analysis);
  if (!summary.ok()) return ReportError(summary.status());
  const Status written = WriteFileAtomically(options.output, EncodeSummaryFile(*summary));
  return written.ok() ? kExitOk : ReportError(written);
}

}  // namespace tuneprof::cli

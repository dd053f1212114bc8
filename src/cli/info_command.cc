#include <fmt/format.h>

#include <cstdio>

#include "analysis/breakdown/trace_summary.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/rank_map.h"
#include "report/console/info_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

namespace {

// info's map: each rank reduced to what the trace holds, which a summary file does not keep.
class InfoReducer final : public TraceOnlyReducer<TraceSummary> {
 public:
  InfoReducer() : TraceOnlyReducer("info") {}
  bool WithBreakdown() const override { return false; }
  TraceSummary Summarize(const Trace& trace, RankBreakdown) const override { return SummarizeTrace(trace); }
};

// Each rank summarized on all cores with its trace dropped at once (pipeline/rank_map.h).
Result<std::string> InfoOutput(const InfoOptions& options) {
  TP_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListRunFiles(options.paths));
  std::vector<MappedFile<TraceSummary>> mapped = MapRanks(files, InfoReducer());
  std::vector<std::string> warnings;
  TP_RETURN_IF_ERROR(CollectMapWarnings(options.paths, files, mapped, &warnings));
  std::vector<TraceSummary> summaries;
  for (MappedFile<TraceSummary>& file : mapped) {
    for (TraceSummary& summary : file.ranks) summaries.push_back(std::move(summary));
  }
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

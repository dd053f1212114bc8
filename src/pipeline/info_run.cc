#include "pipeline/info_run.h"

#include <utility>

#include "pipeline/rank_map.h"

namespace tuneprof {
namespace {

// info's map: each rank reduced to what the trace holds, which a summary file does not keep.
class InfoReducer final : public TraceOnlyReducer<TraceSummary> {
 public:
  InfoReducer() : TraceOnlyReducer("info") {}
  bool WithBreakdown() const override { return false; }
  TraceSummary Summarize(const Trace& trace, RankBreakdown) const override { return SummarizeTrace(trace); }
};

}  // namespace

Result<std::vector<TraceSummary>> SummarizeRunTraces(const std::vector<std::string>& paths,
                                                     std::vector<std::string>* warnings) {
  TP_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListRunFiles(paths));
  std::vector<MappedFile<TraceSummary>> mapped = MapRanks(files, InfoReducer());
  TP_RETURN_IF_ERROR(CollectMapWarnings(paths, files, mapped, warnings));
  std::vector<TraceSummary> summaries;
  for (MappedFile<TraceSummary>& file : mapped) {
    for (TraceSummary& summary : file.ranks) summaries.push_back(std::move(summary));
  }
  return summaries;
}

}  // namespace tuneprof

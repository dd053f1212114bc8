#include "pipeline/memory_reducer.h"

#include <iterator>
#include <utility>

#include "pipeline/job_chips.h"
#include "pipeline/rank_map.h"

namespace tuneprof {

RankMemory MemoryReducer::Summarize(const Trace& trace, RankBreakdown) const {
  RankMemory rank;
  rank.memory = AnalyzeMemory(trace, chips_->Select(trace));
  if (hta_) {
    rank.shape = ShapeOfRankForHta(trace);
    rank.hta_bw = ComputeRankHtaMemoryBw(trace);
  }
  return rank;
}

RankMemory MemoryReducer::FromSummary(RankSummary rank) const {
  RankMemory out;
  if (!rank.report) return out;  // MapSummaryFile refuses summaries without (SummaryInput::report_detail)
  out.memory = std::move(rank.report->memory);
  out.shape = std::move(rank.report->hta_shape);
  out.hta_bw = std::move(rank.report->hta_memory_bw);
  return out;
}

MemoryRun MemoryReducer::Reduce(std::vector<MappedFile<RankMemory>>& mapped) const {
  MemoryRun run;
  std::vector<HtaRankShape> shapes;
  for (MappedFile<RankMemory>& file : mapped) {
    for (RankMemory& rank : file.ranks) {
      run.ranks.push_back(std::move(rank.memory));
      shapes.push_back(std::move(rank.shape));
    }
  }
  if (!hta_) return run;
  const size_t shape = static_cast<size_t>(CombineHtaShapes(shapes));
  for (MappedFile<RankMemory>& file : mapped) {
    for (RankMemory& rank : file.ranks) {
      std::move(rank.hta_bw[shape].begin(), rank.hta_bw[shape].end(), std::back_inserter(run.hta_bw));
    }
  }
  return run;
}

Result<MemoryRun> AnalyzeRunMemory(const std::vector<std::string>& paths, const std::string& hardware,
                                   const std::string& hardware_file, const HardwareProfiles& profiles,
                                   const HardwareProfile* forced, bool hta, std::vector<std::string>* warnings) {
  TP_ASSIGN_OR_RETURN(const std::vector<std::string> files, ListRunFiles(paths));
  TP_ASSIGN_OR_RETURN(const SummaryInput summaries, ReadingReportParts("memory", hardware, hardware_file, &profiles));
  JobChips chips(profiles, forced);
  const MemoryReducer reducer(&chips, summaries, hta);
  TP_ASSIGN_OR_RETURN(std::vector<MappedFile<RankMemory>> mapped, MapRun(paths, files, reducer, &chips, warnings));
  return reducer.Reduce(mapped);
}

}  // namespace tuneprof

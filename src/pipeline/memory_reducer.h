#pragma once
// `memory`'s map -> summary -> reduce (rank_reducer.h): each rank's memory analysis and, for `--json`, its
// part of HTA's memory-bandwidth summary, from its trace or from a summary file.
#include <array>
#include <string>
#include <vector>

#include "analysis/core/hardware_profile.h"
#include "analysis/hta/memory_hta_bw.h"
#include "analysis/memory/memory_timeline.h"
#include "base/status.h"
#include "model/trace.h"
#include "pipeline/job_chips.h"
#include "pipeline/rank_map.h"
#include "pipeline/rank_reducer.h"

namespace tuneprof {

// One rank's memory analysis, and with --json its part of HTA's bandwidth summary, whose step filter
// is decided over the whole run: each shape's rows are kept until the reduce picks one.
struct RankMemory {
  MemoryAnalysis memory;
  HtaRankShape shape;
  std::array<std::vector<HtaMemoryBwRow>, kHtaRunShapes> hta_bw;
};

// The run's memory: every rank's analysis in the run's order, and HTA's bandwidth rows of the shape the
// run's ranks make together (with `hta` only).
struct MemoryRun {
  std::vector<MemoryAnalysis> ranks;
  std::vector<HtaMemoryBwRow> hta_bw;
};

class MemoryReducer final : public RankReducer<RankMemory> {
 public:
  // `chips` selects each rank's chip, shared within its job; `summaries` from ReadingReportParts; `hta`:
  // HTA's bandwidth rows too (memory --json).
  MemoryReducer(JobChips* chips, SummaryInput summaries, bool hta)
      : chips_(chips), summaries_(std::move(summaries)), hta_(hta) {}
  bool WithBreakdown() const override { return false; }
  RankMemory Summarize(const Trace& trace, RankBreakdown) const override;
  const SummaryInput& Summaries() const override { return summaries_; }
  // A rank summary (format version 2 on) holds all three, made as Summarize makes them.
  RankMemory FromSummary(RankSummary rank) const override;
  MemoryRun Reduce(std::vector<MappedFile<RankMemory>>& mapped) const;

 private:
  JobChips* chips_;
  SummaryInput summaries_;
  bool hta_;
};

// `memory`'s run in bounded memory: the files behind `paths` listed, each rank analysed on all cores and its
// trace dropped before the worker takes the next file (summary files made under the run's chip flags read
// in place of traces), the ranks reduced in the run's order. `hta`: HTA's bandwidth rows too (--json). The
// map's warnings are said on stderr and appended to `warnings`. Errors: a path that cannot be listed, a flag
// file that cannot be read, a summary refused, or no file readable.
Result<MemoryRun> AnalyzeRunMemory(const std::vector<std::string>& paths, const std::string& hardware,
                                   const std::string& hardware_file, const HardwareProfiles& profiles,
                                   const HardwareProfile* forced, bool hta, std::vector<std::string>* warnings);

}  // namespace tuneprof

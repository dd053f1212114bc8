#include "pipeline/comm_run.h"

#include <memory>
#include <utility>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_links.h"
#include "analysis/core/hardware_profile.h"
#include "pipeline/diagnostics.h"
#include "pipeline/hardware_options.h"
#include "pipeline/job_chips.h"
#include "pipeline/rank_map.h"
#include "pipeline/run_analyses.h"

namespace tuneprof {
namespace {

// comm's map -> summary -> reduce: each rank reduced to its communication, which is what travels under
// MapSharing and what a summary file's rank gives.
class CommReducer final : public SharedRankReducer<RankCommunication> {
 public:
  CommReducer(SummaryInput summaries, JobChips* chips) : summaries_(std::move(summaries)), chips_(chips) {}
  bool WithBreakdown() const override { return true; }
  RankCommunication Summarize(const Trace& trace, RankBreakdown breakdown) const override {
    return AnalyzeRankCommunication(trace, breakdown, chips_->Select(trace));
  }
  const SummaryInput& Summaries() const override { return summaries_; }
  RankCommunication FromSummary(RankSummary rank) const override { return std::move(rank.comm); }
  RankSummary ToSummary(RankCommunication comm) const override {
    RankSummary rank;
    rank.comm = std::move(comm);
    return rank;
  }

  // The ranks in the run's order, each with where it came from, matched across the run.
  void Reduce(std::vector<MappedFile<RankCommunication>> mapped, CommRun* run) const {
    for (size_t f = 0; f < mapped.size(); ++f) {
      for (size_t k = 0; k < mapped[f].ranks.size(); ++k) {
        run->analysis.ranks.push_back(std::move(mapped[f].ranks[k]));
        run->sources.push_back(CommRankSource{f, k, mapped[f].starts[k]});
      }
    }
    ResolveLinkRanks(&run->analysis.ranks);
    run->analysis.cross_rank = AnalyzeAcrossRanks(run->analysis.ranks);
    JudgeCommunication(&run->analysis);
    WarnAboutMissingGroupMembers(run->analysis, &run->warnings);
  }

 private:
  SummaryInput summaries_;
  JobChips* chips_;
};

}  // namespace

Result<CommRun> AnalyzeRunCommunication(const std::vector<std::string>& paths, const CommRunOptions& options) {
  // Listed first whatever the flags: under --mpi every process must reach the listing, which shares a
  // flag error with all of them.
  Result<RunSettings> loaded = LoadRunSettings(AnalysisFlags{"", options.hardware, options.hardware_file});
  CommRun run;
  TP_ASSIGN_OR_RETURN(run.files, ListRunFiles(paths, loaded.status()));
  const RunSettings& settings = loaded.value();
  SummaryInput summaries{options.summaries, options.command, settings.summary};
  summaries.config_matters = false;
  summaries.profiles = settings.profiles.get();
  run.analysis.thresholds.utilization = options.utilization_threshold;
  JobChips chips(*settings.profiles, settings.forced);
  const CommReducer reducer(summaries, &chips);
  TP_ASSIGN_OR_RETURN(std::vector<MappedFile<RankCommunication>> mapped,
                      MapRun(paths, run.files, reducer, &chips, &run.warnings));
  reducer.Reduce(std::move(mapped), &run);
  return run;
}

}  // namespace tuneprof

#include "pipeline/comm_run.h"

#include <memory>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/hardware_profile.h"
#include "pipeline/hardware_options.h"
#include "pipeline/rank_map.h"

namespace tuneprof {

namespace {

// The flags' chips, the --hardware-file read once (as summary files record it) and checked before any
// trace is read.
struct CommSettings {
  SummarySettings summary;
  std::shared_ptr<const HardwareProfiles> profiles;
  const HardwareProfile* forced = nullptr;
};

Result<CommSettings> LoadCommSettings(const CommRunOptions& options) {
  CommSettings settings;
  TP_ASSIGN_OR_RETURN(settings.summary, SummarySettingsOf(AnalysisFlags{"", options.hardware, options.hardware_file}));
  TP_ASSIGN_OR_RETURN(HardwareProfiles profiles,
                      ParseHardwareProfiles(settings.summary.hardware_file_text, options.hardware_file));
  settings.profiles = std::make_shared<const HardwareProfiles>(std::move(profiles));
  TP_ASSIGN_OR_RETURN(settings.forced, ForcedHardware(*settings.profiles, options.hardware));
  return settings;
}

}  // namespace

Result<CommRun> AnalyzeRunCommunication(const std::vector<std::string>& paths, const CommRunOptions& options) {
  // Listed first whatever the flags: under --mpi every process must reach the listing, which shares a
  // flag error with all of them.
  Result<CommSettings> loaded = LoadCommSettings(options);
  CommRun run;
  TP_ASSIGN_OR_RETURN(run.files, ListRunFiles(paths, loaded.status()));
  const CommSettings& settings = loaded.value();
  SummaryInput summaries{options.summaries, options.command, settings.summary};
  summaries.config_matters = false;
  run.analysis.thresholds.utilization = options.utilization_threshold;
  std::vector<MappedFile<RankCommunication>> mapped = MapRanks<RankCommunication>(
      run.files,
      [&](const Trace& trace, const RankBreakdown& breakdown) {
        return AnalyzeRankCommunication(trace, breakdown, SelectHardware(trace, *settings.profiles, settings.forced));
      },
      summaries);
  TP_RETURN_IF_ERROR(CollectMapWarnings(paths, run.files, mapped, &run.warnings));
  for (size_t f = 0; f < mapped.size(); ++f) {
    for (size_t k = 0; k < mapped[f].ranks.size(); ++k) {
      run.analysis.ranks.push_back(std::move(mapped[f].ranks[k]));
      run.sources.push_back(CommRankSource{f, k, mapped[f].starts[k]});
    }
  }
  run.analysis.cross_rank = AnalyzeAcrossRanks(run.analysis.ranks);
  JudgeCommunication(&run.analysis);
  return run;
}

}  // namespace tuneprof

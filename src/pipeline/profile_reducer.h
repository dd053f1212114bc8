#pragma once
// `profile`'s map -> summary -> reduce (rank_reducer.h): each rank reduced to all that the default
// semantics print of it, from its trace or from a summary file made with the default compute flags.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/advisor/time_split.h"
#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/module_view.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/comm_cross_rank.h"
#include "analysis/compute/compute_units.h"
#include "analysis/compute/moe_balance.h"
#include "analysis/core/hardware_profile.h"
#include "base/status.h"
#include "model/trace.h"
#include "pipeline/job_chips.h"
#include "pipeline/rank_map.h"
#include "pipeline/rank_reducer.h"

namespace tuneprof {

// What every rank's profile is made with, from the flags (checked before any trace is read).
struct ProfileSettings {
  HardwareProfiles profiles;
  const HardwareProfile* forced = nullptr;  // into `profiles`
  ComputeOptions compute;
};

// One rank's profile: all that the default semantics print of it.
struct RankProfile {
  RankBreakdown breakdown;
  RankComputeUnits compute;
  KernelBreakdown kernels;
  RankMoeLoad moe;
  ModuleView modules;
  TimeSplit split;
  // Its communication, where the reduce matches it across ranks: a GPU rank that ran send / recv kernels
  // (`p2p`), for the pipeline it may be in, and every rank for --critical-path; nullopt otherwise.
  std::optional<RankCommunication> comm;
  bool p2p = false;
};

// Moves `rank` into a profile's per-rank columns, one vector per member (ProfileResult, which the report
// renders and this layer does not see): a member added to RankProfile is handed on here, once for the map
// and for the traces kept whole.
template <class Columns>
void AppendRankProfile(RankProfile rank, Columns* columns) {
  columns->ranks.push_back(std::move(rank.breakdown));
  columns->compute.push_back(std::move(rank.compute));
  columns->kernels.push_back(std::move(rank.kernels));
  columns->moe.push_back(std::move(rank.moe));
  columns->modules.push_back(std::move(rank.modules));
  columns->splits.push_back(rank.split);
}

// The ranks of a run in its order, and with --critical-path their communication matched across the run
// as comm matches it.
struct ProfileRun {
  std::vector<RankProfile> ranks;
  std::optional<CrossRankCommunication> cross_rank;
};

class ProfileReducer final : public RankReducer<RankProfile> {
 public:
  // `chips` selects each rank's chip, shared within its job; `summaries` from ProfileSummaries;
  // `critical_path`: every rank's communication kept for the reduce to match (--critical-path).
  ProfileReducer(const ProfileSettings& settings, JobChips* chips, SummaryInput summaries, bool critical_path = false);
  bool WithBreakdown() const override { return true; }
  RankProfile Summarize(const Trace& trace, RankBreakdown breakdown) const override;
  const SummaryInput& Summaries() const override { return summaries_; }
  // A rank summary (format version 2 on) holds all of it, its compute units made with the default
  // ComputeOptions; from version 4 on, its modules too (empty before).
  RankProfile FromSummary(RankSummary rank) const override;
  // The ranks in the run's order, the mapped files emptied as they are read; the GPU ranks that ran send /
  // recv kernels matched across the run as comm matches it, and their pipeline waits added.
  ProfileRun Reduce(std::vector<MappedFile<RankProfile>>& mapped) const;

 private:
  const ProfileSettings& settings_;
  JobChips* chips_;
  SummaryInput summaries_;
  bool critical_path_;
};

// Summaries are read as traces are when made under the run's chip flags and profiled with the default
// compute flags (what `summarize` makes them with); `compute_flag` names the first compute flag set to
// other than its default ("" when none), which then refuses them. An error when a flag file cannot be read.
Result<SummaryInput> ProfileSummaries(const std::string& compute_flag, const std::string& hardware,
                                      const std::string& hardware_file, const ProfileSettings& settings);

// `profile`'s run in bounded memory (the default semantics): the files behind `paths` listed, each rank
// profiled on all cores and its trace dropped before the worker takes the next file (summary files taken as
// ProfileSummaries says, `compute_flag` as there), the ranks reduced in the run's order; `critical_path`:
// their communication matched across the run too. The map's warnings are said on stderr and appended to
// `warnings`. Errors: a path that cannot be listed, a flag file that cannot be read, a summary refused, or
// no file readable.
Result<ProfileRun> AnalyzeRunProfile(const std::vector<std::string>& paths, const ProfileSettings& settings,
                                     const std::string& compute_flag, const std::string& hardware,
                                     const std::string& hardware_file, bool critical_path,
                                     std::vector<std::string>* warnings);

}  // namespace tuneprof

#pragma once
// A command's map -> summary -> reduce, named: what one rank of a trace is summarized to, and how a
// summary file's rank (summary_file.h) is read or refused. rank_map.h runs the map with it; each reducer
// adds its own Reduce over the mapped ranks. The members are pure virtual, so that a reducer missing one or
// misspelling it (`override`) does not compile; the reducers whose ranks travel between the processes of
// an MPI run (MapSharing) derive from SharedRankReducer.
#include <string>
#include <utility>

#include "analysis/breakdown/time_breakdown.h"
#include "analysis/core/hardware_profile.h"
#include "base/status.h"
#include "model/trace.h"
#include "pipeline/rank_summary.h"
#include "pipeline/summary_file.h"

namespace tuneprof {

// How a map takes summary files (summary_file.h) among its files: only commands whose summary a file
// holds take them (`accepted`), and only files made under the run's own flags.
struct SummaryInput {
  bool accepted = false;
  std::string command;         // named in the refusal: "profile", "memory", "report"
  SummarySettings settings;    // the run's
  bool config_matters = true;  // false for comm, which applies no advisor threshold to a rank
  // The report, `memory` and `profile` read each rank's breakdown, kernels, FLOPs, memory and compute units
  // (RankSummary::report): summaries made before they were kept are refused; other commands drop them as
  // they read.
  bool report_detail = false;
  bool compute_units = false;                  // `profile` reads the compute units within them as well
  const HardwareProfiles* profiles = nullptr;  // the run's chips, which the ranks' are found among
};

// The input of a command that needs the events: any summary is refused, naming `command`.
inline SummaryInput RefusingSummaries(std::string command) {
  SummaryInput input;
  input.command = std::move(command);
  return input;
}

// The input of a command that reads each rank's report parts (RankSummary::report) and applies no advisor
// threshold to a rank (memory, profile): summaries made under the run's chip flags are taken, their chips
// found among `profiles`. An error when a flag file cannot be read.
Result<SummaryInput> ReadingReportParts(std::string command, const std::string& hardware,
                                        const std::string& hardware_file, const HardwareProfiles* profiles);

template <class Rank>
class RankReducer {
 public:
  virtual ~RankReducer() = default;
  // Whether Summarize is given the rank's step breakdown (the map makes it and keeps its warnings), else an
  // empty one.
  virtual bool WithBreakdown() const = 0;
  // One rank of a trace. Runs on the map's workers: it reads only what it is given and shared read-only
  // state (or state it locks).
  virtual Rank Summarize(const Trace& trace, RankBreakdown breakdown) const = 0;
  // How the summary files among the run's files are taken, or refused naming the command.
  virtual const SummaryInput& Summaries() const = 0;
  // A summary file's rank, once Summaries() took its file.
  virtual Rank FromSummary(RankSummary rank) const = 0;
};

// A reducer whose ranks travel to the process that reduces, as summaries, read back there by FromSummary.
template <class Rank>
class SharedRankReducer : public RankReducer<Rank> {
 public:
  virtual RankSummary ToSummary(Rank rank) const = 0;
};

// The reducer of a command that needs the events: every summary file is refused, naming the command.
template <class Rank>
class TraceOnlyReducer : public RankReducer<Rank> {
 public:
  explicit TraceOnlyReducer(std::string command) : summaries_(RefusingSummaries(std::move(command))) {}
  const SummaryInput& Summaries() const final { return summaries_; }
  Rank FromSummary(RankSummary) const final { return Rank(); }  // never called: the file is refused first

 private:
  SummaryInput summaries_;
};

}  // namespace tuneprof

#pragma once
// Small helpers the rules share: the platform a rank ran on (platform.h), per-step scaling and number
// formatting for titles.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/platform.h"
#include "analysis/core/intervals.h"

namespace tuneprof {

// A whole-trace total as a mean per step.
double PerStep(const RankEvidence& rank, double total_ns);

// Percent of the mean step.
double PctOfStep(const RankEvidence& rank, double per_step_ns);

// Whether the trace runs a backward pass (autograd engine ranges), i.e. it trains.
bool RunsBackward(const Trace& trace);

// "12.3 us" / "4.56 ms" for titles.
std::string FormatDuration(double ns);

// The finding `id` on the time of `part` left exposed per step (not hidden under other work), where that
// time's percent of the step reaches the threshold `threshold_key`: titled "<pct> % of the step is <what>
// not hidden under <under> (<time> per step)", its value that percent. nullopt below the threshold or where
// nothing is exposed. The exposed rules share it so that their titles and thresholds read alike.
std::optional<Finding> ExposedPartFinding(const RankEvidence& rank, const AdvisorConfig& config, TimePart part,
                                          std::string_view threshold_key, std::string_view id, std::string_view what,
                                          std::string_view under);

// When launched device work waited to start (from its launch to its start), united, on `device` (an
// index into Trace::devices) or on every device (kNoIndex): device idle inside these times is not the
// host being late, the work was there, waiting on events, other streams or work the trace does not show.
IntervalSet QueuedDeviceWork(const RankEvidence& rank, uint32_t device = kNoIndex);

// The advice for low-utilization idle that launched work waited through for at least half its time:
// the cause is then that wait, not the host or the batch size. Adds the measured time to `f`.
void SayQueuedIdle(double queued_idle_ns, Finding* f);

// A module is named when it holds at least this share of a finding's evidence; at most kMaxModules are.
inline constexpr double kModuleMinShare = 0.2;
inline constexpr size_t kMaxModules = 3;

// Names on `f` the modules (RankEvidence::modules) that hold most of the device time of `events`: device
// work counts itself, a host operator the device work launched inside it. The shares are of the whole
// evidence's device time, what ran outside every module included, so that "78 %" means 78 % of it.
// Nothing where the trace has no module ranges or the evidence no device time.
void SayModules(const RankEvidence& rank, std::span<const uint32_t> events, Finding* f);

// Device work, or a host call, with the time of it a finding is about (its part inside the finding's
// intervals).
struct WeightedWork {
  uint32_t event = 0;
  int64_t ns = 0;
};

// SayModules for evidence that is time intervals: each piece of device work weighted by its time inside them.
void SayModulesOfWork(const RankEvidence& rank, std::span<const WeightedWork> work, Finding* f);

// For host-side evidence (calls that wait): each call, weighted by its time, counts for the innermost
// module range open on its thread when it starts. The shares are of the calls' host time.
void SayModulesOfHostTime(const RankEvidence& rank, std::span<const WeightedWork> calls, Finding* f);

// SayModules for evidence that is Ascend kernel_details rows (indices into Trace::kernel_details().rows),
// each weighted by its duration there: a row counts for the module of its timeline task
// (call_sites.h KernelDetailTasks), as profile --by module attributes that task, else for the innermost
// module range around its launching operator. Rows the timeline lacks count as outside every module.
void SayModulesOfRows(const RankEvidence& rank, std::span<const uint32_t> rows, Finding* f);

// The communication work of `trace`, each weighted by its time not under compute on its device: the
// exposed communication, piece by piece.
std::vector<WeightedWork> ExposedCommunicationWork(const RankEvidence& rank);

// The expert-parallel token all-to-all (dispatch / combine) is hidden by running it beside the experts'
// compute, not by gradient buckets: the APIs that overlap it on the rank's platform. Every communication
// finding whose traffic is mostly all-to-all names these, so that they agree.
std::string_view ExpertAllToAllOverlapApis(const RankEvidence& rank);

// At least half of `part` of `whole` (counts of operators or collectives): the traffic a finding is about.
bool MostOf(uint64_t part, uint64_t whole);

}  // namespace tuneprof

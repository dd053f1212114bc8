#pragma once
// What-if "stages balanced" on a pipeline whose hand-offs were matched kernel by kernel (GPU send / recv
// kernels paired with their peer's, pipeline_stages.h): the measured schedule re-timed with every stage's
// compute scaled to the mean stage's.
//
// Each staged rank's steps are a sequence, in the order the rank ran them, of its own work and its pipeline
// hand-offs: from its step's start, the work before its first p2p kernel, the kernel, the work before the
// next one, ..., the work after the last one to its step's end; then the idle time to its next step. A p2p
// kernel ends, on both ranks of the pair, the transfer after the later of the two arrivals; so a rank's
// kernel waits for its peer's arrival and holds up its own next work. That is the schedule's dependency
// graph (each rank's order, each pair's two kernels), whatever the schedule (a forward chain, 1F1B with its
// warm-up, steady state and cool-down): its longest path is the run. The work between two kernels is
// compute, less the exposed time of the rank's other collectives in it (a data-parallel all-reduce), and
// never more than the rank's computing over its steps: only that part scales.
//
// Re-timed twice, as measured (scale 1: the run itself, where the kernels are consistent) and with each
// stage's compute scaled to the mean stage's work, the longest rank's step falls by the gain, per step and
// over the run (the longest rank's mean step); never below 0. A kernel whose peer's kernel is not in the
// input (or not paired back with it) keeps its measured duration. nullopt where a staged rank has no step
// windows or the pairs cannot all be met (the kernels' order contradicts itself).
//
// Cost: O(n log n) in the staged ranks' collectives (each kernel is met once; pairs are found by lookup).
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "analysis/comm/comm_collectives.h"

namespace tuneprof {

// A staged rank's pipeline send / recv kernel and its peer's matching kernel (nullptr: none in the input).
struct HandOffKernel {
  const Collective* kernel = nullptr;
  const Collective* match = nullptr;
};

struct StagedRankSchedule {
  const RankCommunication* rank = nullptr;
  double compute_scale = 1;            // the mean stage's work over the rank's stage's
  int64_t clock_correction_ns = 0;     // what its times lose to be on the reference clock
  std::vector<HandOffKernel> kernels;  // its pipeline kernels, in start order
};

struct BalancedRetime {
  std::map<int64_t, double> gain_ns_by_step;  // the longest rank's step k, as measured less balanced
  double gain_ns_per_step = 0;                // the longest rank's mean step, as measured less balanced
};

std::optional<BalancedRetime> RetimeBalancedStages(const std::vector<StagedRankSchedule>& staged);

}  // namespace tuneprof

#pragma once
// The advisor: runs every rule (rules/rules.h) on every rank, caps the gains so that they never add up
// to more than the time they come from, merges the ranks' findings, and names the dominant bottleneck.
//
// Gains are per step. Within a rank, findings that save time from the same part of the step
// (finding.h TimePart) are capped in order of their own estimate: each gets at most what the ones
// before it left of that part. A finding that fires on several ranks keeps the largest gain and lists
// every rank. The verdict is the part of the step, summed over ranks, that holds the most time:
// compute-bound work -> compute; memory-bound work and exposed copies -> memory; exposed communication
// -> communication; host wait / framework overhead -> host; DataLoader -> data; other idle -> idle.
// "none" when compute dominates, the compute units are measured at or above their threshold and no
// finding would save 5 % of the step.
#include <optional>
#include <string>
#include <vector>

#include "analysis/advisor/advisor_config.h"
#include "analysis/advisor/bounding_rank.h"
#include "analysis/advisor/finding.h"
#include "analysis/advisor/op_sequences.h"
#include "analysis/advisor/time_split.h"
#include "analysis/breakdown/module_view.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_cross_rank.h"
#include "analysis/compute/compute_units.h"
#include "analysis/compute/moe_balance.h"
#include "analysis/core/device_work.h"
#include "analysis/core/hardware_profile.h"
#include "analysis/core/host_op_tree.h"
#include "analysis/memory/memory_timeline.h"
#include "model/trace.h"

namespace tuneprof {

// What the rules of one rank read. Built once per rank by the advisor.
struct RankEvidence {
  // nullptr for the rules that read the other ranks (rules.h RuleReadsOtherRanks): they run once every
  // rank is reduced to its summary, when no trace is held.
  const Trace* trace = nullptr;
  const RankBreakdown* breakdown = nullptr;
  const RankComputeUnits* compute = nullptr;
  const HardwareSelection* hardware = nullptr;
  HostOpTree tree;
  TimeSplit split;
  const MemoryAnalysis* memory = nullptr;  // nullptr: not analysed (rules that need it stay quiet)
  const RankCommunication* comm = nullptr;
  const CrossRankCommunication* cross = nullptr;  // the job's ranks together
  int64_t rank_id = 0;                            // the trace's rank
  bool on_npu = false;                            // an NPU device, or a torch_npu trace
  // The run's expert load (moe_balance.h) for the rules that read the other ranks; nullptr when no rank
  // ran grouped-GEMM experts.
  const MoeBalance* moe = nullptr;
  // Which module each piece of device work counts for (module_view.h); nullptr or empty: the trace has
  // no module ranges, and findings name none.
  const ModuleAttribution* modules = nullptr;
  // What several rules read of the host operators (op_sequences.h), built once for all of them.
  mutable SharedOpSequences op_sequences;
  // The device work and its busy time (device_work.h), listed once for every rule that reads them.
  mutable SharedDeviceWork device_work;
};

// One of the tuning guide's three utilizations against its threshold.
struct UtilizationCheck {
  std::string name;                 // "compute_units", "memory_bandwidth", "communication_bandwidth"
  std::optional<double> value_pct;  // nullopt: not measurable on this input
  double threshold_pct = 0;
  // What the number is and its population ("SM efficiency estimated from launch configurations ...,
  // time-weighted over 1993 kernels on GPU 0"), or "unknown: " and why.
  std::string measured_as;
  // For an unknown value: the capture option or flag that would measure it (nsys
  // --gpu-metrics-devices=all, torch.profiler activities / record_shapes, torch_npu's aic_metrics and
  // profiler_level, --hardware NAME); "" when the value is known.
  SharedText how_to_measure;  // pooled: the same on every rank
  // The figure as the tuning guide reads it: "Cube", "Vector", "SM efficiency", "memory bandwidth",
  // "communication bandwidth".
  std::string label;
  // Where a known value comes from, so that two runs' figures are compared only when measured alike:
  // "pmu" (Ascend counters), "gpu_metrics" (Nsight Systems samples), "launch_config" (SM efficiency from
  // launch configurations), "operator_shapes" (an estimate), "copies", "collective_sizes",
  // "hccl_transports"; "" when unknown.
  std::string source;
  // The share of the device's step held by the work the figure measures ("compute" for the units,
  // "kernels" for the kernels' memory traffic, "copies" for the copies' bandwidth) when that work is not the step's largest
  // part. A low figure then does not make it the bottleneck (a device idle most of the step is bound by
  // what keeps it idle), as profile's compute verdict says; nullopt when the work is material or unmeasured.
  std::optional<double> immaterial_share;
  std::string immaterial_part;  // "compute", "kernels" or "copies", with immaterial_share
  bool Below() const { return value_pct && *value_pct < threshold_pct; }
  // Below the threshold where that makes it a bottleneck.
  bool Bottleneck() const { return Below() && !immaterial_share; }
};

// The compute-unit utilization the tuning guide's 70 % rule reads: Ascend Cube/Vector ratios, else GPU
// SM efficiency; unknown on CPU-only traces and without launch configurations or PMU counters.
UtilizationCheck CheckComputeUnits(const RankEvidence& rank, const AdvisorConfig& config);

struct RankAdvice {
  int64_t rank = 0;
  std::string path;
  TimeSplit split;
  std::vector<UtilizationCheck> utilizations;
  Bottleneck dominant = Bottleneck::kNone;
};

struct AdvisorResult {
  Bottleneck dominant = Bottleneck::kNone;
  std::string dominant_reason;  // the numbers behind the verdict, in words
  double step_ns = 0;           // the slowest rank's mean step
  // Who bounds the step across ranks, where the run says: the pipeline stage that computes most, or the
  // straggler that stands out ("stage 1 (ranks 2,3) bounds the step"); empty otherwise.
  std::string bounded_by;
  // The rank the headline and the utilization table speak for where the slowest step does not name it
  // (bounding_rank.h): a rank of the stage that computes most, the straggler, or the tied rank that computes
  // most; nullopt: the slowest rank.
  std::optional<BoundingRank> bounding_rank;
  // The ranks' mean step and its parts, each the mean over the ranks with a complete step: the
  // population the verdict speaks of (equal to the one rank's split on a single-rank input). A rank
  // whose every step was cut off has none and is left out, as its warning says. steps: over all ranks.
  TimeSplit mean_split;
  size_t mean_ranks = 0;  // how many ranks the mean is over
  std::vector<RankAdvice> ranks;
  std::vector<Finding> findings;  // by estimated gain, largest first
};

struct RankInputs {
  const Trace* trace = nullptr;
  const RankBreakdown* breakdown = nullptr;
  const RankComputeUnits* compute = nullptr;
  const HardwareSelection* hardware = nullptr;
  const MemoryAnalysis* memory = nullptr;
  const RankCommunication* comm = nullptr;
  // BuildHostOpTree(*trace) where the caller built it for other analyses too (moved from); nullptr:
  // AdviseRank builds it.
  HostOpTree* tree = nullptr;
  // A core is idle while this rank is advised (a run of fewer ranks than cores): the rules, which only
  // read their inputs, run on two threads.
  bool spare_core = false;
};

// A finding of one rank before the gains are capped, with the position of the rule that found it in
// AllRules(): caps break ties in the rules' order, whichever pass ran the rule.
struct RuleFinding {
  size_t rule = 0;
  Finding finding;
};

// What the advisor keeps of one rank once its trace is dropped: the findings of the rules that read only
// this rank, and what the rules reading every rank need of it.
struct RankAdviceDraft {
  RankAdvice advice;  // its split, utilizations and dominant part
  bool on_npu = false;
  std::vector<RuleFinding> findings;  // uncapped
  RankMoeLoad moe;                    // its grouped-GEMM expert load
};

// The map half of RunAdvisor: every rule that reads one rank's evidence (`input.comm` may be nullptr).
RankAdviceDraft AdviseRank(const RankInputs& input, const AdvisorConfig& config);

// The reduce half: runs the rules that read the other ranks (`cross`, with each rank's `comm`, in the
// drafts' order; nullptr entries and a null `cross` leave them quiet), caps each rank's gains, merges the
// ranks' findings and gives the verdict.
AdvisorResult CombineAdvice(std::vector<RankAdviceDraft> ranks, const std::vector<const RankCommunication*>& comm,
                            const AdvisorConfig& config, const CrossRankCommunication* cross);

// `cross`: the communication analysis across the ranks (comm_cross_rank.h), or nullptr.
AdvisorResult RunAdvisor(const std::vector<RankInputs>& ranks, const AdvisorConfig& config,
                         const CrossRankCommunication* cross = nullptr);

// The memory-bandwidth utilization the tuning guide's 60 % rule reads: without DRAM counters in the
// trace, the achieved bandwidth of the rank's copies against the peak of the path they used.
UtilizationCheck CheckMemoryBandwidth(const RankEvidence& rank, const AdvisorConfig& config);

// The communication-bandwidth utilization of the 50 % rule: collectives' bus bandwidth against the link
// peak (duration-weighted), or torch_npu's per-transport bandwidth against the standard bandwidth.
UtilizationCheck CheckCommunicationBandwidth(const RankEvidence& rank, const AdvisorConfig& config);

// Visible for testing: caps `findings` of one rank (see above).
void CapGains(const TimeSplit& split, std::vector<Finding>* findings);

}  // namespace tuneprof

#pragma once
// Communication across the ranks of one job, and the verdict the advisor reads.
//
// GPU and gloo ranks: the same collective is found on every rank by (process group, sequence number
// within that group on the rank), as NCCL's own sequence numbers count; a send / recv of a group of more
// than two ranks by its peer instead (the one the kernel names, else its forward chain's neighbour,
// pipeline_peers.h): the k-th kernel a rank exchanges with a peer pairs with the peer's k-th kernel with
// it, as one pair's calls run in order while the group's sequence counts every peer's. A collective ends for all ranks
// together; a rank that starts it early spins until the last rank arrives. So, per matched collective
// and rank: wait = min(duration, last start - own start), transfer = duration - wait. The straggler is
// the rank whose late arrivals made the others wait longest in total (ties: the rank that arrived last
// most often). Start times of different ranks are compared on one clock: each rank's offset, estimated
// from the ends of matched synchronizing collectives (clock_alignment.h), is taken out first where it is
// material, and a straggler is not named when it was last by less than the clocks can still be wrong.
// On a pipeline the matched send / recv between ranks of different stages (its hand-offs) name no
// straggler: a stage hands a micro-batch on late because it computes more, or because it waited for
// another stage, and the stages' figures charge that wait once, to the stage that bounds the step.
//
// Ascend ranks: communication.json already splits wait from transit; msprof's rule names the slow rank
// (ascend_slow_rank.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm/clock_alignment.h"
#include "analysis/comm/comm_collectives.h"
#include "analysis/comm/comm_groups.h"
#include "analysis/comm/comm_outliers.h"
#include "analysis/comm/critical_path.h"
#include "analysis/comm/parallel_roles.h"
#include "analysis/comm/pipeline_stages.h"
#include "analysis/comm/rank_operator_diff.h"
#include "analysis/comm/transport_checks.h"
#include "analysis/comm/wait_causes.h"

namespace tuneprof {

struct RankWait {
  int64_t rank = 0;
  uint64_t matched = 0;  // collectives found on every rank that has the group
  // Times are unions over the rank's timeline (collectives in flight at once wait once); for collectives
  // that run one after another, as NCCL's and HCCL's on one stream do, they equal the sums.
  int64_t communication_ns = 0;      // the time those run
  int64_t wait_ns = 0;               // the time spent waiting for the last rank to arrive
  int64_t transfer_ns = 0;           // communication - wait
  std::optional<double> wait_ratio;  // wait / communication
  uint64_t times_last = 0;           // matched collectives this rank arrived at last
  int64_t wait_caused_ns = 0;        // Σ over the other ranks of their wait (a union each) in those
  // This rank's wait (a union) at the matched collectives the named straggler arrived at last, the
  // pipeline's hand-offs left out: the part of wait_ns that rank made it wait. 0 without a straggler.
  int64_t wait_for_straggler_ns = 0;
  // The part of the figures above at the pipeline's hand-offs: matched send / recv between ranks of different
  // stages (pipeline_stages.h). That wait is the bubble the stages' figures charge to the stage that bounds the
  // step, so it names no straggler and the verdict tells it apart from ranks waiting at their collectives.
  int64_t pipeline_communication_ns = 0;
  int64_t pipeline_wait_ns = 0;
  int64_t pipeline_wait_caused_ns = 0;
  // Matched collectives (send/recv left out, as the recipe does) whose durations across the ranks named
  // this rank an outlier by TestOutliers (shortest = suspect): msprof-analyze's slowAffectCount.
  uint64_t slow_affect_count = 0;
  // Why the others waited for this rank (wait_causes.h). At each matched collective it arrived at last,
  // it held the collective up by its arrival minus the median arrival of the others (aligned clocks), at
  // most as long as the median rank's collective ran (the wait that rank had); that window is charged
  // once, here, to what the rank did more than the median rank before it (wait_causes.h), and a wait
  // shared by collectives in flight at once counts once. held_up_ns is the explained part (every cause but kUnexplained), the time the step
  // would lose were the rank on time. Only where every rank of the collective kept its lead-ins
  // (summaries written before them did not).
  int64_t held_up_ns = 0;
  WaitCauseTimes held_up_by_cause{};
  // The pipeline's hand-offs it arrived at late (windows of at least kMinLatenessNs): left out of the wait
  // causes above, as the pipeline stages charge their wait once (to the slowest stage's compute and the
  // schedule's fill / drain, pipeline_stages.h); 0 without pipeline stages.
  uint64_t late_hand_offs = 0;
  uint64_t late_collectives = 0;  // windows of at least kMinLatenessNs, explained or not
  // Over those late collectives: this rank's lead-in operators minus those of the rank that arrived at
  // the median, largest extra first (at most kMaxLeadOperators; only extras > 0).
  std::vector<LeadOperator> late_operator_extra;
};

// A window shorter than this is launch jitter (NCCL kernels start microseconds apart), not lateness.
constexpr int64_t kMinLatenessNs = 10'000;

// One column of the per-rank step table (computing, exposed communication, free) across ranks.
struct StepSpread {
  std::string metric;  // "computing", "exposed_communication", "free"
  int64_t min_ns = 0, max_ns = 0;
  int64_t min_rank = 0, max_rank = 0;
  std::optional<double> share_of_step;  // (max − min) / MeanReportedStepsNs
  bool uneven = false;                  // share_of_step > kStepSpreadThreshold
};

// Ranks within 5 % of the step (cluster_step_trace_time guidance).
constexpr double kStepSpreadThreshold = 0.05;

// The ranks' mean of the steps every command reports (ReportedStepsNs; the wall where a rank has none):
// what the step table's spread is a share of, as its header's shares are.
double MeanReportedStepsNs(const std::vector<RankCommunication>& ranks);

// The slow-rank outlier test on one per-rank total (comm_outliers.h), over the ranks that have it.
struct RankOutlierTest {
  std::string metric;             // "communication" (shortest suspect), "computing" (longest suspect)
  std::vector<int64_t> ranks;     // the ranks tested, the sample's order
  std::vector<double> values_ms;  // their totals
  OutlierTest test;
  std::vector<int64_t> outlier_ranks;
};

struct CrossRankCommunication {
  uint64_t ranks_with_collectives = 0;
  uint64_t matched_collectives = 0;    // (group, sequence) keys present on ≥ 2 ranks with one type
  uint64_t unmatched_collectives = 0;  // keys seen on one rank only, or with differing types
  std::vector<RankWait> ranks;         // in the order of the input ranks
  std::optional<int64_t> straggler_rank;
  std::string straggler_reason;
  // The straggler made the others wait at least twice as long as any other rank did. Otherwise the ranks
  // take turns arriving last (jitter, a shared host): a rank is last most, but none is "the" slow rank.
  bool straggler_stands_out = false;
  // Clocks: each rank's offset from the reference rank, and whether the straggler's lateness (the median
  // margin by which it arrived last, its mean over the collectives it was last at) is within what the clocks can still be wrong by (then it does not
  // stand out).
  ClockAlignment clocks;
  std::optional<int64_t> straggler_lateness_ns;
  // What the lateness was compared with: the straggler's residual clock error plus the largest other one.
  std::optional<int64_t> straggler_clock_doubt_ns;
  bool straggler_within_clock_uncertainty = false;
  bool wait_causes_known = false;  // some matched collective had every arrival's lead-in
  // Each such collective as the cross-rank critical path sees it (critical_path.h), in match order.
  std::vector<CriticalLink> critical_links;
  // Ascend (communication.json).
  std::optional<int64_t> ascend_max_wait_rank;
  std::optional<int64_t> ascend_slow_rank;
  std::string ascend_verdict;  // "slow rank", "slow link", "" when not decided
  // Both rules name a slow rank and not the same one: the timeline's arrivals (per matched collective)
  // and the HCCL wait ratios (totals). Every command that names one says the other disagrees.
  bool slow_rank_rules_disagree() const {
    return ascend_slow_rank && straggler_rank && straggler_stands_out && *ascend_slow_rank != *straggler_rank;
  }
  // The per-rank step table's spread, and the outlier tests across ranks (≥ 2 ranks).
  std::vector<StepSpread> step_spread;
  std::vector<RankOutlierTest> outliers;
  uint64_t vote_collectives = 0;             // matched collectives the per-collective test ran on
  std::vector<CommGroupSummary> groups;      // per process group (comm_groups.h)
  std::vector<ParallelDomain> domains;       // per parallel dimension (parallel_roles.h)
  std::optional<PipelineAnalysis> pipeline;  // per pipeline stage (pipeline_stages.h), where pp groups are named
  // torch_npu communication.json across ranks (transport_checks.h): each transport's bandwidth spread and
  // the RDMA transfers that look retransmitted.
  std::vector<TransportSpread> transport_spread;
  std::vector<RetransmissionSuspect> retransmissions;
  // The rank that computes most against the one that computes least, operator by operator
  // (rank_operator_diff.h); nullopt where the ranks compute alike or kept no lead-ins.
  std::optional<RankOperatorDiff> slowest_vs_fastest;
};

CrossRankCommunication AnalyzeAcrossRanks(const std::vector<RankCommunication>& ranks);

// The rank's wait over its matched collectives less the pipeline's hand-offs (RankWait above): what its
// collectives wait for late ranks; nullopt where nothing but hand-offs was matched.
std::optional<double> WaitRatioOutsidePipeline(const RankWait& wait);

// A rank's pipeline bubble over all its steps: torch_npu's Bubble (or its p2p wait), else on GPUs the wait of
// its p2p kernels. The GPU wait sits inside the exposed communication; the split takes it out so the parts
// add up to the step and the bubble is never counted as exposed.
struct BubbleSplit {
  int64_t bubble_ns = 0;
  int64_t exposed_ns = 0;  // exposed communication less the bubble it held
};

BubbleSplit SplitBubble(const CrossRankCommunication& x, const RankCommunication& r);

// Thresholds of the verdict (bandwidth utilization < 50 %; msprof Wait Time Ratio > 0.2; a pipeline stage
// waiting above 10 % of its step, as the advisor's pipeline_bubble_pct).
struct CommThresholds {
  double utilization = 0.5;
  double exposed_share_of_wall = 0.2;
  double wait_ratio = 0.2;
  double bubble_share_of_step = 0.1;
};

// A figure of a verdict's reason over the ranks it fired on: its smallest and largest value.
struct ReasonFigure {
  double min = 0;
  double max = 0;
  int decimals = 1;
  std::string unit;  // "ms per step", "%", "GB/s"
};

// The verdict's reasons with the ranks folded together: one per rule and what it names (a collective
// type on a link, a transport, the straggler), the ranks it fired on, and the range of its figures. On
// many ranks the per-rank lines say the same thing a thousand times.
struct ReasonGroup {
  std::string what;  // "exposed communication per step above 20.0 % of the step's device span"
  std::vector<int64_t> ranks;
  std::vector<ReasonFigure> figures;
};

struct CommAnalysis {
  std::vector<RankCommunication> ranks;
  CrossRankCommunication cross_rank;
  CommThresholds thresholds;
  bool bottleneck = false;                 // communication is a bottleneck by any rule below
  std::vector<std::string> reasons;        // one line per rule that fired, naming ranks and collectives
  std::vector<ReasonGroup> reason_groups;  // the same, one per rule and subject, ranks folded (in first-fired order)
};

// Everything for the advisor and `tuneprof comm`. The three vectors run in parallel (one entry per rank).
CommAnalysis AnalyzeCommunication(const std::vector<Trace>& traces, const std::vector<RankBreakdown>& breakdowns,
                                  const std::vector<HardwareSelection>& hardware, CommThresholds thresholds = {});

// The verdict over per-rank results already computed (what AnalyzeCommunication ends with).
void JudgeCommunication(CommAnalysis* analysis);

// The ranks that stand out, for views of many ranks that cannot list each: the straggler, the ranks the
// HCCL rule names, the outlier tests' ranks, the ranks with the least and most exposed communication and
// the most wait, and the first rank. Sorted, each once.
std::vector<int64_t> NotableRanks(const CommAnalysis& analysis);

}  // namespace tuneprof

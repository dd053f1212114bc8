#pragma once
// Each lost time charged once across the ranks of a run: findings on one rank's time that another finding
// already claims (the wait for a late rank, a waiting pipeline stage's compute, one idle part named by two
// catch-all findings) keep only what is left, with the cut said in the finding.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/finding.h"
#include "analysis/advisor/time_split.h"
#include "analysis/comm/comm_cross_rank.h"
#include "analysis/comm/pipeline_stages.h"
#include "analysis/compute/moe_balance.h"

namespace tuneprof {

// Each rank's capped gain of each finding, for what the late rank's findings explain of the others' wait.
class RankGains {
 public:
  void Add(const Finding& finding, int64_t rank) {
    double& gain = by_id_[finding.id][rank];
    gain = std::max(gain, finding.estimated_gain_ns);
  }

  // What `late` loses beyond the other ranks to the work `finding` names: its gain minus the median of
  // the other `ranks` - 1 ranks' (0 where the finding did not fire), never below 0. Work every rank does
  // alike (the framework's overhead) makes nobody late.
  double Excess(const Finding& finding, int64_t late, size_t ranks) const {
    if (ranks < 2) return 0;
    return std::max(0.0, GainOf(finding, late) - OthersMedian(finding, late, ranks));
  }

  // `rank`'s gain of `finding` (0 where it did not fire there).
  double GainOf(const Finding& finding, int64_t rank) const {
    const auto it = by_id_.find(finding.id);
    if (it == by_id_.end()) return 0;
    const auto gain = it->second.find(rank);
    return gain == it->second.end() ? 0 : gain->second;
  }

  // The median of the gains of the `ranks` - 1 ranks other than `rank` (0 where it did not fire).
  double OthersMedian(const Finding& finding, int64_t rank, size_t ranks) const {
    const auto it = by_id_.find(finding.id);
    if (it == by_id_.end() || ranks < 2) return 0;
    std::vector<double> others;
    for (const auto& [other, gain] : it->second) {
      if (other != rank) others.push_back(gain);
    }
    if (others.size() < ranks - 1) others.resize(ranks - 1, 0.0);
    std::sort(others.begin(), others.end());
    const size_t n = others.size();
    return n % 2 == 1 ? others[n / 2] : (others[n / 2 - 1] + others[n / 2]) / 2;
  }

 private:
  std::map<std::string_view, std::map<int64_t, double>> by_id_;  // id (pooled) -> rank -> its largest gain
};

// Each part's largest time per step over the ranks: what findings of that part can claim across the run.
using PartTimes = std::array<double, static_cast<size_t>(TimePart::kCount)>;

// Notes the other ranks' median gain on a finding whose quoted rank gains at least twice as much (a
// straggler's host stall quoted as every rank's launch overhead, say).
void NoteOthersMedian(const RankGains& gains, size_t ranks, Finding* finding);

// The others' wait for the late rank is lost to that rank's extra work: where findings on its own time
// (host, compute, data, copies; not communication, and not a catch-all symptom) cost it more than they
// cost the other ranks, that excess is the wait again, and communication.straggler keeps only what the
// excesses leave of it, so that the run's gains do not count one lost time twice.
void KeepWaitNotExplained(const RankGains& gains, size_t ranks, std::vector<Finding>* findings);

// communication.exposed counts the whole exposed time of its rank, which holds that rank's wait for the last
// arrival at each collective. Where a finding names that wait's cause, the wait is charged once, to the cause:
// exposed communication keeps only what is left (at most the exposed time less the wait), which is what
// overlapping the collectives with compute could still hide. The wait is the timeline's; where the input has
// no timeline and the cause is an uneven MoE load, it is the rank's wait for the slowest expert-parallel rank
// at each grouped-GEMM call (`moe`, may be null).
void ChargeWaitToItsCause(const std::vector<const RankCommunication*>& comm, const CrossRankCommunication* cross,
                          const MoeBalance* moe, std::vector<Finding>* findings);

// On a pipeline every micro-batch passes the slowest stage, so a stage that works less waits for it: its
// own kernels finishing sooner only lengthen that wait. Its compute findings save nothing of the step;
// the same findings on the bounding stage's ranks keep their gains, which the merge across ranks then quotes.
void NoStepGainOffBoundingStage(const PipelineAnalysis& p, int64_t rank, std::vector<Finding>* findings);

// Merged across ranks, two findings of one part may quote two ranks and together claim more than either
// rank has of it: each claim, with the larger claims on its part, stays within the part of the rank it quotes.
void KeepPartClaimsWithinQuotedRanks(const std::vector<RankAdvice>& ranks, std::vector<Finding>* findings);

// Raises each part's largest time per step over the ranks to `split`'s.
void AddLargestParts(const TimeSplit& split, PartTimes* most);

// Catch-all findings (the idle chunks of a run, by two readings) name one symptom: on each rank the first
// takes the part's time (CapGains), but on another rank the other may come first, and the merged list would
// claim the time once per finding. Across the run they share the part's largest time: the largest gain keeps
// it, the next keeps what is left.
void ShareCatchAllParts(const PartTimes& most, std::vector<Finding>* findings);

}  // namespace tuneprof

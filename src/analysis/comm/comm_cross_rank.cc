#include "analysis/comm/comm_cross_rank.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "analysis/comm/ascend_slow_rank.h"
#include "analysis/comm/collective_matching.h"
#include "analysis/comm/comm_links.h"
#include "analysis/comm/comm_text.h"
#include "analysis/comm/pipeline_placement.h"
#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

using Arrival = MatchedArrival;

bool OneType(const std::vector<Arrival>& arrivals) {
  return std::all_of(arrivals.begin(), arrivals.end(),
                     [&](const Arrival& a) { return a.collective->type == arrivals.front().collective->type; });
}

// Each rank's communication and wait as time intervals; several collectives in flight at once (gloo runs
// one per worker thread) wait for the same late rank once, so the times are unions, not sums.
struct WaitIntervals {
  std::vector<std::vector<Interval>> communication, wait;                      // per rank index
  std::vector<std::vector<Interval>> pipeline_communication, pipeline_wait;    // the hand-offs alone
  std::map<std::pair<size_t, size_t>, std::vector<Interval>> caused;           // (straggler, waiting rank)
  std::map<std::pair<size_t, size_t>, std::vector<Interval>> pipeline_caused;  // the same at hand-offs
  // (late rank, median rank): the median rank's waits the late rank's windows were charged for, on the
  // median rank's clock, so that a wait shared by collectives in flight at once is charged once.
  std::map<std::pair<size_t, size_t>, std::vector<Interval>> charged;
  std::vector<int64_t> charged_sum;  // per late rank: the windows charged, summed
};

// A late rank's operator diff against the median ranks, summed over its late collectives: name -> ns, and
// how often each rank (by index) was the median it was compared with.
struct LateOperatorDiff {
  std::map<std::string, int64_t> extra_ns;
  std::map<size_t, uint64_t> against;
};
using LateOperatorDiffs = std::map<size_t, LateOperatorDiff>;  // by the late rank's index

const CollectiveLeadIn* LeadInOf(const std::vector<RankCommunication>& ranks, const Arrival& a) {
  const RankCommunication& r = ranks[a.rank_index];
  const size_t i = static_cast<size_t>(a.collective - r.collectives.data());
  return i < r.lead_ins.size() ? &r.lead_ins[i] : nullptr;
}

// The collective as the critical path sees it (critical_path.h). A group's first collective on the rank
// has no lead-in (no earlier end of the group to start from): the path measures it from what came before.
CriticalLink LinkOf(const RankCommunication& rank, const Collective& c, const CollectiveLeadIn& lead_in,
                    int64_t aligned_arrival, int64_t held_up, bool by_peer) {
  CriticalLink link;
  if (c.sequence == 0) link.lead_in_from = LeadInFrom::kUnmeasured;
  link.paired_by_peer = by_peer;
  link.step = c.step;
  link.group = c.group;
  link.sequence = c.sequence;
  link.type = c.type;
  link.last_rank = rank.rank;
  link.aligned_arrival_ns = aligned_arrival;
  link.lead_in_causes = lead_in.causes;
  for (int64_t ns : lead_in.causes) link.lead_in_ns += ns;
  link.transfer_ns = c.duration_ns;
  link.held_up_ns = held_up;
  link.group_size = c.group_size;
  return link;
}

// The window the last rank held the collective up: its arrival minus the median arrival of the others
// (the lower median; for two ranks, the other one), at most the median rank's collective (its wait ends
// there, whenever the late rank arrives), charged to what its lead-in has more of than the median rank's
// (wait_causes.h). A pipeline hand-off (`hand_off`) is left out of the rank's wait causes: the pipeline
// stages charge its wait once, to the slowest stage's compute and the schedule's fill / drain, and a late
// stage's lead-in (its compute for the micro-batch it hands on) would charge it again; the critical path
// still gets the link. Returns whether every arrival had its lead-in.
bool ChargeLastArrival(const std::vector<RankCommunication>& ranks, const std::vector<Arrival>& arrivals,
                       const Arrival& last, const std::vector<int64_t>& aligned_starts, bool hand_off,
                       std::vector<RankWait>* waits, WaitIntervals* intervals, LateOperatorDiffs* diffs,
                       std::vector<CriticalLink>* links) {
  for (const Arrival& a : arrivals) {
    if (LeadInOf(ranks, a) == nullptr) return false;
  }
  std::vector<std::pair<int64_t, size_t>> others;  // aligned start, position in `arrivals`
  for (size_t i = 0; i < arrivals.size(); ++i) {
    if (&arrivals[i] != &last) others.emplace_back(aligned_starts[i], i);
  }
  const size_t mid = (others.size() - 1) / 2;
  std::nth_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(mid), others.end());
  const Arrival& median = arrivals[others[mid].second];
  const int64_t last_start = aligned_starts[static_cast<size_t>(&last - arrivals.data())];
  const int64_t window = std::min(last_start - others[mid].first, median.collective->duration_ns);
  const CollectiveLeadIn& lead_in = *LeadInOf(ranks, last);
  const RankCommunication& rank = ranks[last.rank_index];
  std::vector<int64_t> matched;
  for (const Arrival& a : arrivals) matched.push_back(ranks[a.rank_index].rank);
  std::sort(matched.begin(), matched.end());
  if (window <= 0) {
    links->push_back(LinkOf(rank, *last.collective, lead_in, last_start, 0, last.by_peer));
    links->back().ranks = std::move(matched);
    return true;
  }
  RankWait& w = (*waits)[last.rank_index];
  const WaitCauseTimes charged = ChargeWindow(lead_in, *LeadInOf(ranks, median), window);
  const int64_t added = window - charged[static_cast<size_t>(WaitCause::kUnexplained)];
  links->push_back(LinkOf(rank, *last.collective, lead_in, last_start, added, last.by_peer));
  links->back().ranks = std::move(matched);
  if (hand_off) {
    if (window >= kMinLatenessNs) ++w.late_hand_offs;
    return true;
  }
  for (size_t c = 0; c < kWaitCauseCount; ++c) w.held_up_by_cause[c] += charged[c];
  w.held_up_ns += added;
  const int64_t median_start = median.collective->start_ns;
  intervals->charged[{last.rank_index, median.rank_index}].push_back(Interval{median_start, median_start + window});
  intervals->charged_sum[last.rank_index] += window;
  // Counted by the wait the others had, as times_last counts arrivals, not by the part explained.
  if (window < kMinLatenessNs) return true;
  ++w.late_collectives;
  LateOperatorDiff& diff = (*diffs)[last.rank_index];
  AddLeadOperators(*LeadInOf(ranks, last), 1, &diff.extra_ns);
  AddLeadOperators(*LeadInOf(ranks, median), -1, &diff.extra_ns);
  ++diff.against[median.rank_index];
  return true;
}

// The most a late rank's operator can have run more than the rank it is compared with (the median rank it
// was compared with most often): their whole compute difference over the late rank's steps, as the window
// diffs sum lead-ins, which can hold compute the other rank ran outside its own. Unbounded where either rank
// has no compute time (a CPU-only rank's operators are host work).
int64_t OperatorExtraCapNs(const std::vector<RankCommunication>& ranks, size_t late, const LateOperatorDiff& diff) {
  constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
  const auto most = std::max_element(diff.against.begin(), diff.against.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most == diff.against.end()) return kUnbounded;
  const RankCommunication& slow = ranks[late];
  const RankCommunication& other = ranks[most->first];
  if (slow.computing_ns <= 0 || other.computing_ns <= 0 || slow.steps == 0 || other.steps == 0) return kUnbounded;
  const double other_scaled =
      static_cast<double>(other.computing_ns) * static_cast<double>(slow.steps) / static_cast<double>(other.steps);
  return std::max<int64_t>(std::llround(static_cast<double>(slow.computing_ns) - other_scaled), 0);
}

// Keeps each late rank's operators with the most extra time; together they claim no more than
// OperatorExtraCapNs, the largest first (the rest get what is left of it).
void KeepLargestExtras(const std::vector<RankCommunication>& ranks, LateOperatorDiffs diffs,
                       std::vector<RankWait>* waits) {
  for (auto& [index, diff] : diffs) {
    std::vector<LeadOperator> extra;
    for (auto& [name, ns] : diff.extra_ns) {
      if (ns > 0) extra.push_back(LeadOperator{name, ns});
    }
    std::sort(extra.begin(), extra.end(), [](const LeadOperator& a, const LeadOperator& b) {
      return a.ns != b.ns ? a.ns > b.ns : a.name.view() < b.name.view();
    });
    int64_t left = OperatorExtraCapNs(ranks, index, diff);
    size_t kept = 0;
    for (; kept < extra.size() && kept < kMaxLeadOperators && left > 0; ++kept) {
      extra[kept].ns = std::min(extra[kept].ns, left);
      left -= extra[kept].ns;
    }
    extra.resize(kept);
    (*waits)[index].late_operator_extra = std::move(extra);
  }
}

// Each input rank's pipeline stage, by its index (kNoId: none), looked up once rather than per arrival.
std::vector<int64_t> StagesByIndex(const std::vector<RankCommunication>& ranks,
                                   const std::optional<PipelineAnalysis>& pipeline) {
  std::vector<int64_t> out(ranks.size(), kNoId);
  if (!pipeline) return out;
  std::map<int64_t, int64_t> stage_of;  // rank id -> stage
  for (const PipelineStage& stage : pipeline->stages) {
    for (int64_t rank : stage.ranks) stage_of.emplace(rank, stage.stage);
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    const auto it = stage_of.find(ranks[i].rank);
    if (it != stage_of.end()) out[i] = it->second;
  }
  return out;
}

// A matched collective between ranks of different pipeline stages: a hand-off of the pipeline.
bool IsHandOff(const std::vector<Arrival>& arrivals, const std::vector<int64_t>& stages) {
  for (const Arrival& a : arrivals) {
    if (stages[a.rank_index] == kNoId) return false;
  }
  return std::any_of(arrivals.begin(), arrivals.end(),
                     [&](const Arrival& a) { return stages[a.rank_index] != stages[arrivals.front().rank_index]; });
}

// Starts compared across ranks are on the reference rank's clock (clock_alignment.h); each rank's own
// intervals stay on its own clock. `margins` gets, for the last rank, by how much it was last, where the
// collective is no pipeline hand-off (`hand_off`): those name no straggler.
bool SplitWait(const std::vector<RankCommunication>& ranks, const std::vector<Arrival>& arrivals, bool hand_off,
               const ClockAlignment& clocks, std::vector<RankWait>* waits, WaitIntervals* intervals,
               std::vector<std::vector<int64_t>>* margins, LateOperatorDiffs* diffs, std::vector<CriticalLink>* links) {
  auto aligned = [&](const Arrival& a) { return a.collective->start_ns - clocks.ranks[a.rank_index].correction_ns(); };
  const auto last = std::max_element(arrivals.begin(), arrivals.end(),
                                     [&](const Arrival& a, const Arrival& b) { return aligned(a) < aligned(b); });
  const int64_t last_start = aligned(*last);
  int64_t second_start = std::numeric_limits<int64_t>::min();
  for (const Arrival& a : arrivals) {
    const int64_t start = a.collective->start_ns, duration = a.collective->duration_ns;
    const int64_t wait = std::clamp<int64_t>(last_start - aligned(a), 0, duration);
    if (&a != &*last) second_start = std::max(second_start, aligned(a));
    ++(*waits)[a.rank_index].matched;
    intervals->communication[a.rank_index].push_back(Interval{start, start + duration});
    intervals->wait[a.rank_index].push_back(Interval{start, start + wait});
    intervals->caused[{last->rank_index, a.rank_index}].push_back(Interval{start, start + wait});
    if (!hand_off) continue;
    intervals->pipeline_communication[a.rank_index].push_back(Interval{start, start + duration});
    intervals->pipeline_wait[a.rank_index].push_back(Interval{start, start + wait});
    intervals->pipeline_caused[{last->rank_index, a.rank_index}].push_back(Interval{start, start + wait});
  }
  ++(*waits)[last->rank_index].times_last;
  if (!hand_off) (*margins)[last->rank_index].push_back(last_start - second_start);
  std::vector<int64_t> aligned_starts;
  for (const Arrival& a : arrivals) aligned_starts.push_back(aligned(a));
  return ChargeLastArrival(ranks, arrivals, *last, aligned_starts, hand_off, waits, intervals, diffs, links);
}

// Windows of collectives in flight at once on the median rank cover the same wait: each late rank is
// charged the union of the waits it caused once. As for one window (ChargeWindow), the causes found come
// first, in proportion where they exceed it; what they do not cover is unexplained.
void ChargeEachWaitOnce(const WaitIntervals& intervals, std::vector<RankWait>* waits) {
  std::vector<int64_t> once(waits->size(), 0);
  for (const auto& [pair, charged] : intervals.charged) once[pair.first] += TotalLength(UnionOf(charged));
  const size_t unexplained = static_cast<size_t>(WaitCause::kUnexplained);
  for (size_t r = 0; r < waits->size(); ++r) {
    if (once[r] >= intervals.charged_sum[r]) continue;
    RankWait& w = (*waits)[r];
    if (w.held_up_ns > once[r]) {
      const double scale = static_cast<double>(once[r]) / static_cast<double>(w.held_up_ns);
      w.held_up_ns = 0;
      for (size_t c = 0; c < kWaitCauseCount; ++c) {
        if (c == unexplained) continue;
        w.held_up_by_cause[c] = std::llround(static_cast<double>(w.held_up_by_cause[c]) * scale);
        w.held_up_ns += w.held_up_by_cause[c];
      }
    }
    w.held_up_by_cause[unexplained] = std::max<int64_t>(once[r] - w.held_up_ns, 0);
  }
}

// (late rank index, waiting rank index) -> the waiting rank's wait the late rank caused outside the hand-offs.
using CausedWaits = std::map<std::pair<size_t, size_t>, int64_t>;

void MeasureWaits(WaitIntervals intervals, std::vector<RankWait>* waits, CausedWaits* caused_outside) {
  for (size_t r = 0; r < waits->size(); ++r) {
    RankWait& w = (*waits)[r];
    w.communication_ns = TotalLength(UnionOf(std::move(intervals.communication[r])));
    w.wait_ns = TotalLength(UnionOf(std::move(intervals.wait[r])));
    w.transfer_ns = w.communication_ns - w.wait_ns;
  }
  for (auto& [pair, caused] : intervals.caused) {
    const int64_t length = TotalLength(UnionOf(std::move(caused)));
    (*waits)[pair.first].wait_caused_ns += length;
    (*caused_outside)[pair] = length;
  }
  for (size_t r = 0; r < waits->size(); ++r) {
    RankWait& w = (*waits)[r];
    w.pipeline_communication_ns = TotalLength(UnionOf(std::move(intervals.pipeline_communication[r])));
    w.pipeline_wait_ns = TotalLength(UnionOf(std::move(intervals.pipeline_wait[r])));
  }
  for (auto& [pair, caused] : intervals.pipeline_caused) {
    const int64_t length = TotalLength(UnionOf(std::move(caused)));
    (*waits)[pair.first].pipeline_wait_caused_ns += length;
    int64_t& outside = (*caused_outside)[pair];
    outside = std::max<int64_t>(outside - length, 0);
  }
}

// Each rank's wait at the collectives the straggler arrived at last: what the straggler finding quotes,
// rather than the rank's wait at every collective, whoever was last there.
void MeasureWaitsForStraggler(const CausedWaits& caused_outside, CrossRankCommunication* out) {
  if (!out->straggler_rank) return;
  size_t late = out->ranks.size();
  for (size_t r = 0; r < out->ranks.size(); ++r) {
    if (out->ranks[r].rank == *out->straggler_rank) late = r;
  }
  for (auto it = caused_outside.lower_bound({late, 0}); it != caused_outside.end() && it->first.first == late; ++it) {
    out->ranks[it->first.second].wait_for_straggler_ns = it->second;
  }
}

// The wait a rank's late arrivals caused at collectives other than the pipeline's hand-offs.
int64_t CausedOutsidePipeline(const RankWait& w) {
  return std::max<int64_t>(w.wait_caused_ns - w.pipeline_wait_caused_ns, 0);
}

// The mean, not the median: a rank late by 20 ms once a step and by a hair at other collectives is a
// straggler, and the median would keep only the hairs.
int64_t MeanOf(const std::vector<int64_t>& values) {
  double sum = 0;
  for (int64_t v : values) sum += static_cast<double>(v);
  return static_cast<int64_t>(std::llround(sum / static_cast<double>(values.size())));
}

// A rank last by less than this on average is launch jitter (NCCL kernels start microseconds apart), not a
// late rank, however often it is last.
constexpr int64_t kMinStragglerLatenessNs = kMinLatenessNs;

// A straggler is named only when it arrived last by more than the clocks can be wrong: its residual
// clock error plus the largest of the other ranks'.
void CheckAgainstClocks(const std::vector<int64_t>& margins, size_t straggler, CrossRankCommunication* out) {
  if (margins.empty()) return;
  out->straggler_lateness_ns = MeanOf(margins);
  int64_t others = 0;
  for (size_t r = 0; r < out->clocks.ranks.size(); ++r) {
    if (r != straggler) others = std::max(others, out->clocks.ranks[r].residual_ns());
  }
  const int64_t doubt = out->clocks.ranks[straggler].residual_ns() + others;
  out->straggler_clock_doubt_ns = doubt;
  if (*out->straggler_lateness_ns > doubt) {
    if (*out->straggler_lateness_ns >= kMinStragglerLatenessNs || !out->straggler_stands_out) return;
    out->straggler_stands_out = false;
    out->straggler_reason += Printf("; but it was last by only %.3f ms (mean): launch jitter, not a late rank",
                                    static_cast<double>(*out->straggler_lateness_ns) / 1e6);
    return;
  }
  out->straggler_within_clock_uncertainty = true;
  out->straggler_stands_out = false;
  out->straggler_reason +=
      Printf("; but it was last by %.3f ms (mean), within the clocks' uncertainty of %.3f ms",
             static_cast<double>(*out->straggler_lateness_ns) / 1e6, static_cast<double>(doubt) / 1e6);
}

// The rank other than `best` whose late arrivals made the others wait longest.
int64_t OtherLongestCause(const CrossRankCommunication& x, const RankWait& best) {
  const RankWait* other = nullptr;
  for (const RankWait& w : x.ranks) {
    if (&w != &best && (other == nullptr || w.wait_caused_ns > other->wait_caused_ns)) other = &w;
  }
  return other == nullptr ? best.rank : other->rank;
}

// No straggler where every wait was at the pipeline's hand-offs: says so, with the wait they held.
void SayPipelineExplainsWaits(CrossRankCommunication* out) {
  int64_t at_hand_offs = 0;
  for (const RankWait& w : out->ranks) at_hand_offs += w.pipeline_wait_caused_ns;
  if (at_hand_offs <= 0) return;
  const PipelineAnalysis& p = *out->pipeline;
  const std::string cause =
      StagesEven(p) ? std::string("the stages are even, so it is the schedule's fill and drain")
                    : Printf("stage %lld computes most and bounds the step", static_cast<long long>(p.slowest_stage));
  out->straggler_reason = Printf(
      "the late arrivals are the pipeline's hand-offs between stages (others waited %.3f ms at them, summed over "
      "the waiting ranks): %s, and the pipeline stages charge that wait once, to what caused it",
      static_cast<double>(at_hand_offs) / 1e6, cause.c_str());
}

void NameStraggler(const std::vector<std::vector<int64_t>>& margins, CrossRankCommunication* out) {
  const RankWait* best = nullptr;
  for (const RankWait& w : out->ranks) {
    if (w.times_last == 0) continue;
    if (best == nullptr || CausedOutsidePipeline(w) > CausedOutsidePipeline(*best) ||
        (CausedOutsidePipeline(w) == CausedOutsidePipeline(*best) && w.times_last > best->times_last)) {
      best = &w;
    }
  }
  if (best == nullptr || CausedOutsidePipeline(*best) == 0) {
    if (out->pipeline) SayPipelineExplainsWaits(out);
    return;
  }
  out->straggler_rank = best->rank;
  int64_t caused_by_others = 0;
  for (const RankWait& w : out->ranks) {
    if (&w != best) caused_by_others = std::max(caused_by_others, CausedOutsidePipeline(w));
  }
  out->straggler_stands_out = CausedOutsidePipeline(*best) >= 2 * caused_by_others;
  out->straggler_reason = Printf(
      "last at %llu of %llu matched collectives; others waited %.3f ms for it, summed over "
      "the waiting ranks",
      static_cast<unsigned long long>(best->times_last), static_cast<unsigned long long>(out->matched_collectives),
      static_cast<double>(CausedOutsidePipeline(*best)) / 1e6);
  if (best->pipeline_wait_caused_ns > 0) {
    out->straggler_reason +=
        "; the pipeline's hand-offs between stages, where the stage imbalance and the schedule explain the wait, "
        "left out";
  }
  if (!out->straggler_stands_out) {
    out->straggler_reason +=
        Printf("; but not twice as long as rank %lld's late arrivals made them wait (%.3f ms)",
               static_cast<long long>(OtherLongestCause(*out, *best)), static_cast<double>(caused_by_others) / 1e6);
  }
  const size_t index = static_cast<size_t>(best - out->ranks.data());
  CheckAgainstClocks(margins[index], index, out);
}

// The recipe's vote: per matched collective, the test over the ranks' durations (shortest = suspect);
// send/recv pairs are left out as the recipe leaves them out (their durations are not comparable).
void VoteSlowRanks(const std::vector<Arrival>& arrivals, CrossRankCommunication* out) {
  if (arrivals.front().collective->type == CollectiveType::kSendRecv) return;
  std::vector<double> durations;
  for (const Arrival& a : arrivals) durations.push_back(static_cast<double>(a.collective->duration_ns));
  const OutlierTest test = TestOutliers(durations, SuspectEnd::kShortest);
  if (!test.statistic) return;
  ++out->vote_collectives;
  for (size_t i : test.outliers) ++out->ranks[arrivals[i].rank_index].slow_affect_count;
}

StepSpread Spread(const std::vector<RankCommunication>& ranks, std::string metric, int64_t RankCommunication::*field) {
  StepSpread out;
  out.metric = std::move(metric);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int64_t v = ranks[i].*field;
    if (i == 0 || v < out.min_ns) {
      out.min_ns = v;
      out.min_rank = ranks[i].rank;
    }
    if (i == 0 || v > out.max_ns) {
      out.max_ns = v;
      out.max_rank = ranks[i].rank;
    }
  }
  const double step = MeanReportedStepsNs(ranks);
  if (step > 0) {
    out.share_of_step = static_cast<double>(out.max_ns - out.min_ns) / step;
    out.uneven = *out.share_of_step > kStepSpreadThreshold;
  }
  return out;
}

// Ranks without the metric (no communication at all, no compute) are not part of the sample.
RankOutlierTest TestRanks(const std::vector<RankCommunication>& ranks, std::string metric,
                          int64_t RankCommunication::*field, SuspectEnd end) {
  RankOutlierTest out;
  out.metric = std::move(metric);
  for (const RankCommunication& r : ranks) {
    if (r.*field <= 0) continue;
    out.ranks.push_back(r.rank);
    out.values_ms.push_back(static_cast<double>(r.*field) / 1e6);
  }
  out.test = TestOutliers(out.values_ms, end);
  for (size_t i : out.test.outliers) out.outlier_ranks.push_back(out.ranks[i]);
  return out;
}

void ClusterView(const std::vector<RankCommunication>& ranks, CrossRankCommunication* out) {
  if (ranks.size() < 2) return;
  out->step_spread.push_back(Spread(ranks, "computing", &RankCommunication::computing_ns));
  out->step_spread.push_back(Spread(ranks, "exposed_communication", &RankCommunication::exposed_communication_ns));
  out->step_spread.push_back(Spread(ranks, "free", &RankCommunication::free_ns));
  out->outliers.push_back(
      TestRanks(ranks, "communication", &RankCommunication::communication_ns, SuspectEnd::kShortest));
  out->outliers.push_back(TestRanks(ranks, "computing", &RankCommunication::computing_ns, SuspectEnd::kLongest));
}

}  // namespace

std::optional<double> WaitRatioOutsidePipeline(const RankWait& wait) {
  const int64_t communication = wait.communication_ns - wait.pipeline_communication_ns;
  if (communication <= 0) return std::nullopt;
  const int64_t waited = std::clamp<int64_t>(wait.wait_ns - wait.pipeline_wait_ns, 0, communication);
  return static_cast<double>(waited) / static_cast<double>(communication);
}

double MeanReportedStepsNs(const std::vector<RankCommunication>& ranks) {
  if (ranks.empty()) return 0;
  double sum = 0;
  for (const RankCommunication& r : ranks) {
    const int64_t steps = ReportedStepsNs(r);
    sum += static_cast<double>(steps > 0 ? steps : r.wall_ns);
  }
  return sum / static_cast<double>(ranks.size());
}

CrossRankCommunication AnalyzeAcrossRanks(const std::vector<RankCommunication>& ranks) {
  CrossRankCommunication out;
  out.ranks.resize(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    out.ranks[r].rank = ranks[r].rank;
    if (!ranks[r].collectives.empty()) ++out.ranks_with_collectives;
  }
  out.clocks = EstimateClockOffsets(ranks);
  WaitIntervals intervals;
  intervals.communication.resize(ranks.size());
  intervals.wait.resize(ranks.size());
  intervals.charged_sum.resize(ranks.size());
  intervals.pipeline_communication.resize(ranks.size());
  intervals.pipeline_wait.resize(ranks.size());
  // Before the matching: which collectives are the pipeline's hand-offs.
  out.pipeline = AnalyzePipelineStages(ranks, out.clocks);
  const std::vector<int64_t> stages = StagesByIndex(ranks, out.pipeline);
  std::vector<std::vector<int64_t>> margins(ranks.size());
  LateOperatorDiffs diffs;
  for (const auto& [key, arrivals] : MatchAcrossRanks(ranks)) {
    if (arrivals.size() < 2 || !OneType(arrivals)) {
      out.unmatched_collectives += arrivals.size();
      continue;
    }
    ++out.matched_collectives;
    const bool hand_off = IsHandOff(arrivals, stages);
    if (SplitWait(ranks, arrivals, hand_off, out.clocks, &out.ranks, &intervals, &margins, &diffs,
                  &out.critical_links)) {
      out.wait_causes_known = true;
    }
    VoteSlowRanks(arrivals, &out);
  }
  ChargeEachWaitOnce(intervals, &out.ranks);
  CausedWaits caused_outside;
  MeasureWaits(std::move(intervals), &out.ranks, &caused_outside);
  KeepLargestExtras(ranks, std::move(diffs), &out.ranks);
  for (RankWait& w : out.ranks) {
    if (w.communication_ns > 0) w.wait_ratio = static_cast<double>(w.wait_ns) / static_cast<double>(w.communication_ns);
  }
  NameStraggler(margins, &out);
  MeasureWaitsForStraggler(caused_outside, &out);
  AscendSlowRank ascend = JudgeAscendSlowRank(ranks, out.pipeline);
  out.ascend_verdict = std::move(ascend.verdict);
  out.ascend_max_wait_rank = ascend.max_wait_rank;
  out.ascend_slow_rank = ascend.slow_rank;
  ClusterView(ranks, &out);
  out.groups = SummarizeGroups(ranks, out.clocks);
  // Roles again, now that the stage inference says which send / recv groups chain stages (one rule for both).
  const std::set<std::string> pipeline_groups = InferredPipelineGroups(ranks);
  int64_t input_world = 0;
  for (const RankCommunication& r : ranks) input_world = std::max(input_world, r.rank + 1);
  AssignRoles(&out.groups, &pipeline_groups, input_world);
  out.domains = SummarizeDomains(out.groups);
  out.transport_spread = SpreadOfTransports(ranks);
  out.retransmissions = FindRetransmissions(ranks);
  out.slowest_vs_fastest = DiffSlowestAndFastestRank(ranks);
  return out;
}

CommAnalysis AnalyzeCommunication(const std::vector<Trace>& traces, const std::vector<RankBreakdown>& breakdowns,
                                  const std::vector<HardwareSelection>& hardware, CommThresholds thresholds) {
  CommAnalysis analysis;
  analysis.thresholds = thresholds;
  for (size_t i = 0; i < traces.size() && i < breakdowns.size() && i < hardware.size(); ++i) {
    analysis.ranks.push_back(AnalyzeRankCommunication(traces[i], breakdowns[i], hardware[i]));
  }
  ResolveLinkRanks(&analysis.ranks);
  analysis.cross_rank = AnalyzeAcrossRanks(analysis.ranks);
  JudgeCommunication(&analysis);
  return analysis;
}

}  // namespace tuneprof

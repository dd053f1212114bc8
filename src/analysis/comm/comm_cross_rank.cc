#include "analysis/comm/comm_cross_rank.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include <cstdarg>
#include <cstdio>

#include "analysis/comm/comm_links.h"
#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

// printf-style text for the verdict lines (the analysis layer does not link fmt).
std::string Printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  return buffer;
}

struct Arrival {
  size_t rank_index = 0;
  const Collective* collective = nullptr;
};

using MatchKey = std::pair<std::string, int64_t>;  // (group, sequence)

std::map<MatchKey, std::vector<Arrival>> GroupByKey(const std::vector<RankCommunication>& ranks) {
  std::map<MatchKey, std::vector<Arrival>> by_key;
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const Collective& c : ranks[r].collectives) by_key[{c.group, c.sequence}].push_back(Arrival{r, &c});
  }
  return by_key;
}

bool OneType(const std::vector<Arrival>& arrivals) {
  return std::all_of(arrivals.begin(), arrivals.end(),
                     [&](const Arrival& a) { return a.collective->type == arrivals.front().collective->type; });
}

// Each rank's communication and wait as time intervals; several collectives in flight at once (gloo runs
// one per worker thread) wait for the same late rank once, so the times are unions, not sums.
struct WaitIntervals {
  std::vector<std::vector<Interval>> communication, wait;             // per rank index
  std::map<std::pair<size_t, size_t>, std::vector<Interval>> caused;  // (straggler, waiting rank)
  // (late rank, median rank): the median rank's waits the late rank's windows were charged for, on the
  // median rank's clock, so that a wait shared by collectives in flight at once is charged once.
  std::map<std::pair<size_t, size_t>, std::vector<Interval>> charged;
  std::vector<int64_t> charged_sum;  // per late rank: the windows charged, summed
};

// The operator diffs of late ranks against the median rank, summed over their late collectives.
using OperatorDiffs = std::map<size_t, std::map<std::string, int64_t>>;  // rank index -> name -> ns

const CollectiveLeadIn* LeadInOf(const std::vector<RankCommunication>& ranks, const Arrival& a) {
  const RankCommunication& r = ranks[a.rank_index];
  const size_t i = static_cast<size_t>(a.collective - r.collectives.data());
  return i < r.lead_ins.size() ? &r.lead_ins[i] : nullptr;
}

// The collective as the critical path sees it (critical_path.h).
CriticalLink LinkOf(const RankCommunication& rank, const Collective& c, const CollectiveLeadIn& lead_in,
                    int64_t aligned_arrival, int64_t held_up) {
  CriticalLink link;
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
// (wait_causes.h). Returns whether every arrival had its lead-in.
bool ChargeLastArrival(const std::vector<RankCommunication>& ranks, const std::vector<Arrival>& arrivals,
                       const Arrival& last, const std::vector<int64_t>& aligned_starts, std::vector<RankWait>* waits,
                       WaitIntervals* intervals, OperatorDiffs* diffs, std::vector<CriticalLink>* links) {
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
    links->push_back(LinkOf(rank, *last.collective, lead_in, last_start, 0));
    links->back().ranks = std::move(matched);
    return true;
  }
  RankWait& w = (*waits)[last.rank_index];
  const WaitCauseTimes charged = ChargeWindow(lead_in, *LeadInOf(ranks, median), window);
  for (size_t c = 0; c < kWaitCauseCount; ++c) w.held_up_by_cause[c] += charged[c];
  const int64_t added = window - charged[static_cast<size_t>(WaitCause::kUnexplained)];
  w.held_up_ns += added;
  const int64_t median_start = median.collective->start_ns;
  intervals->charged[{last.rank_index, median.rank_index}].push_back(Interval{median_start, median_start + window});
  intervals->charged_sum[last.rank_index] += window;
  links->push_back(LinkOf(rank, *last.collective, lead_in, last_start, added));
  links->back().ranks = std::move(matched);
  // Counted by the wait the others had, as times_last counts arrivals, not by the part explained.
  if (window < kMinLatenessNs) return true;
  ++w.late_collectives;
  AddLeadOperators(*LeadInOf(ranks, last), 1, &(*diffs)[last.rank_index]);
  AddLeadOperators(*LeadInOf(ranks, median), -1, &(*diffs)[last.rank_index]);
  return true;
}

// Keeps each late rank's operators with the most extra time.
void KeepLargestExtras(OperatorDiffs diffs, std::vector<RankWait>* waits) {
  for (auto& [index, by_name] : diffs) {
    std::vector<LeadOperator> extra;
    for (auto& [name, ns] : by_name) {
      if (ns > 0) extra.push_back(LeadOperator{name, ns});
    }
    std::sort(extra.begin(), extra.end(), [](const LeadOperator& a, const LeadOperator& b) {
      return a.ns != b.ns ? a.ns > b.ns : a.name.view() < b.name.view();
    });
    if (extra.size() > kMaxLeadOperators) extra.resize(kMaxLeadOperators);
    (*waits)[index].late_operator_extra = std::move(extra);
  }
}

// Starts compared across ranks are on the reference rank's clock (clock_alignment.h); each rank's own
// intervals stay on its own clock. `margins` gets, for the last rank, by how much it was last.
bool SplitWait(const std::vector<RankCommunication>& ranks, const std::vector<Arrival>& arrivals,
               const ClockAlignment& clocks, std::vector<RankWait>* waits, WaitIntervals* intervals,
               std::vector<std::vector<int64_t>>* margins, OperatorDiffs* diffs, std::vector<CriticalLink>* links) {
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
  }
  ++(*waits)[last->rank_index].times_last;
  (*margins)[last->rank_index].push_back(last_start - second_start);
  std::vector<int64_t> aligned_starts;
  for (const Arrival& a : arrivals) aligned_starts.push_back(aligned(a));
  return ChargeLastArrival(ranks, arrivals, *last, aligned_starts, waits, intervals, diffs, links);
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

void MeasureWaits(WaitIntervals intervals, std::vector<RankWait>* waits) {
  for (size_t r = 0; r < waits->size(); ++r) {
    RankWait& w = (*waits)[r];
    w.communication_ns = TotalLength(UnionOf(std::move(intervals.communication[r])));
    w.wait_ns = TotalLength(UnionOf(std::move(intervals.wait[r])));
    w.transfer_ns = w.communication_ns - w.wait_ns;
  }
  for (auto& [pair, caused] : intervals.caused) {
    (*waits)[pair.first].wait_caused_ns += TotalLength(UnionOf(std::move(caused)));
  }
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

void NameStraggler(const std::vector<std::vector<int64_t>>& margins, CrossRankCommunication* out) {
  const RankWait* best = nullptr;
  for (const RankWait& w : out->ranks) {
    if (w.times_last == 0) continue;
    if (best == nullptr || w.wait_caused_ns > best->wait_caused_ns ||
        (w.wait_caused_ns == best->wait_caused_ns && w.times_last > best->times_last)) {
      best = &w;
    }
  }
  if (best == nullptr || best->wait_caused_ns == 0) return;
  out->straggler_rank = best->rank;
  int64_t caused_by_others = 0;
  for (const RankWait& w : out->ranks) {
    if (&w != best) caused_by_others = std::max(caused_by_others, w.wait_caused_ns);
  }
  out->straggler_stands_out = best->wait_caused_ns >= 2 * caused_by_others;
  out->straggler_reason = Printf(
      "last at %llu of %llu matched collectives; others waited %.3f ms for it, summed over "
      "the waiting ranks",
      static_cast<unsigned long long>(best->times_last), static_cast<unsigned long long>(out->matched_collectives),
      static_cast<double>(best->wait_caused_ns) / 1e6);
  if (!out->straggler_stands_out) {
    out->straggler_reason +=
        Printf("; but not twice as long as rank %lld's late arrivals made them wait (%.3f ms)",
               static_cast<long long>(OtherLongestCause(*out, *best)), static_cast<double>(caused_by_others) / 1e6);
  }
  const size_t index = static_cast<size_t>(best - out->ranks.data());
  CheckAgainstClocks(margins[index], index, out);
}

// Wait ratios closer than this (absolute) do not single out a rank.
constexpr double kWaitRatioNoise = 0.05;

// msprof: the rank with the most wait decides between a slow rank and a slow link.
void JudgeAscend(const std::vector<RankCommunication>& ranks, CrossRankCommunication* out) {
  const RankCommunication* max_wait = nullptr;
  const RankCommunication* min_ratio = nullptr;
  double max_wait_ms = -1;
  int with_ops = 0;
  for (const RankCommunication& r : ranks) {
    if (!r.ascend_wait_ratio) continue;
    ++with_ops;
    double wait = 0;
    for (const AscendCommOp& op : r.ascend_ops) wait += op.total || !SplitKnown(op) ? 0 : op.wait_ms;
    if (wait > max_wait_ms) {
      max_wait_ms = wait;
      max_wait = &r;
    }
    if (min_ratio == nullptr || *r.ascend_wait_ratio < *min_ratio->ascend_wait_ratio) min_ratio = &r;
  }
  if (with_ops < 2) return;  // one rank cannot be slower than the others
  out->ascend_max_wait_rank = max_wait->rank;
  if (max_wait->ascend_synchronization_ratio && *max_wait->ascend_synchronization_ratio > 0.2) {
    double max_ratio = 0;
    for (const RankCommunication& r : ranks) max_ratio = std::max(max_ratio, r.ascend_wait_ratio.value_or(0));
    // Wait ratios a few points apart name no rank: the smallest is then chance, not a slow rank.
    if (max_ratio - *min_ratio->ascend_wait_ratio < kWaitRatioNoise) {
      out->ascend_verdict = "no clear slow rank";
    } else {
      out->ascend_verdict = "slow rank";
      out->ascend_slow_rank = min_ratio->rank;
    }
  } else {
    out->ascend_verdict = "slow link";
  }
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
  std::vector<std::vector<int64_t>> margins(ranks.size());
  OperatorDiffs diffs;
  for (const auto& [key, arrivals] : GroupByKey(ranks)) {
    if (arrivals.size() < 2 || !OneType(arrivals)) {
      out.unmatched_collectives += arrivals.size();
      continue;
    }
    ++out.matched_collectives;
    if (SplitWait(ranks, arrivals, out.clocks, &out.ranks, &intervals, &margins, &diffs, &out.critical_links)) {
      out.wait_causes_known = true;
    }
    VoteSlowRanks(arrivals, &out);
  }
  ChargeEachWaitOnce(intervals, &out.ranks);
  MeasureWaits(std::move(intervals), &out.ranks);
  KeepLargestExtras(std::move(diffs), &out.ranks);
  for (RankWait& w : out.ranks) {
    if (w.communication_ns > 0) w.wait_ratio = static_cast<double>(w.wait_ns) / static_cast<double>(w.communication_ns);
  }
  NameStraggler(margins, &out);
  JudgeAscend(ranks, &out);
  ClusterView(ranks, &out);
  out.groups = SummarizeGroups(ranks, out.clocks);
  out.domains = SummarizeDomains(out.groups);
  out.pipeline = AnalyzePipelineStages(ranks, out.clocks);
  out.transport_spread = SpreadOfTransports(ranks);
  out.retransmissions = FindRetransmissions(ranks);
  out.slowest_vs_fastest = DiffSlowestAndFastestRank(ranks);
  return out;
}

namespace {

std::string Percent(double share) { return Printf("%.1f %%", share * 100); }

// Each reason as one line per rank and, folded, into its group.
class Verdict {
 public:
  explicit Verdict(CommAnalysis* analysis) : analysis_(analysis) {}

  void Fire(int64_t rank, std::string line, const std::string& what, std::vector<ReasonFigure> figures) {
    analysis_->reasons.push_back(std::move(line));
    auto [it, added] = group_of_.emplace(what, analysis_->reason_groups.size());
    if (added) analysis_->reason_groups.push_back(ReasonGroup{what, {}, std::move(figures)});
    ReasonGroup& group = analysis_->reason_groups[it->second];
    group.ranks.push_back(rank);
    if (added) return;
    for (size_t i = 0; i < figures.size() && i < group.figures.size(); ++i) {
      group.figures[i].min = std::min(group.figures[i].min, figures[i].min);
      group.figures[i].max = std::max(group.figures[i].max, figures[i].max);
    }
  }

 private:
  CommAnalysis* analysis_;
  std::map<std::string, size_t> group_of_;
};

ReasonFigure Figure(double value, int decimals, std::string unit) {
  return ReasonFigure{value, value, decimals, std::move(unit)};
}

// Collective types and Ascend transports under the utilization threshold.
void JudgeBandwidth(const RankCommunication& r, const CommThresholds& t, Verdict* verdict) {
  const auto rank = static_cast<long long>(r.rank);
  for (const CollectiveTypeSummary& s : r.by_type) {
    if (s.utilization && *s.utilization < t.utilization) {
      const std::string type(CollectiveTypeName(s.type));
      verdict->Fire(r.rank,
                    Printf("rank %lld: %s bus bandwidth %.2f GB/s is %s of the %s peak (< %s)", rank, type.c_str(),
                           s.busbw_gbps.value_or(0), Percent(*s.utilization).c_str(), r.link.transport.c_str(),
                           Percent(t.utilization).c_str()),
                    Printf("%s bus bandwidth below %s of the %s peak", type.c_str(), Percent(t.utilization).c_str(),
                           r.link.transport.c_str()),
                    {Figure(s.busbw_gbps.value_or(0), 2, "GB/s"), Figure(*s.utilization * 100, 1, "%")});
    }
  }
  for (const AscendTransportTotal& tr : r.ascend_transports) {
    if (tr.utilization && *tr.utilization < t.utilization) {
      verdict->Fire(
          r.rank,
          Printf("rank %lld: %s bandwidth %.2f GB/s is %s of the standard bandwidth (< %s)", rank, tr.transport.c_str(),
                 tr.bandwidth_gbps.value_or(0), Percent(*tr.utilization).c_str(), Percent(t.utilization).c_str()),
          Printf("%s bandwidth below %s of the standard bandwidth", tr.transport.c_str(),
                 Percent(t.utilization).c_str()),
          {Figure(tr.bandwidth_gbps.value_or(0), 2, "GB/s"), Figure(*tr.utilization * 100, 1, "%")});
    }
  }
}

// The exposed share the verdict judges: a GPU pipeline rank's p2p wait is its bubble, not exposed communication,
// as the per-rank lines, profile and analyze split it.
std::optional<double> ExposedShareLessBubble(const CrossRankCommunication& x, const RankCommunication& r) {
  if (!r.exposed_share_of_wall || r.exposed_communication_ns <= 0) return r.exposed_share_of_wall;
  const BubbleSplit split = SplitBubble(x, r);
  if (split.exposed_ns == r.exposed_communication_ns) return r.exposed_share_of_wall;
  return *r.exposed_share_of_wall * static_cast<double>(split.exposed_ns) /
         static_cast<double>(r.exposed_communication_ns);
}

// Communication the device waits on: exposed past its share of the step, or HCCL ranks waiting.
void JudgeWaiting(const CrossRankCommunication& x, const RankCommunication& r, const CommThresholds& t,
                  Verdict* verdict) {
  const auto rank = static_cast<long long>(r.rank);
  const std::optional<double> share = ExposedShareLessBubble(x, r);
  if (share && *share > t.exposed_share_of_wall) {
    // Per step, as analyze and profile print it; the share is of the device span (the step table's span),
    // or of the step they report where the expert-parallel rows give it (ReportedStepsNs).
    const double steps = static_cast<double>(std::max<uint64_t>(r.steps, 1));
    const double per_step_ms = static_cast<double>(SplitBubble(x, r).exposed_ns) / 1e6 / steps;
    const char* of = ReportedStepsNs(r) > 0 ? "the step" : "the step's device span";
    verdict->Fire(r.rank,
                  Printf("rank %lld: exposed communication %.3f ms per step is %s of %s (> %s)", rank, per_step_ms,
                         Percent(*share).c_str(), of, Percent(t.exposed_share_of_wall).c_str()),
                  Printf("exposed communication above %s of %s", Percent(t.exposed_share_of_wall).c_str(), of),
                  {Figure(per_step_ms, 3, "ms per step"), Figure(*share * 100, 1, "%")});
  }
  if (r.ascend_wait_ratio && *r.ascend_wait_ratio > t.wait_ratio) {
    verdict->Fire(r.rank,
                  Printf("rank %lld: HCCL wait ratio %.3f (> %.1f): ranks wait for each other", rank,
                         *r.ascend_wait_ratio, t.wait_ratio),
                  Printf("HCCL wait ratio above %.1f: ranks wait for each other", t.wait_ratio),
                  {Figure(*r.ascend_wait_ratio, 3, "")});
  }
}

// One line per link: a link slow in several op types' cells is named once, at its lowest bandwidth
// (an end known only by its index in the group stays apart per group).
void JudgeSlowLinks(const RankCommunication& r, Verdict* verdict) {
  const auto rank = static_cast<long long>(r.rank);
  const auto link_key = [](const AscendMatrixLink& link) {
    const bool known = link.src_rank != kNoId && link.dst_rank != kNoId;
    return std::make_tuple(LinkEndName(link.src_rank, link.src_local), LinkEndName(link.dst_rank, link.dst_local),
                           link.transport, known ? std::string() : link.group);
  };
  std::map<std::tuple<std::string, std::string, std::string, std::string>, const AscendMatrixLink*> slowest;
  for (const AscendMatrixLink& link : r.ascend_links) {
    if (!link.slow) continue;
    auto [it, added] = slowest.try_emplace(link_key(link), &link);
    if (!added && link.bandwidth_gbps < it->second->bandwidth_gbps) it->second = &link;
  }
  for (const AscendMatrixLink& link : r.ascend_links) {
    const auto it = slowest.find(link_key(link));
    if (it != slowest.end() && it->second == &link) {
      verdict->Fire(
          r.rank,
          Printf("rank %lld: link %s->%s (%s) %.2f GB/s is below 20 %% of its transport's mean", rank,
                 LinkEndName(link.src_rank, link.src_local).c_str(), LinkEndName(link.dst_rank, link.dst_local).c_str(),
                 link.transport.c_str(), link.bandwidth_gbps.value_or(0)),
          Printf("link %s->%s (%s) below 20 %% of its transport's mean",
                 LinkEndName(link.src_rank, link.src_local).c_str(), LinkEndName(link.dst_rank, link.dst_local).c_str(),
                 link.transport.c_str()),
          {Figure(link.bandwidth_gbps.value_or(0), 2, "GB/s")});
    }
  }
}

void JudgeRank(const CrossRankCommunication& x, const RankCommunication& r, const CommThresholds& t,
               Verdict* verdict) {
  JudgeBandwidth(r, t, verdict);
  JudgeWaiting(x, r, t, verdict);
  JudgeSlowLinks(r, verdict);
}

void JudgeWait(const CrossRankCommunication& x, const RankWait& w, Verdict* verdict) {
  const auto rank = static_cast<long long>(w.rank);
  const std::string pct = Percent(*w.wait_ratio);
  const std::vector<ReasonFigure> figures = {Figure(*w.wait_ratio * 100, 1, "% of the communication time")};
  if (x.straggler_within_clock_uncertainty) {
    verdict->Fire(w.rank,
                  Printf("rank %lld: %s of its communication time waits for other ranks (which one is late is within "
                         "the clocks' uncertainty)",
                         rank, pct.c_str()),
                  "waits for other ranks (which one is late is within the clocks' uncertainty)", figures);
  } else if (!x.straggler_stands_out) {
    verdict->Fire(w.rank,
                  Printf("rank %lld: %s of its communication time waits for other ranks (no single rank stands "
                         "out as the late one)",
                         rank, pct.c_str()),
                  "waits for other ranks (no single rank stands out as the late one)", figures);
  } else if (*x.straggler_rank != w.rank) {
    // The wait is for whichever rank was last at each collective, mostly but not only the straggler.
    verdict->Fire(w.rank,
                  Printf("rank %lld: %s of its communication time waits for late ranks (the straggler: rank %lld)",
                         rank, pct.c_str(), static_cast<long long>(*x.straggler_rank)),
                  Printf("waits for late ranks (the straggler: rank %lld)", static_cast<long long>(*x.straggler_rank)),
                  figures);
  }
}

}  // namespace

BubbleSplit SplitBubble(const CrossRankCommunication& x, const RankCommunication& r) {
  BubbleSplit out{r.bubble_ns, r.exposed_communication_ns};
  if (out.bubble_ns > 0 || !x.pipeline) return out;
  const double wait = GpuPipelineWaitNsPerStep(*x.pipeline, r.rank) * static_cast<double>(r.steps);
  out.bubble_ns = std::clamp<int64_t>(std::llround(wait), 0, std::max<int64_t>(r.exposed_communication_ns, 0));
  out.exposed_ns -= out.bubble_ns;
  return out;
}

void JudgeCommunication(CommAnalysis* analysis) {
  analysis->reasons.clear();
  analysis->reason_groups.clear();
  Verdict verdict(analysis);
  const CrossRankCommunication& x = analysis->cross_rank;
  for (const RankCommunication& r : analysis->ranks) JudgeRank(x, r, analysis->thresholds, &verdict);
  for (const RankWait& w : x.ranks) {
    if (w.wait_ratio && *w.wait_ratio > analysis->thresholds.wait_ratio && x.straggler_rank) {
      JudgeWait(x, w, &verdict);
    }
  }
  analysis->bottleneck = !analysis->reasons.empty();
}

std::vector<int64_t> NotableRanks(const CommAnalysis& analysis) {
  const CrossRankCommunication& x = analysis.cross_rank;
  std::vector<int64_t> ranks;
  for (const std::optional<int64_t>& named : {x.straggler_rank, x.ascend_slow_rank, x.ascend_max_wait_rank}) {
    if (named) ranks.push_back(*named);
  }
  for (const RankOutlierTest& test : x.outliers)
    ranks.insert(ranks.end(), test.outlier_ranks.begin(), test.outlier_ranks.end());
  const auto by_exposed = [](const RankCommunication& a, const RankCommunication& b) {
    return a.exposed_communication_ns < b.exposed_communication_ns;
  };
  if (!analysis.ranks.empty()) {
    const auto [least, most] = std::minmax_element(analysis.ranks.begin(), analysis.ranks.end(), by_exposed);
    ranks.insert(ranks.end(), {least->rank, most->rank, analysis.ranks.front().rank});
  }
  const auto most_wait = std::max_element(x.ranks.begin(), x.ranks.end(),
                                          [](const RankWait& a, const RankWait& b) { return a.wait_ns < b.wait_ns; });
  if (most_wait != x.ranks.end()) ranks.push_back(most_wait->rank);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
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

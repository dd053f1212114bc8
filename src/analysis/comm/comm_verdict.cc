// The communication verdict: per rank and folded by reason, the thresholds each rank's collectives, links
// and waits cross (bandwidth under the peak's share, exposed communication over its share of the steps, ranks
// waiting for each other or for one late rank, slow links, a pipeline stage's bubble), and the ranks a report
// should show. A pipeline stage's waits for the others are its bubble: they are told on their own, with what
// they wait for, and left out of the exposed communication and of the ranks waiting for each other.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "analysis/comm/comm_cross_rank.h"
#include "analysis/comm/comm_links.h"
#include "analysis/comm/comm_text.h"

namespace tuneprof {
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

// The HCCL wait ratio the verdict judges: on a pipeline stage's rank its send / receive waits are the bubble,
// which the pipeline's own lines tell, so only its other operations count (nullopt: it has none).
std::optional<double> AscendWaitRatioOutsidePipeline(const CrossRankCommunication& x, const RankCommunication& r) {
  if (!r.ascend_wait_ratio || !x.pipeline || StageOfRank(*x.pipeline, r.rank) == nullptr) return r.ascend_wait_ratio;
  double wait = 0, transit = 0;
  for (const AscendCommOp& op : r.ascend_ops) {
    if (op.total || !SplitKnown(op) || op.transit_ms <= 0 || IsP2pOp(op)) continue;
    wait += op.wait_ms;
    transit += op.transit_ms;
  }
  if (wait + transit <= 0) return std::nullopt;
  return wait / (wait + transit);
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
  const std::optional<double> ratio = AscendWaitRatioOutsidePipeline(x, r);
  if (ratio && *ratio > t.wait_ratio) {
    verdict->Fire(
        r.rank,
        Printf("rank %lld: HCCL wait ratio %.3f (> %.1f): ranks wait for each other", rank, *ratio, t.wait_ratio),
        Printf("HCCL wait ratio above %.1f: ranks wait for each other", t.wait_ratio), {Figure(*ratio, 3, "")});
  }
}

// What a stage's waiting is: for the slowest stage's compute (the stage imbalance) and the schedule's fill and
// drain, each where it is there; "waits 91.667 ms a step for stage 1's compute".
std::string StageWaitText(const PipelineAnalysis& p, const PipelineStage& s) {
  const double waiting_ms = s.waiting_ns_per_step / 1e6;
  const double for_slowest_ms = s.wait_for_slowest_ns_per_step / 1e6;
  const double fill_drain_ms = s.fill_drain_ns_per_step / 1e6;
  const auto slowest = static_cast<long long>(p.slowest_stage);
  if (for_slowest_ms <= 0) return Printf("waits %.3f ms a step in the schedule's fill / drain", waiting_ms);
  // Fill and drain under a microsecond a step is rounding, not a part worth naming.
  if (fill_drain_ms < 1e-3) return Printf("waits %.3f ms a step for stage %lld's compute", for_slowest_ms, slowest);
  return Printf("waits %.3f ms a step: %.3f ms for stage %lld's compute, %.3f ms the schedule's fill / drain",
                waiting_ms, for_slowest_ms, slowest, fill_drain_ms);
}

// A pipeline stage's waiting is its bubble, not ranks waiting for a late one: its own line, on each of its
// ranks, naming what it waits for and what acts on it, past its threshold share of the stage's step.
void JudgePipelineBubble(const CrossRankCommunication& x, const CommThresholds& t, Verdict* verdict) {
  if (!x.pipeline) return;
  const PipelineAnalysis& p = *x.pipeline;
  for (const PipelineStage& s : p.stages) {
    if (s.step_ns_per_step <= 0 || s.waiting_ns_per_step <= 0) continue;
    // The bubble the stage table and analyze quote: torch_npu's Bubble holds the p2p transfer beside the wait.
    const double bubble = std::max(s.bubble_ns_per_step, s.waiting_ns_per_step);
    const double share = bubble / s.step_ns_per_step;
    if (share <= t.bubble_share_of_step) continue;
    const bool imbalance = s.wait_for_slowest_ns_per_step > 0;
    const char* act = imbalance ? "act on the stage imbalance (move layers off the slowest stage)"
                                : "more micro-batches or an interleaved schedule shorten it";
    const std::string what = imbalance
                                 ? Printf("pipeline bubble: stage %lld waits for stage %lld's compute; %s",
                                          static_cast<long long>(s.stage), static_cast<long long>(p.slowest_stage), act)
                                 : Printf("pipeline bubble: stage %lld waits in the schedule's fill / drain; %s",
                                          static_cast<long long>(s.stage), act);
    // Where the bubble is more than the wait (by a microsecond or more), the wait is named the p2p wait and
    // the bubble quoted beside it, so that one figure is never called the other's name.
    const std::string bubble_text =
        bubble - s.waiting_ns_per_step < 1e3
            ? Printf("the pipeline bubble (%s of its step)", Percent(share).c_str())
            : Printf("its p2p wait, in a pipeline bubble of %.3f ms a step (%s of its step)", bubble / 1e6,
                     Percent(share).c_str());
    for (int64_t rank : s.ranks) {
      verdict->Fire(rank,
                    Printf("rank %lld: stage %lld %s: %s; %s", static_cast<long long>(rank),
                           static_cast<long long>(s.stage), StageWaitText(p, s).c_str(), bubble_text.c_str(), act),
                    what, {Figure(bubble / 1e6, 3, "ms per step"), Figure(share * 100, 1, "%")});
    }
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

void JudgeRank(const CrossRankCommunication& x, const RankCommunication& r, const CommThresholds& t, Verdict* verdict) {
  JudgeBandwidth(r, t, verdict);
  JudgeWaiting(x, r, t, verdict);
  JudgeSlowLinks(r, verdict);
}

// `ratio`: the rank's wait share of its matched collectives, the pipeline's hand-offs left out.
void JudgeWait(const CrossRankCommunication& x, const RankWait& w, double ratio, Verdict* verdict) {
  const auto rank = static_cast<long long>(w.rank);
  const std::string pct = Percent(ratio);
  const std::vector<ReasonFigure> figures = {Figure(ratio * 100, 1, "% of the communication time")};
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
    // A pipeline's hand-offs wait for another stage: that is the bubble, judged on its own below.
    const std::optional<double> ratio = WaitRatioOutsidePipeline(w);
    if (ratio && *ratio > analysis->thresholds.wait_ratio && x.straggler_rank) JudgeWait(x, w, *ratio, &verdict);
  }
  JudgePipelineBubble(x, analysis->thresholds, &verdict);
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

}  // namespace tuneprof

#include "analysis/comm/critical_path.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <utility>

namespace tuneprof {
namespace {

std::string CollectiveLabel(const CriticalLink& link) {
  return std::string(CollectiveTypeName(link.type)) + " (group " + (link.group.empty() ? "?" : link.group) + " #" +
         std::to_string(link.sequence) + ")";
}

// "before allreduce (group 0 #3): compute 4.100 ms, host_pause 1.200 ms", the causes largest first; a
// lead-in the path measured itself has no causes: "before sendrecv (group 10 #0): 57.750 ms since the
// rank's step began".
std::string LeadInLabel(const CriticalLink& link, const std::string& collective) {
  if (link.lead_in_from == LeadInFrom::kRankPrevious || link.lead_in_from == LeadInFrom::kStepStart) {
    char figure[160];
    std::snprintf(figure, sizeof figure, ": %.3f ms since %s (the group's first collective: not split by cause)",
                  static_cast<double>(link.lead_in_ns) / 1e6,
                  link.lead_in_from == LeadInFrom::kStepStart ? "the rank's step began" : "its previous collective");
    return "before " + collective + figure;
  }
  std::vector<std::pair<int64_t, size_t>> causes;
  for (size_t c = 0; c < kWaitCauseCount; ++c) {
    if (link.lead_in_causes[c] > 0) causes.emplace_back(link.lead_in_causes[c], c);
  }
  std::sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = "before " + collective + ":";
  char figure[32];
  for (size_t i = 0; i < causes.size(); ++i) {
    std::snprintf(figure, sizeof figure, " %.3f ms", static_cast<double>(causes[i].first) / 1e6);
    out += (i == 0 ? " " : ", ") + std::string(WaitCauseName(static_cast<WaitCause>(causes[i].second))) + figure;
  }
  return out;
}

// A send / recv matched over more than two ranks: its kernels were paired by their order in the group, not
// by peer, so its lead-in and transfer belong to no real pairing.
bool PairedByOrderOnly(const CriticalLink& link) {
  return link.type == CollectiveType::kSendRecv && !link.paired_by_peer && link.ranks.size() > 2;
}

int64_t BeginOf(const CriticalLink& link) { return link.aligned_arrival_ns - link.lead_in_ns; }
int64_t EndOf(const CriticalLink& link) { return link.aligned_arrival_ns + link.transfer_ns; }

constexpr size_t kNoLink = static_cast<size_t>(-1);

// What a link follows in order: its group's previous collective; for a send / recv matched by its peer, the
// pair's previous one in the group (the group's other pairs run apart).
std::string SequenceKey(const CriticalLink& link) {
  if (!link.paired_by_peer) return link.group;
  std::string key = link.group;
  for (int64_t rank : link.ranks) key += " " + std::to_string(rank);
  return key;
}

// The longest chain ending at each link (links in arrival order): a link follows the previous link of its
// group, or a link that ended on one of its ranks before its lead-in began. O(links x ranks per link x log).
// Of two chains as long, the one whose last ranks waited less on their own earlier collectives: the
// pipelines of a step end together, and the stage that computed while the others waited bounds it.
struct Chains {
  std::vector<int64_t> ns, waiting_ns;
  std::vector<size_t> previous;
  bool Longer(size_t a, size_t b) const { return ns[a] != ns[b] ? ns[a] > ns[b] : waiting_ns[a] < waiting_ns[b]; }
};

Chains ChainLinks(const std::vector<CriticalLink>& links) {
  Chains out{std::vector<int64_t>(links.size(), 0), std::vector<int64_t>(links.size(), 0),
             std::vector<size_t>(links.size(), kNoLink)};
  std::map<std::string, size_t> last_of_group;
  std::map<int64_t, size_t> last_on_rank;
  for (size_t i = 0; i < links.size(); ++i) {
    const CriticalLink& link = links[i];
    if (PairedByOrderOnly(link)) continue;
    auto consider = [&](size_t j) {
      if (out.previous[i] == kNoLink || out.Longer(j, out.previous[i])) out.previous[i] = j;
    };
    if (const auto g = last_of_group.find(SequenceKey(link)); g != last_of_group.end()) consider(g->second);
    const std::vector<int64_t> own_rank{link.last_rank};
    const std::vector<int64_t>& ranks = link.ranks.empty() ? own_rank : link.ranks;
    for (int64_t rank : ranks) {
      const auto r = last_on_rank.find(rank);
      if (r != last_on_rank.end() && EndOf(links[r->second]) <= BeginOf(link)) consider(r->second);
    }
    const bool first = out.previous[i] == kNoLink;
    out.ns[i] = (first ? 0 : out.ns[out.previous[i]]) + link.lead_in_ns + link.transfer_ns;
    out.waiting_ns[i] =
        (first ? 0 : out.waiting_ns[out.previous[i]]) + link.lead_in_causes[static_cast<size_t>(WaitCause::kOwnWait)];
    last_of_group[SequenceKey(link)] = i;
    for (int64_t rank : ranks) {
      auto [r, added] = last_on_rank.emplace(rank, i);
      if (!added && EndOf(link) >= EndOf(links[r->second])) r->second = i;
    }
  }
  return out;
}

void AppendLinkSegments(const CriticalLink& link, std::vector<CriticalSegment>* segments) {
  const std::string label = CollectiveLabel(link);
  if (link.lead_in_ns > 0) {
    segments->push_back(CriticalSegment{link.last_rank, {}, LeadInLabel(link, label), link.lead_in_ns});
  }
  std::vector<int64_t> pair;
  // A pair where the group is one, or the kernels were matched by peer: two ranks matched by sequence in a
  // larger group are the ranks traced, not the peers.
  const bool two_rank_group = link.group_size == kNoId || link.group_size == 2 || link.paired_by_peer;
  if (link.type == CollectiveType::kSendRecv && link.ranks.size() == 2 && two_rank_group) pair = link.ranks;
  segments->push_back(CriticalSegment{kNoId, std::move(pair), label, link.transfer_ns});
}

// The longest chain's segments, first to last; the path is at most the span of the step's chained links.
// Of the ranks of the path's last link, the one whose step ends last: its work after the link, and its step,
// which the path may not exceed. nullopt where no such rank's step is known.
struct PathTail {
  int64_t rank = kNoId;
  int64_t after_ns = 0;  // from the link's end to the rank's step end
  int64_t step_ns = 0;   // the rank's step
};

std::optional<PathTail> TailOf(const CriticalLink& link, std::optional<int64_t> step, const RankStepWindows& windows) {
  if (!step) return std::nullopt;
  const std::vector<int64_t> own_rank{link.last_rank};
  std::optional<PathTail> out;
  int64_t latest = 0;
  for (int64_t rank : link.ranks.empty() ? own_rank : link.ranks) {
    const auto w = windows.find({rank, *step});
    if (w == windows.end() || (out && w->second.end_ns <= latest)) continue;
    latest = w->second.end_ns;
    out = PathTail{rank, std::max<int64_t>(latest - EndOf(link), 0), w->second.end_ns - w->second.start_ns};
  }
  return out;
}

void TakeLongestChain(const std::vector<CriticalLink>& links, const RankStepWindows& windows, CriticalPathStep* out) {
  const Chains chains = ChainLinks(links);
  size_t end = kNoLink;
  int64_t first = 0, last = 0;
  for (size_t i = 0; i < links.size(); ++i) {
    if (PairedByOrderOnly(links[i])) continue;
    first = end == kNoLink ? BeginOf(links[i]) : std::min(first, BeginOf(links[i]));
    last = end == kNoLink ? EndOf(links[i]) : std::max(last, EndOf(links[i]));
    if (end == kNoLink || chains.Longer(i, end)) end = i;
  }
  if (end == kNoLink) return;
  std::vector<size_t> chain;
  for (size_t i = end; i != kNoLink; i = chains.previous[i]) chain.push_back(i);
  for (auto i = chain.rbegin(); i != chain.rend(); ++i) AppendLinkSegments(links[*i], &out->segments);
  const std::optional<PathTail> tail = TailOf(links[end], out->step, windows);
  if (!tail) {
    out->path_ns = std::min(chains.ns[end], last - first);
    return;
  }
  if (tail->after_ns > 0) {
    out->segments.push_back(CriticalSegment{
        tail->rank, {}, "after " + CollectiveLabel(links[end]) + ": its work to the end of its step", tail->after_ns});
  }
  out->path_ns = std::min(chains.ns[end] + tail->after_ns, tail->step_ns);
}

// The lead-in of each link at its group's first collective on the last rank (links in arrival order): from
// the latest end, by its arrival, of the rank's earlier links in the step, else from the rank's start of the
// step; left at 0 where neither is known. O(links x ranks per link x log links).
void MeasureFirstLeadIns(std::optional<int64_t> step, const RankStepWindows& windows,
                         std::vector<CriticalLink>* links) {
  std::map<int64_t, std::set<int64_t>> ends_on_rank;
  for (CriticalLink& link : *links) {
    const std::vector<int64_t> own_rank{link.last_rank};
    const std::vector<int64_t>& ranks = link.ranks.empty() ? own_rank : link.ranks;
    if (link.lead_in_from == LeadInFrom::kUnmeasured && !PairedByOrderOnly(link)) {
      const std::set<int64_t>& ends = ends_on_rank[link.last_rank];
      const auto after = ends.upper_bound(link.aligned_arrival_ns);
      const auto start = step ? windows.find({link.last_rank, *step}) : windows.end();
      if (after != ends.begin()) {
        link.lead_in_ns = link.aligned_arrival_ns - *std::prev(after);
        link.lead_in_from = LeadInFrom::kRankPrevious;
      } else if (start != windows.end() && start->second.start_ns <= link.aligned_arrival_ns) {
        link.lead_in_ns = link.aligned_arrival_ns - start->second.start_ns;
        link.lead_in_from = LeadInFrom::kStepStart;
      }
    }
    for (int64_t rank : ranks) ends_on_rank[rank].insert(EndOf(link));
  }
}

CriticalPathStep PathOf(std::optional<int64_t> step, std::vector<CriticalLink> links, const RankStepWindows& windows) {
  std::sort(links.begin(), links.end(),
            [](const CriticalLink& a, const CriticalLink& b) { return a.aligned_arrival_ns < b.aligned_arrival_ns; });
  MeasureFirstLeadIns(step, windows, &links);
  CriticalPathStep out;
  out.step = step;
  TakeLongestChain(links, windows, &out);
  std::map<int64_t, int64_t> held_by_rank;
  for (const CriticalLink& link : links) {
    if (link.held_up_ns > 0) held_by_rank[link.last_rank] += link.held_up_ns;
    out.held_up_ns += link.held_up_ns;
  }
  for (const auto& [rank, ns] : held_by_rank) {
    if (ns > out.on_time_gain_ns) {
      out.on_time_gain_ns = ns;
      out.late_rank = rank;
    }
  }
  return out;
}

// One stage in one step: sums over its ranks that have the step.
struct StageStepSums {
  double computing_ns = 0, bubble_ns = 0, step_ns = 0;
  int64_t ranks = 0;
  double mean(double sum) const { return sum / static_cast<double>(ranks); }
};

using StageSums = std::map<int64_t, StageStepSums>;  // stage -> its sums

// The rank whose step is the longest of the step: the path is at least as long.
struct LongestStep {
  int64_t rank = kNoId;
  int64_t stage = 0;
  double step_ns = 0;
};

struct StepSums {
  std::map<int64_t, StageSums> by_step;
  std::map<int64_t, LongestStep> longest;  // step -> its longest rank
};

StepSums SumStagesPerStep(const PipelineAnalysis& pipeline, const std::vector<RankBreakdown>& ranks) {
  std::map<int64_t, const PipelineStage*> stage_of;  // rank -> its stage: one look-up per rank
  for (const PipelineStage& stage : pipeline.stages) {
    for (int64_t rank : stage.ranks) stage_of.emplace(rank, &stage);
  }
  StepSums out;
  for (const RankBreakdown& rank : ranks) {
    const auto found = stage_of.find(rank.rank);
    if (found == stage_of.end()) continue;
    const PipelineStage* stage = found->second;
    const bool own_bubbles = rank.total.bubble_ns > 0;
    for (const StepBreakdown& step : rank.steps) {
      if (!step.step) continue;
      StageStepSums& sums = out.by_step[*step.step][stage->stage];
      sums.computing_ns += static_cast<double>(step.computing_ns);
      sums.bubble_ns += own_bubbles ? static_cast<double>(step.bubble_ns) : stage->bubble_ns_per_step;
      sums.step_ns += static_cast<double>(step.wall_ns);
      ++sums.ranks;
      LongestStep& longest = out.longest[*step.step];
      if (longest.rank == kNoId || static_cast<double>(step.wall_ns) > longest.step_ns) {
        longest = LongestStep{rank.rank, stage->stage, static_cast<double>(step.wall_ns)};
      }
    }
  }
  return out;
}

double WorkOf(const PipelineAnalysis& pipeline, const StageStepSums& s) {
  return s.mean(pipeline.work_is_computing ? s.computing_ns : s.step_ns - s.bubble_ns);
}

// Rounded, and saturated: times from a hostile trace may sum beyond what an int64 holds.
int64_t Ns(double ns) {
  constexpr double kLimit = 9.0e18;
  if (std::isnan(ns)) return 0;
  return static_cast<int64_t>(std::clamp(ns, -kLimit, kLimit) + (ns < 0 ? -0.5 : 0.5));
}

// The stage that works most in the step bounds it; stages whose work ties within kStageTieShare of the
// most are told apart by their step, the longest last in the chain, as the run's verdict does
// (pipeline_stages.h).
const StageSums::value_type& BoundingStageOfStep(const PipelineAnalysis& pipeline, const StageSums& stages) {
  const StageSums::value_type* most = &*stages.begin();
  for (const auto& entry : stages) {
    if (WorkOf(pipeline, entry.second) > WorkOf(pipeline, most->second)) most = &entry;
  }
  const double tie = WorkOf(pipeline, most->second) * (1 - kStageTieShare);
  const StageSums::value_type* bounding = most;
  for (const auto& entry : stages) {
    if (WorkOf(pipeline, entry.second) >= tie &&
        entry.second.mean(entry.second.step_ns) > bounding->second.mean(bounding->second.step_ns)) {
      bounding = &entry;
    }
  }
  return *bounding;
}

// The bounding stage's step (its computing, its own bubble, the rest) and, where the step's longest rank
// runs past it, that rank's extra: the schedule's fill and drain around the bounding stage (on 1F1B, stage
// 0's first forwards before it and its last backward after it), so that the path is the longest step.
void AppendBoundingSegments(const PipelineAnalysis& pipeline, const StageStepSums& b, const LongestStep& longest,
                            PipelinePathStep* out) {
  const double work = WorkOf(pipeline, b);
  const double computing = b.mean(b.computing_ns), bubble = b.mean(b.bubble_ns), step_ns = b.mean(b.step_ns);
  out->segments.push_back(PipelineSegment{out->bounding_stage, pipeline.work_is_computing ? "computing" : "stage time",
                                          Ns(pipeline.work_is_computing ? computing : work)});
  out->segments.push_back(PipelineSegment{out->bounding_stage, "bubble (the schedule's fill / drain)", Ns(bubble)});
  const double rest = step_ns - bubble - (pipeline.work_is_computing ? computing : work);
  if (rest > 0) {
    out->segments.push_back(
        PipelineSegment{out->bounding_stage, "rest of its step (exposed communication, free)", Ns(rest)});
  }
  out->path_ns = Ns(step_ns);
  const int64_t beyond = Ns(longest.step_ns) - out->path_ns;
  if (longest.rank == kNoId || beyond <= 0) return;
  out->longest_rank = longest.rank;
  out->segments.push_back(PipelineSegment{longest.stage,
                                          "fill / drain beyond stage " + std::to_string(out->bounding_stage) +
                                              "'s step (rank " + std::to_string(longest.rank) +
                                              "'s step is the step's longest)",
                                          beyond});
  out->path_ns += beyond;
}

PipelinePathStep PipelineStepPath(const PipelineAnalysis& pipeline, int64_t step, const StageSums& stages,
                                  const LongestStep& longest) {
  PipelinePathStep out;
  out.step = step;
  double mean_work = 0;
  for (const auto& entry : stages) mean_work += WorkOf(pipeline, entry.second);
  mean_work /= static_cast<double>(stages.size());
  const StageSums::value_type* bounding = &BoundingStageOfStep(pipeline, stages);
  const StageStepSums& b = bounding->second;
  const double work = WorkOf(pipeline, b);
  out.bounding_stage = bounding->first;
  out.bounding_ranks = StageNumbered(pipeline, bounding->first).ranks;
  out.longest_rank = out.bounding_ranks.empty() ? kNoId : out.bounding_ranks.front();
  AppendBoundingSegments(pipeline, b, longest, &out);
  for (const auto& [stage, sums] : stages) {
    if (stage == out.bounding_stage) continue;
    const double own_bubble = sums.mean(sums.bubble_ns);
    const double charged = WaitForSlowestNs(WorkOf(pipeline, sums), own_bubble, work);
    out.waits.push_back(PipelineStageWait{stage, StageNumbered(pipeline, stage).ranks, Ns(own_bubble), Ns(charged),
                                          Ns(own_bubble - charged)});
  }
  // The run re-timed with balanced stages (pipeline_stages.h) gives each step's gain where it could be done;
  // else as the run's what-if: on a GPU chain measured against the peers' starts, the bounding stage's fill
  // is the other stages' work.
  const double bubble = b.mean(b.bubble_ns);
  const bool chain = StageNumbered(pipeline, bounding->first).p2p_wait_measure == P2pWaitMeasure::kPeerStart;
  const auto n = static_cast<double>(stages.size());
  const double others_work = stages.size() > 1 ? (mean_work * n - work) / (n - 1) : 0;
  const auto retimed = pipeline.balanced_gain_ns_by_step.find(step);
  const double gain = retimed != pipeline.balanced_gain_ns_by_step.end() ? retimed->second
                      : chain ? ChainBalancedGainNs(work, bubble, mean_work, others_work)
                              : BalancedStagesGainNs(work, bubble, mean_work);
  out.balanced_gain_ns = std::min(out.path_ns, Ns(gain));
  return out;
}

}  // namespace

std::vector<PipelinePathStep> PipelineCriticalPath(const PipelineAnalysis& pipeline,
                                                   const std::vector<RankBreakdown>& ranks) {
  std::vector<PipelinePathStep> out;
  const StepSums sums = SumStagesPerStep(pipeline, ranks);
  for (const auto& [step, stages] : sums.by_step) {
    if (stages.size() >= 2) out.push_back(PipelineStepPath(pipeline, step, stages, sums.longest.at(step)));
  }
  return out;
}

RankStepWindows AlignedStepWindows(const std::vector<RankBreakdown>& ranks, const ClockAlignment& clocks) {
  std::map<int64_t, int64_t> correction_ns;  // rank -> what its starts lose to be on the reference clock
  for (const RankClockOffset& clock : clocks.ranks) correction_ns.emplace(clock.rank, clock.correction_ns());
  RankStepWindows out;
  for (const RankBreakdown& rank : ranks) {
    const auto correction = correction_ns.find(rank.rank);
    const int64_t by = correction == correction_ns.end() ? 0 : correction->second;
    for (const StepBreakdown& s : rank.steps) {
      if (!s.step || s.device_start_ns == kNoId || s.device_end_ns == kNoId) continue;
      out.emplace(std::make_pair(rank.rank, *s.step), StepWindow{s.device_start_ns - by, s.device_end_ns - by});
    }
  }
  return out;
}

std::vector<CriticalPathStep> CriticalPathPerStep(std::vector<CriticalLink> links, const RankStepWindows& windows) {
  std::map<int64_t, std::vector<CriticalLink>> by_step;
  std::vector<CriticalLink> no_step;
  for (CriticalLink& link : links) {
    if (link.step) {
      by_step[*link.step].push_back(std::move(link));
    } else {
      no_step.push_back(std::move(link));
    }
  }
  std::vector<CriticalPathStep> out;
  for (auto& [step, in_step] : by_step) out.push_back(PathOf(step, std::move(in_step), windows));
  if (!no_step.empty()) out.push_back(PathOf(std::nullopt, std::move(no_step), windows));
  // A step whose only links were paired by order has no chain to show.
  out.erase(std::remove_if(out.begin(), out.end(), [](const CriticalPathStep& s) { return s.segments.empty(); }),
            out.end());
  return out;
}

}  // namespace tuneprof

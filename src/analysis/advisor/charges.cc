#include "analysis/advisor/charges.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <string_view>

namespace tuneprof {
namespace {

// A quoted gain below this multiple of the other ranks' median reads as the job's: no note.
constexpr double kStandsOutFactor = 2.0;

// The rank communication.straggler says the others wait for: the timeline's straggler or msprof-analyze's
// slow rank, as its evidence names them; none when the late rank is not in the input.
std::optional<int64_t> LateRankOf(const Finding& straggler) {
  for (const Evidence& e : straggler.evidence) {
    if ((e.label == "straggler_rank" || e.label == "slow_rank") && e.number) return std::llround(*e.number);
  }
  return std::nullopt;
}

// The finding that names why ranks wait at their collectives, where the run has one: a straggler, or an
// uneven MoE load the all-to-all waits for. Its gain is that wait.
const Finding* WaitCauseFinding(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    if ((f.id == "communication.straggler" || f.id == "moe.expert_imbalance") && f.estimated_gain_ns > 0) return &f;
  }
  return nullptr;
}

double NumberOf(const Finding& f, std::string_view label) {
  for (const Evidence& e : f.evidence) {
    if (e.label == label && e.number) return *e.number;
  }
  return 0;
}

// Device work a fix on the rank itself makes shorter: compute, memory-bound and unclassed kernels, and
// fused compute + communication kernels (the rank runs them; their transfer is never exposed).
bool SavesOwnDeviceWork(TimePart part) {
  return part == TimePart::kComputeBound || part == TimePart::kMemoryBound || part == TimePart::kUnclassified ||
         part == TimePart::kFusedComm;
}

// A rank's wait per step, what it waits for and the evidence label it is quoted under.
struct RankWaitPerStep {
  double ns = 0;
  std::string_view for_what;
  std::string_view label;
};

// The rank's wait for the last arrival at its matched collectives, from the timeline; none where the
// input matched no collective of the rank (a torch_npu export without trace_view.json has none). For a
// straggler, only its waits at the collectives the straggler arrived at last: those the straggler counts.
std::optional<RankWaitPerStep> TimelineWait(const std::vector<const RankCommunication*>& comm,
                                            const CrossRankCommunication* cross, int64_t rank, bool for_straggler) {
  if (cross == nullptr) return std::nullopt;
  for (size_t i = 0; i < cross->ranks.size() && i < comm.size(); ++i) {
    const RankWait& w = cross->ranks[i];
    if (w.rank != rank || comm[i] == nullptr || comm[i]->steps == 0 || w.matched == 0) continue;
    const int64_t wait = for_straggler ? w.wait_for_straggler_ns : w.wait_ns;
    return RankWaitPerStep{static_cast<double>(wait) / static_cast<double>(comm[i]->steps),
                           for_straggler ? "the straggler" : "the last arrival", "wait_for_last_arrival_us"};
  }
  return std::nullopt;
}

// Without a timeline the MoE wait is still known: at each MoE call (a grouped GEMM, or a layer's experts
// between dispatch and combine) the rank waits at the next all-to-all for the call's slowest expert-parallel
// rank, which each call's device time gives.
std::optional<RankWaitPerStep> ExpertWait(const MoeBalance* moe, int64_t rank) {
  if (moe == nullptr) return std::nullopt;
  for (size_t i = 0; i < moe->ranks.size() && i < moe->wait_ns_per_step.size(); ++i) {
    if (moe->ranks[i] == rank) {
      const std::string_view words = MoeCallsAreGroupedGemms(moe->source)
                                         ? "the slowest expert-parallel rank's grouped GEMMs"
                                         : "the slowest expert-parallel rank's experts (its compute between "
                                           "dispatch and combine)";
      return RankWaitPerStep{moe->wait_ns_per_step[i], words, "wait_for_slowest_experts_us"};
    }
  }
  return std::nullopt;
}

}  // namespace

// Notes the other ranks' median gain on a finding whose quoted rank gains at least twice as much (a
// straggler's host stall quoted as every rank's launch overhead, say).
void NoteOthersMedian(const RankGains& gains, size_t ranks, Finding* finding) {
  if (ranks < 2 || finding->estimated_gain_ns <= 0) return;  // no gain left to attribute
  // Balanced stages shorten every rank's step alike; the bounding stage's ranks, which the finding does not
  // name, would read as gaining nothing.
  if (finding->id == "pipeline.stage_imbalance") return;
  const double quoted = gains.GainOf(*finding, finding->evidence_rank);
  const double median = gains.OthersMedian(*finding, finding->evidence_rank, ranks);
  if (quoted > 0 && quoted >= kStandsOutFactor * median) finding->others_median_gain_ns = median;
}

// The others' wait for the late rank is lost to that rank's extra work: where findings on its own time
// (host, compute, data, copies; not communication, and not a catch-all symptom) cost it more than they
// cost the other ranks, that excess is the wait again, and communication.straggler keeps only what the
// excesses leave of it, so that the run's gains do not count one lost time twice.
void KeepWaitNotExplained(const RankGains& gains, size_t ranks, std::vector<Finding>* findings) {
  auto straggler = std::find_if(findings->begin(), findings->end(),
                                [](const Finding& f) { return f.id == "communication.straggler"; });
  if (straggler == findings->end() || straggler->estimated_gain_ns <= 0) return;
  const std::optional<int64_t> late = LateRankOf(*straggler);
  if (!late) return;
  double explained = 0;
  for (const Finding& f : *findings) {
    if (&f != &*straggler && !f.catch_all && f.saves_from != TimePart::kCommunication) {
      explained += gains.Excess(f, *late, ranks);
    }
  }
  if (explained <= 0) return;
  // The wait stays claimed in the communication part: the findings the caps cut for it (exposed
  // communication) would count it again, as the late rank's findings do.
  straggler->estimated_gain_ns = std::max(0.0, straggler->estimated_gain_ns - explained);
  straggler->gain_cut = fmt::format("rank {}'s own findings count the rest", *late);
  straggler->gain_model += fmt::format(
      ", less what rank {}'s findings cost it beyond the other ranks ({:.3f} ms per step), which the wait repeats",
      *late, explained / 1e6);
}

// communication.exposed counts the whole exposed time of its rank, which holds that rank's wait for the last
// arrival at each collective. Where a finding names that wait's cause, the wait is charged once, to the cause:
// exposed communication keeps only what is left (at most the exposed time less the wait), which is what
// overlapping the collectives with compute could still hide.
void ChargeWaitToItsCause(const std::vector<const RankCommunication*>& comm, const CrossRankCommunication* cross,
                          const MoeBalance* moe, std::vector<Finding>* findings) {
  const Finding* cause = WaitCauseFinding(*findings);
  if (cause == nullptr) return;
  for (Finding& f : *findings) {
    if (f.id != "communication.exposed" || f.estimated_gain_ns <= 0) continue;
    const bool for_straggler = cause->id == "communication.straggler" && cross != nullptr && cross->straggler_rank;
    std::optional<RankWaitPerStep> wait = TimelineWait(comm, cross, f.evidence_rank, for_straggler);
    if (!wait && cause->id == "moe.expert_imbalance") wait = ExpertWait(moe, f.evidence_rank);
    if (!wait || wait->ns <= 0) continue;
    const double exposed = 1e3 * NumberOf(f, "exposed_communication_us");
    const double left = std::max(0.0, std::min(f.estimated_gain_ns, exposed - wait->ns));
    if (left >= f.estimated_gain_ns) continue;
    f.estimated_gain_ns = left;
    f.gain_cut = fmt::format("less the {:.3f} ms a step rank {} waits for {}, which {} counts", wait->ns / 1e6,
                             f.evidence_rank, wait->for_what, std::string_view(cause->id));
    f.AddNumber(wait->label, wait->ns / 1e3, "us");
  }
}

// On a pipeline every micro-batch passes the slowest stage, so a stage that works less waits for it: its
// own kernels finishing sooner only lengthen that wait. Its compute findings save nothing of the step;
// the same findings on the bounding stage's ranks keep their gains, which the merge across ranks then quotes.
void NoStepGainOffBoundingStage(const PipelineAnalysis& p, int64_t rank, std::vector<Finding>* findings) {
  const PipelineStage* own = StageOfRank(p, rank);
  if (own == nullptr || own->stage == p.slowest_stage) return;
  const PipelineStage& slowest = StageNumbered(p, p.slowest_stage);
  if (slowest.work_ns_per_step - own->work_ns_per_step <= kStageTieShare * slowest.work_ns_per_step) return;
  for (Finding& finding : *findings) {
    if (!SavesOwnDeviceWork(finding.saves_from) || finding.estimated_gain_ns <= 0) continue;
    finding.estimated_gain_ns = 0;
    finding.gain_cut = fmt::format(
        "no step gain: stage {} {} {:.3f} ms a step against stage {}'s {:.3f} ms and waits for it; only the "
        "bounding stage's work sets the step",
        own->stage, p.work_is_computing ? "computes" : "works", own->work_ns_per_step / 1e6, slowest.stage,
        slowest.work_ns_per_step / 1e6);
  }
}

// Merged across ranks, each finding quotes the rank where it gains most, and two findings of one part may
// quote two ranks: their gains together could exceed what either rank has of that part. Each claim is
// capped with the figures of the rank it quotes: with the claims on that part before it (largest first), at
// most that rank's time of the part.
void KeepPartClaimsWithinQuotedRanks(const std::vector<RankAdvice>& ranks, std::vector<Finding>* findings) {
  std::map<int64_t, const TimeSplit*> split_of;
  for (const RankAdvice& r : ranks) split_of.emplace(r.rank, &r.split);
  std::vector<Finding*> order;
  for (Finding& f : *findings) {
    if (f.estimated_gain_ns > 0 && split_of.contains(f.evidence_rank)) order.push_back(&f);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Finding* a, const Finding* b) { return a->estimated_gain_ns > b->estimated_gain_ns; });
  PartTimes claimed{};
  for (Finding* f : order) {
    const auto part = static_cast<size_t>(f->saves_from);
    const double own = split_of.at(f->evidence_rank)->part_ns[part];
    const double left = std::max(0.0, own - claimed[part]);
    if (f->estimated_gain_ns > left) {
      f->gain_cut = fmt::format(
          "capped at rank {}'s {:.3f} ms of {} time a step, less the {:.3f} ms other findings "
          "claim of it",
          f->evidence_rank, own / 1e6, TimePartName(f->saves_from), claimed[part] / 1e6);
      f->estimated_gain_ns = left;
    }
    claimed[part] += f->estimated_gain_ns;
  }
}

void AddLargestParts(const TimeSplit& split, PartTimes* most) {
  for (size_t p = 0; p < most->size(); ++p) (*most)[p] = std::max((*most)[p], split.part_ns[p]);
}

// Catch-all findings (the idle chunks of a run, by two readings) name one symptom: on each rank the first
// takes the part's time (CapGains), but on another rank the other may come first, and the merged list would
// claim the time once per finding. Across the run they share the part's largest time: the largest gain keeps
// it, the next keeps what is left.
void ShareCatchAllParts(const PartTimes& most, std::vector<Finding>* findings) {
  std::vector<Finding*> catch_all;
  for (Finding& f : *findings) {
    if (f.catch_all && f.estimated_gain_ns > 0) catch_all.push_back(&f);
  }
  std::stable_sort(catch_all.begin(), catch_all.end(),
                   [](const Finding* a, const Finding* b) { return a->estimated_gain_ns > b->estimated_gain_ns; });
  PartTimes left = most;
  for (Finding* f : catch_all) {
    double& part_left = left[static_cast<size_t>(f->saves_from)];
    if (f->estimated_gain_ns > part_left) {
      f->estimated_gain_ns = std::max(0.0, part_left);
      f->gain_cut = fmt::format("capped at the {} time left once another catch-all finding claimed it on another rank",
                                TimePartName(f->saves_from));
    }
    part_left -= f->estimated_gain_ns;
  }
}

}  // namespace tuneprof

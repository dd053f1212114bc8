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

// Device work a fix on the rank itself makes shorter: compute, memory-bound and unclassed kernels.
bool SavesOwnDeviceWork(TimePart part) {
  return part == TimePart::kComputeBound || part == TimePart::kMemoryBound || part == TimePart::kUnclassified;
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
  if (straggler == findings->end()) return;
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
                          std::vector<Finding>* findings) {
  const Finding* cause = WaitCauseFinding(*findings);
  if (cause == nullptr || cross == nullptr) return;
  for (Finding& f : *findings) {
    if (f.id != "communication.exposed" || f.estimated_gain_ns <= 0) continue;
    for (size_t i = 0; i < cross->ranks.size() && i < comm.size(); ++i) {
      const RankWait& w = cross->ranks[i];
      if (w.rank != f.evidence_rank || comm[i] == nullptr || comm[i]->steps == 0) continue;
      const double wait = static_cast<double>(w.wait_ns) / static_cast<double>(comm[i]->steps);
      const double exposed = 1e3 * NumberOf(f, "exposed_communication_us");
      const double left = std::max(0.0, std::min(f.estimated_gain_ns, exposed - wait));
      if (wait <= 0 || left >= f.estimated_gain_ns) break;
      f.estimated_gain_ns = left;
      f.gain_cut = fmt::format("less the {:.3f} ms a step rank {} waits for the last arrival, which {} counts",
                               wait / 1e6, w.rank, std::string_view(cause->id));
      f.AddNumber("wait_for_last_arrival_us", wait / 1e3, "us");
      break;
    }
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

#include "analysis/advisor/advisor.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <span>
#include <thread>

#include "analysis/advisor/rules/rules.h"
#include "analysis/advisor/stage_findings.h"
#include "analysis/advisor/utilizations.h"
#include "base/rank_ranges.h"

namespace tuneprof {
namespace {

constexpr double kNoneGainShare = 0.05;  // "none" only if no finding would save 5 % of the step

TinyOpLimits TinyLimits(const AdvisorConfig& config) {
  return TinyOpLimits{config.Get(threshold::kTinyOpKib) * 1024, config.Get(threshold::kTinyOpMflop) * 1e6,
                      static_cast<int64_t>(config.Get(threshold::kTinyOpUs) * 1e3)};
}

// Time per bottleneck of one rank's mean step.
std::array<double, 7> BottleneckTimes(const TimeSplit& split) {
  std::array<double, 7> times{};
  // Computing no operator classes, or of a kind no rule knows (both unclassified), is computing all the
  // same: the guide's compute part.
  times[static_cast<size_t>(Bottleneck::kCompute)] =
      split.part(TimePart::kComputeBound) + split.part(TimePart::kUnclassified);
  times[static_cast<size_t>(Bottleneck::kMemory)] = split.part(TimePart::kMemoryBound) + split.part(TimePart::kMemcpy);
  times[static_cast<size_t>(Bottleneck::kCommunication)] =
      split.part(TimePart::kCommunication) + split.part(TimePart::kPipelineBubble);
  times[static_cast<size_t>(Bottleneck::kHost)] = split.part(TimePart::kHostWait);
  times[static_cast<size_t>(Bottleneck::kData)] = split.part(TimePart::kData);
  times[static_cast<size_t>(Bottleneck::kIdle)] = split.part(TimePart::kIdle);
  return times;
}

Bottleneck Largest(const std::array<double, 7>& times) {
  Bottleneck best = Bottleneck::kNone;
  double best_ns = 0;
  for (size_t b = 0; b < times.size(); ++b) {
    if (times[b] > best_ns) best_ns = times[b], best = static_cast<Bottleneck>(b);
  }
  return best;
}

void MergeInto(const Finding& finding, std::map<std::string_view, Finding>* merged) {
  auto [it, inserted] = merged->try_emplace(finding.id, finding);
  if (inserted) return;
  std::vector<int64_t> ranks = it->second.ranks;
  if (finding.estimated_gain_ns > it->second.estimated_gain_ns) it->second = finding;  // its evidence_rank too
  ranks.insert(ranks.end(), finding.ranks.begin(), finding.ranks.end());
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  it->second.ranks = std::move(ranks);
}

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

// A quoted gain below this multiple of the other ranks' median reads as the job's: no note.
constexpr double kStandsOutFactor = 2.0;

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

// The rank communication.straggler says the others wait for: the timeline's straggler or msprof-analyze's
// slow rank, as its evidence names them; none when the late rank is not in the input.
std::optional<int64_t> LateRankOf(const Finding& straggler) {
  for (const Evidence& e : straggler.evidence) {
    if ((e.label == "straggler_rank" || e.label == "slow_rank") && e.number) return std::llround(*e.number);
  }
  return std::nullopt;
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

// A communication verdict whose time is mostly the other ranks waiting for one late rank: the fix is that
// rank's own work, not the collectives, so the verdict says so. "" when no straggler stands out.
std::string StragglerShareOfCommunication(const CrossRankCommunication& cross) {
  if (!cross.straggler_rank || !cross.straggler_stands_out || cross.straggler_within_clock_uncertainty) return "";
  int64_t wait = 0;
  int64_t communication = 0;
  for (const RankWait& w : cross.ranks) {
    if (w.rank == *cross.straggler_rank || w.matched == 0) continue;
    wait += w.wait_ns;
    communication += w.communication_ns;
  }
  if (communication <= 0 || 2 * wait < communication) return "";
  return fmt::format(
      "; {:.1f} % of the other ranks' collective time is waiting for rank {} to arrive "
      "(communication.straggler): its own work delays them",
      100.0 * static_cast<double>(wait) / static_cast<double>(communication), *cross.straggler_rank);
}

// A trace without step markers that is mostly one-off set-up (host.framework_overhead names the region):
// the verdict speaks of that set-up, and says so. "" otherwise.
std::string OneOffNote(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    for (const Evidence& e : f.evidence) {
      if (e.label == "one_off_region") {
        return fmt::format(
            "; the trace marks no steps and most of it is '{}', which runs once: profile "
            "steady-state steps for a per-step verdict",
            e.text);
      }
    }
  }
  return "";
}

// `times`: one rank's mean step split by bottleneck, averaged over `ranks` ranks; they add up to that
// mean step, so the figures quoted are of one population.
std::string DescribeVerdict(Bottleneck dominant, const std::array<double, 7>& times, size_t ranks) {
  double step = 0;
  for (double t : times) step += t;
  if (step <= 0) return "no work found in the trace";
  const std::string of_step = ranks > 1 ? fmt::format("a {:.3f} ms mean step, mean over {} ranks", step / 1e6, ranks)
                                        : fmt::format("a {:.3f} ms mean step", step / 1e6);
  if (dominant == Bottleneck::kNone) {
    const double compute = times[static_cast<size_t>(Bottleneck::kCompute)];
    return fmt::format(
        "compute holds {:.1f} % of the step time ({:.3f} ms of {}) with the compute units at or above their "
        "threshold, and no finding would save {:.0f} % of the step",
        100 * compute / step, compute / 1e6, of_step, 100 * kNoneGainShare);
  }
  const double part = times[static_cast<size_t>(dominant)];
  return fmt::format("{} holds {:.1f} % of the step time ({:.3f} ms of {})", BottleneckName(dominant),
                     100 * part / step, part / 1e6, of_step);
}

}  // namespace

void CapGains(const TimeSplit& split, std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(),  // ties keep the rules' order: deterministic caps
                   [](const Finding& a, const Finding& b) {
                     if (a.catch_all != b.catch_all) return b.catch_all;
                     return a.uncapped_gain_ns > b.uncapped_gain_ns;
                   });
  std::array<double, static_cast<size_t>(TimePart::kCount)> left = split.part_ns;
  for (Finding& finding : *findings) {
    double& part_left = left[static_cast<size_t>(finding.saves_from)];
    finding.estimated_gain_ns = std::clamp(finding.uncapped_gain_ns, 0.0, part_left);
    if (finding.estimated_gain_ns < finding.uncapped_gain_ns) {
      // On a pipeline rank the communication part is what stays exposed outside the bubble: said so, since
      // the rank's communication time is larger.
      const bool outside_bubble =
          finding.saves_from == TimePart::kCommunication && split.part(TimePart::kPipelineBubble) > 0;
      const std::string part = outside_bubble ? std::string("exposed communication (outside the pipeline bubble)")
                                              : std::string(TimePartName(finding.saves_from));
      finding.gain_cut = part_left < split.part(finding.saves_from)
                             ? fmt::format("capped at the {} time other findings leave", part)
                             : fmt::format("capped at the step's {} time", part);
    }
    part_left -= finding.estimated_gain_ns;
  }
}

// Adds one of `ranks` ranks' split to their mean.
void AddToMean(const TimeSplit& split, size_t ranks, TimeSplit* mean) {
  const double weight = 1.0 / static_cast<double>(std::max<size_t>(ranks, 1));
  mean->steps += split.steps;
  mean->step_ns += weight * split.step_ns;
  for (size_t p = 0; p < mean->part_ns.size(); ++p) mean->part_ns[p] += weight * split.part_ns[p];
  mean->compute_bound_share += weight * split.compute_bound_share;
  mean->unclassified_share += weight * split.unclassified_share;
  mean->dataloader_ns += weight * split.dataloader_ns;
  mean->dispatch_ns += weight * split.dispatch_ns;
  mean->compute_classes_known = mean->compute_classes_known && split.compute_classes_known;
  mean->cpu_only = split.cpu_only;
}

namespace {

// An NPU device, or a torch_npu trace (whose devices may all be host-side when only the CPU was captured).
bool RunsOnNpu(const Trace& trace) {
  for (const Device& device : trace.devices()) {
    if (device.type == DeviceType::kNpu) return true;
  }
  return FactsOf(trace.metadata().format).ascend_profiler;
}

// The rules that read the other ranks, on one rank's draft (each rule stays quiet without what it
// needs); then all its findings in the rules' order.
// communication.low_bandwidth is found on one rank, over its collectives' kernel time. Across ranks that
// time splits into waiting for the last peer and moving the data, and only the moving runs faster on a
// faster link: the finding keeps the transfer share of its gain (the wait is communication.straggler's).
void KeepTransferShare(const CrossRankCommunication* cross, int64_t rank_id, std::vector<RuleFinding>* findings) {
  if (cross == nullptr) return;
  const auto wait =
      std::find_if(cross->ranks.begin(), cross->ranks.end(), [&](const RankWait& w) { return w.rank == rank_id; });
  if (wait == cross->ranks.end() || wait->matched == 0 || wait->communication_ns <= 0) return;
  const double share = static_cast<double>(wait->transfer_ns) / static_cast<double>(wait->communication_ns);
  for (RuleFinding& found : *findings) {
    Finding& f = found.finding;
    if (f.id != "communication.low_bandwidth") continue;
    f.uncapped_gain_ns *= share;
    f.AddNumber("transfer_share_pct", 100 * share, "%");
    f.gain_model = fmt::format(
        "exposed communication x (1 - utilization / threshold) x the transfer share ({:.1f} %) of the rank's {} "
        "matched collectives: the link brought to the threshold; the rest of their time waits for late peers "
        "(communication.straggler)",
        100 * share, wait->matched);
  }
}

// The bytes of each EP rank's all-to-alls per step, beside its tokens (drafts and `comm` run in parallel).
void AddAllToAllBytes(const std::vector<RankAdviceDraft>& ranks, const std::vector<const RankCommunication*>& comm,
                      MoeBalance* moe) {
  if (moe->ranks.empty()) return;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (!ranks[i].moe.found()) continue;
    double bytes = -1;
    if (i < comm.size() && comm[i] != nullptr) {
      for (const Collective& c : comm[i]->collectives) {
        if (c.type == CollectiveType::kAllToAll && c.bytes != kNoId)
          bytes = std::max(bytes, 0.0) + static_cast<double>(c.bytes);
      }
    }
    moe->all_to_all_bytes_per_step.push_back(bytes < 0 ? bytes : bytes / static_cast<double>(ranks[i].moe.steps));
  }
}

std::vector<Finding> RankFindings(RankAdviceDraft& draft, const RankCommunication* comm, const AdvisorConfig& config,
                                  const CrossRankCommunication* cross, const MoeBalance* moe) {
  RankEvidence rank;
  rank.moe = moe;
  rank.split = draft.advice.split;
  rank.comm = comm;
  rank.cross = cross;
  rank.rank_id = draft.advice.rank;
  rank.on_npu = draft.on_npu;
  const std::span<const RuleFunction> rules = AllRules();
  for (size_t r = 0; r < rules.size(); ++r) {
    if (!RuleReadsOtherRanks(rules[r])) continue;
    std::vector<Finding> found;
    rules[r](rank, config, &found);
    for (Finding& finding : found) draft.findings.push_back(RuleFinding{r, std::move(finding)});
  }
  KeepTransferShare(cross, draft.advice.rank, &draft.findings);
  std::stable_sort(draft.findings.begin(), draft.findings.end(),
                   [](const RuleFinding& a, const RuleFinding& b) { return a.rule < b.rule; });
  std::vector<Finding> findings;
  findings.reserve(draft.findings.size());
  for (RuleFinding& f : draft.findings) findings.push_back(std::move(f.finding));
  return findings;
}

}  // namespace

namespace {

// Runs `rule(0)` .. `rule(n - 1)`, on two threads when a core is spare: each takes the next rule not yet
// taken, so a long rule (the attention search) runs beside the others rather than before them.
template <typename Rule>
void ForEachRule(size_t n, bool two_threads, const Rule& rule) {
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t r = next++; r < n; r = next++) rule(r);
  };
  if (!two_threads) {
    work();
    return;
  }
  std::thread helper(work);
  work();
  helper.join();
}

}  // namespace

RankAdviceDraft AdviseRank(const RankInputs& input, const AdvisorConfig& config) {
  RankEvidence rank;  // member by member: its shared operator sequences are built in place, never copied
  rank.trace = input.trace;
  rank.breakdown = input.breakdown;
  rank.compute = input.compute;
  rank.hardware = input.hardware;
  rank.tree = input.tree != nullptr ? std::move(*input.tree) : BuildHostOpTree(*input.trace);
  rank.memory = input.memory;
  rank.comm = input.comm;
  rank.rank_id = input.trace->metadata().rank;
  rank.on_npu = RunsOnNpu(*input.trace);
  rank.split = SplitStepTime(*rank.trace, *rank.breakdown, rank.tree, TinyLimits(config));
  const ModuleAttribution modules = AttributeWorkToModules(*rank.trace);
  rank.modules = &modules;
  RankAdviceDraft draft;
  draft.on_npu = rank.on_npu;
  draft.moe = MeasureMoeLoad(*rank.trace, rank.tree);
  draft.moe.call_ns.shrink_to_fit();
  const std::span<const RuleFunction> rules = AllRules();
  std::vector<std::vector<Finding>> found(rules.size());
  ForEachRule(rules.size(), input.spare_core, [&](size_t r) {
    if (!RuleReadsOtherRanks(rules[r])) rules[r](rank, config, &found[r]);
  });
  for (size_t r = 0; r < rules.size(); ++r) {
    for (Finding& finding : found[r]) draft.findings.push_back(RuleFinding{r, std::move(finding)});
  }
  draft.advice =
      RankAdvice{rank.rank_id, input.trace->metadata().path, rank.split, Utilizations(rank, config), Bottleneck::kNone};
  draft.advice.dominant = Largest(BottleneckTimes(rank.split));
  // Every rank's draft waits for the reduce: kept without its vectors' growth slack.
  for (RuleFinding& kept : draft.findings) {
    kept.finding.evidence.shrink_to_fit();
    kept.finding.modules.shrink_to_fit();
  }
  draft.findings.shrink_to_fit();
  return draft;
}

namespace {

// On GPUs the pipeline's wait sits in the exposed communication (the pp group's send / recv kernels wait
// for their peer; pipeline_stages.h measures how long): in a pipeline it is taken out into the bubble part, which only pipeline findings save
// from; overlapping communication with compute, which DDP bucket advice is about, cannot hide it.
bool SplitOutGpuPipelineWait(const CrossRankCommunication* cross, const RankCommunication* comm, TimeSplit* split) {
  if (cross == nullptr || !cross->pipeline || comm == nullptr || split->part(TimePart::kPipelineBubble) > 0) {
    return false;
  }
  const double wait =
      std::min(GpuPipelineWaitNsPerStep(*cross->pipeline, comm->rank), split->part(TimePart::kCommunication));
  if (wait <= 0) return false;
  split->part_ns[static_cast<size_t>(TimePart::kCommunication)] -= wait;
  split->part_ns[static_cast<size_t>(TimePart::kPipelineBubble)] += wait;
  return true;
}

// The per-rank rules ran before the ranks met, when a pipeline stage's receive waits still counted as exposed
// communication: once they are the bubble, communication.exposed keeps only what is left, and goes where that
// is under its threshold (gradient buckets cannot hide a wait for the previous stage).
void RecheckExposedCommunication(const TimeSplit& split, const AdvisorConfig& config,
                                 std::vector<RuleFinding>* findings) {
  const double exposed = split.part(TimePart::kCommunication);
  const double pct = split.step_ns > 0 ? 100 * exposed / split.step_ns : 0;
  const bool below = exposed <= 0 || pct < config.Get(threshold::kExposedCommunicationPct);
  std::erase_if(*findings, [&](const RuleFinding& f) { return f.finding.id == "communication.exposed" && below; });
  for (RuleFinding& f : *findings) {
    if (f.finding.id != "communication.exposed") continue;
    f.finding.value = pct;
    f.finding.title = fmt::format("{:.1f} % of the step is communication not hidden under compute ({:.2f} ms per step)",
                                  pct, exposed / 1e6);
    f.finding.uncapped_gain_ns = std::min(f.finding.uncapped_gain_ns, exposed);
  }
}

// A pipeline's step is bounded by the stage that computes most, not by the mean over ranks: named beside
// it, with the stage that waits longest for it.
std::string PipelineNote(const PipelineAnalysis& p) {
  const PipelineStage& slowest = StageNumbered(p, p.slowest_stage);
  const PipelineStage* waits = &p.stages.front();
  for (const PipelineStage& s : p.stages) {
    if (s.bubble_ns_per_step > waits->bubble_ns_per_step) waits = &s;
  }
  std::string note = StagesEven(p)
                         ? fmt::format("; pipeline: stages even, {} {:.3f} ms a step each",
                                       p.work_is_computing ? "computing" : "working", p.mean_work_ns_per_step / 1e6)
                         : fmt::format(
                               "; pipeline: stage {} (ranks {}) bounds the step, {} {:.3f} ms a step against "
                               "{:.3f} ms on the mean stage",
                               slowest.stage, RankRanges(slowest.ranks), p.work_is_computing ? "computing" : "working",
                               slowest.work_ns_per_step / 1e6, p.mean_work_ns_per_step / 1e6);
  if (waits->bubble_ns_per_step > 0 && waits->step_ns_per_step > 0) {
    note += fmt::format("; stage {} waits {:.3f} ms a step in bubbles ({:.1f} % of its step)", waits->stage,
                        waits->bubble_ns_per_step / 1e6, 100 * waits->bubble_ns_per_step / waits->step_ns_per_step);
  }
  return note;
}

// Device work a fix on the rank itself makes shorter: compute, memory-bound and unclassed kernels.
bool SavesOwnDeviceWork(TimePart part) {
  return part == TimePart::kComputeBound || part == TimePart::kMemoryBound || part == TimePart::kUnclassified;
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

// Each part's largest time per step over the ranks: what findings of that part can claim across the run.
using PartTimes = std::array<double, static_cast<size_t>(TimePart::kCount)>;

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

// The mean over ranks hides who sets the pace: a pipeline's slowest stage, or a straggler that stands out
// beyond what the clocks can be wrong by.
std::string BoundedBy(const CrossRankCommunication& cross) {
  if (cross.pipeline) {
    const PipelineStage& slowest = StageNumbered(*cross.pipeline, cross.pipeline->slowest_stage);
    if (StagesEven(*cross.pipeline)) return "pipeline stages even: the schedule's bubble, not a stage, bounds the step";
    return fmt::format("stage {} (ranks {}) bounds the step", slowest.stage, RankRanges(slowest.ranks));
  }
  if (cross.straggler_rank && cross.straggler_stands_out && !cross.straggler_within_clock_uncertainty) {
    return fmt::format("rank {} arrives last at the collectives and the others wait for it", *cross.straggler_rank);
  }
  return "";
}

// Orders the merged findings by gain and caps their sum by the slowest step: per-rank caps do not bound
// findings from different ranks together.
void RankAcrossRanks(const RankGains& gains, size_t ranks, AdvisorResult* result) {
  std::stable_sort(result->findings.begin(), result->findings.end(),
                   [](const Finding& a, const Finding& b) { return a.estimated_gain_ns > b.estimated_gain_ns; });
  double step_left = result->step_ns;
  for (Finding& finding : result->findings) {
    if (finding.estimated_gain_ns > step_left)
      finding.gain_cut = "capped at the slowest step's time other findings leave";
    finding.estimated_gain_ns = std::min(finding.estimated_gain_ns, step_left);
    step_left -= finding.estimated_gain_ns;
    NoteOthersMedian(gains, ranks, &finding);
  }
}

// The dominant bottleneck and the numbers behind it, from the ranks' summed times per bottleneck.
void GiveVerdict(std::array<double, 7> job_times, bool units_healthy, const CrossRankCommunication* cross,
                 AdvisorResult* result) {
  // The verdict speaks of one rank's mean step: average the ranks' times per bottleneck.
  for (double& t : job_times) t /= static_cast<double>(std::max<size_t>(result->mean_ranks, 1));
  result->dominant = Largest(job_times);
  const bool big_finding =
      !result->findings.empty() && result->findings.front().estimated_gain_ns >= kNoneGainShare * result->step_ns;
  if (result->dominant == Bottleneck::kCompute && units_healthy && !big_finding) result->dominant = Bottleneck::kNone;
  result->dominant_reason = DescribeVerdict(result->dominant, job_times, result->mean_ranks);
  if (result->dominant == Bottleneck::kCommunication && cross != nullptr) {
    result->dominant_reason += StragglerShareOfCommunication(*cross);
  }
  if (cross != nullptr && cross->pipeline) result->dominant_reason += PipelineNote(*cross->pipeline);
  if (cross != nullptr) result->bounded_by = BoundedBy(*cross);
  result->dominant_reason += OneOffNote(result->findings);
}

}  // namespace

AdvisorResult CombineAdvice(std::vector<RankAdviceDraft> ranks, const std::vector<const RankCommunication*>& comm,
                            const AdvisorConfig& config, const CrossRankCommunication* cross) {
  AdvisorResult result;
  std::map<std::string_view, Finding> merged;  // by id (pooled)
  RankGains gains;
  std::array<double, 7> job_times{};
  bool units_healthy = true;
  PartTimes most_per_part{};
  result.ranks.reserve(ranks.size());
  // A rank without a complete step (cut off before its first one ended) has nothing to average; when no
  // rank has one, all count, and every mean is zero.
  const auto with_steps = static_cast<size_t>(std::count_if(
      ranks.begin(), ranks.end(), [](const RankAdviceDraft& draft) { return draft.advice.split.steps > 0; }));
  result.mean_ranks = with_steps > 0 ? with_steps : ranks.size();
  const auto in_mean = [&](const RankAdviceDraft& draft) { return with_steps == 0 || draft.advice.split.steps > 0; };
  std::vector<const RankMoeLoad*> loads;
  for (const RankAdviceDraft& draft : ranks) loads.push_back(&draft.moe);
  MoeBalance moe = BalanceAcrossRanks(loads);
  AddAllToAllBytes(ranks, comm, &moe);
  for (size_t i = 0; i < ranks.size(); ++i) {
    RankAdviceDraft& draft = ranks[i];
    if (SplitOutGpuPipelineWait(cross, i < comm.size() ? comm[i] : nullptr, &draft.advice.split)) {
      RecheckExposedCommunication(draft.advice.split, config, &draft.findings);
    }
    std::vector<Finding> findings =
        RankFindings(draft, i < comm.size() ? comm[i] : nullptr, config, cross, moe.ranks.empty() ? nullptr : &moe);
    std::vector<RuleFinding>().swap(draft.findings);  // moved out: freed now, not after the last rank
    CapGains(draft.advice.split, &findings);
    AddLargestParts(draft.advice.split, &most_per_part);
    if (cross != nullptr && cross->pipeline) NoStepGainOffBoundingStage(*cross->pipeline, draft.advice.rank, &findings);
    for (Finding& finding : findings) {
      finding.ranks = {draft.advice.rank};
      finding.evidence_rank = draft.advice.rank;
      gains.Add(finding, draft.advice.rank);
      MergeInto(finding, &merged);
    }
    if (in_mean(draft)) {
      const std::array<double, 7> times = BottleneckTimes(draft.advice.split);
      for (size_t b = 0; b < times.size(); ++b) job_times[b] += times[b];
      AddToMean(draft.advice.split, result.mean_ranks, &result.mean_split);
    }
    // The compute units come first (Utilizations); a draft read from a damaged summary may have none.
    const bool units_known = !draft.advice.utilizations.empty() && draft.advice.utilizations.front().value_pct;
    units_healthy = units_healthy && units_known && !draft.advice.utilizations.front().Below();
    result.step_ns = std::max(result.step_ns, draft.advice.split.step_ns);
    result.ranks.push_back(std::move(draft.advice));
  }
  for (auto& [id, finding] : merged) result.findings.push_back(std::move(finding));
  if (cross != nullptr && cross->pipeline) NameStagesOfFindings(*cross->pipeline, comm, &result.findings);
  ShareCatchAllParts(most_per_part, &result.findings);
  ChargeWaitToItsCause(comm, cross, &result.findings);
  KeepWaitNotExplained(gains, ranks.size(), &result.findings);
  RankAcrossRanks(gains, ranks.size(), &result);
  GiveVerdict(job_times, units_healthy, cross, &result);
  return result;
}

AdvisorResult RunAdvisor(const std::vector<RankInputs>& ranks, const AdvisorConfig& config,
                         const CrossRankCommunication* cross) {
  std::vector<RankAdviceDraft> drafts;
  std::vector<const RankCommunication*> comm;
  drafts.reserve(ranks.size());
  for (const RankInputs& input : ranks) {
    drafts.push_back(AdviseRank(input, config));
    comm.push_back(input.comm);
  }
  return CombineAdvice(std::move(drafts), comm, config, cross);
}

}  // namespace tuneprof

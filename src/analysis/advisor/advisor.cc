#include "analysis/advisor/advisor.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <span>
#include <thread>

#include "analysis/advisor/charges.h"
#include "analysis/advisor/rules/rule_support.h"
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
  // same: the guide's compute part; so are fused compute + communication kernels, which the rank runs
  // itself and whose communication is never exposed.
  times[static_cast<size_t>(Bottleneck::kCompute)] =
      split.part(TimePart::kComputeBound) + split.part(TimePart::kUnclassified) + split.part(TimePart::kFusedComm);
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

// A communication verdict whose time is mostly the other ranks waiting for one late rank: the fix is that
// rank's own work, not the collectives, so the verdict says so. "" when no straggler stands out.
std::string StragglerShareOfCommunication(const CrossRankCommunication& cross) {
  if (!cross.straggler_rank || !cross.straggler_stands_out || cross.straggler_within_clock_uncertainty) return "";
  int64_t wait = 0;
  int64_t communication = 0;
  for (const RankWait& w : cross.ranks) {
    if (w.rank == *cross.straggler_rank || w.matched == 0) continue;
    // Only the waits at the collectives the straggler arrived at last (the pipeline's hand-offs, which wait
    // for another stage, left out): at the others the ranks waited for whoever was last there.
    wait += w.wait_for_straggler_ns;
    communication += w.communication_ns - w.pipeline_communication_ns;
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
  mean->fused_comm_share += weight * split.fused_comm_share;
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

// host.launch_bound is found on one rank, whose figures the merged finding quotes (its title's "% of the step"
// becomes that rank's step on a run of several ranks): where the rank is the straggler, it says that the others
// wait for it.
void NameTheHostWaitsRank(const CrossRankCommunication* cross, int64_t rank_id, std::vector<RuleFinding>* findings) {
  if (cross == nullptr || cross->ranks.size() < 2) return;
  if (cross->straggler_rank != rank_id || !cross->straggler_stands_out) return;
  for (RuleFinding& found : *findings) {
    Finding& f = found.finding;
    if (f.id != "host.launch_bound") continue;
    f.title += "; the other ranks wait for this rank at the collectives (communication.straggler)";
  }
}

// A trace without step markers that is mostly a one-off set-up (host.framework_overhead names the region,
// `ddp_init`) counts that set-up in its one "step": a rank whose set-up ran longer arrives late at the first
// collectives after it, and the others' wait there is set-up skew, paid once, not per step. The straggler
// finding keeps its figures but claims no per-step gain, and says where to measure one.
void SayTheStragglerWaitMayBeSetUp(std::vector<RuleFinding>* findings) {
  std::string region;
  for (const RuleFinding& found : *findings) {
    for (const Evidence& e : found.finding.evidence) {
      if (e.label == "one_off_region") region = e.text;
    }
  }
  if (region.empty()) return;
  double setup_wait_ns = 0;
  for (RuleFinding& found : *findings) {
    Finding& f = found.finding;
    if (f.id != "communication.straggler" || f.uncapped_gain_ns <= 0) continue;
    setup_wait_ns = std::max(setup_wait_ns, f.uncapped_gain_ns);
    f.uncapped_gain_ns = 0;
    f.title += fmt::format("; the trace marks no steps and is mostly '{}': set-up skew, paid once", region);
    f.gain_model = fmt::format(
        "unknown: the trace marks no steps and most of it is '{}', which runs once; a rank whose '{}' runs longer "
        "arrives late at the collectives after it, a wait paid once, not per step",
        region, region);
    f.strategy += fmt::format(
        " The trace marks no steps and is mostly '{}': profile steady-state steps (torch.profiler.schedule, "
        "prof.step()) to tell a per-step straggler from set-up skew.",
        region);
  }
  // That wait is exposed communication no overlap hides: communication.exposed keeps what is left of it.
  for (RuleFinding& found : *findings) {
    Finding& f = found.finding;
    if (f.id != "communication.exposed" || setup_wait_ns <= 0) continue;
    const auto exposed = std::find_if(f.evidence.begin(), f.evidence.end(),
                                      [](const Evidence& e) { return e.label == "exposed_communication_us"; });
    if (exposed == f.evidence.end() || !exposed->number) continue;
    f.uncapped_gain_ns = std::clamp(*exposed->number * 1e3 - setup_wait_ns, 0.0, f.uncapped_gain_ns);
    f.gain_model += fmt::format(
        "; less the {} per step waiting for a rank whose '{}' ran longer (communication.straggler), which overlap "
        "does not hide",
        FormatDuration(setup_wait_ns), region);
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
  NameTheHostWaitsRank(cross, draft.advice.rank, &draft.findings);
  SayTheStragglerWaitMayBeSetUp(&draft.findings);
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
  rank.split = SplitStepTime(*rank.trace, *rank.breakdown, rank.tree, TinyLimits(config), &rank.device_work);
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

// With even stages no stage's work bounds the step: a stage is named only where its step is longer than the
// others' (", stage 1 (ranks 2,3) with the longest step"), never against itself.
std::string LongestStepNote(const PipelineAnalysis& p) {
  const PipelineStage* longest = StepExtremesOf(p).longest;
  if (longest == nullptr) return ", their steps too";
  return fmt::format(", stage {} (ranks {}) with the longest step", longest->stage, RankRanges(longest->ranks));
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
                         ? fmt::format("; pipeline: stages even at {} {:.3f} ms a step each (imbalance {:.1f} %){}",
                                       p.work_is_computing ? "computing" : "working", p.mean_work_ns_per_step / 1e6,
                                       100 * p.imbalance, LongestStepNote(p))
                         : fmt::format(
                               "; pipeline: stage {} (ranks {}) bounds the step, {} {:.3f} ms a step against "
                               "{:.3f} ms on the mean stage",
                               slowest.stage, RankRanges(slowest.ranks), p.work_is_computing ? "computing" : "working",
                               slowest.work_ns_per_step / 1e6, p.mean_work_ns_per_step / 1e6);
  if (waits->bubble_ns_per_step > 0 && waits->step_ns_per_step > 0) {
    // Bubbles that tie name no stage: the first of equals is not the one that waits longest.
    const bool tie = std::all_of(p.stages.begin(), p.stages.end(), [&](const PipelineStage& s) {
      return waits->bubble_ns_per_step - s.bubble_ns_per_step <= kStageTieShare * waits->bubble_ns_per_step;
    });
    note += fmt::format("; {} {:.3f} ms a step in bubbles ({:.1f} % of its step)",
                        tie ? std::string("each stage waits") : fmt::format("stage {} waits", waits->stage),
                        waits->bubble_ns_per_step / 1e6, 100 * waits->bubble_ns_per_step / waits->step_ns_per_step);
  }
  return note;
}

bool HasStragglerFinding(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.id == "communication.straggler"; });
}

// The mean over ranks hides who sets the pace: a pipeline's slowest stage, or a straggler that stands out
// beyond what the clocks can be wrong by. The straggler is claimed only beside its communication.straggler
// finding: where no rank waits for it past the wait-ratio threshold (a few ms of a long collective), the
// header would name a cause no finding measures; where the HCCL wait ratios name another rank, the header
// says the two disagree, as the finding does.
std::string BoundedBy(const CrossRankCommunication& cross, const std::vector<Finding>& findings) {
  if (cross.pipeline) {
    const PipelineAnalysis& p = *cross.pipeline;
    const PipelineStage& slowest = StageNumbered(p, p.slowest_stage);
    if (!StagesEven(p))
      return fmt::format("stage {} (ranks {}) bounds the step", slowest.stage, RankRanges(slowest.ranks));
    const PipelineStage* longest = StepExtremesOf(p).longest;
    if (longest == nullptr)
      return fmt::format("pipeline stages even (imbalance {:.1f} %), their steps too", 100 * p.imbalance);
    return fmt::format("stage {} (ranks {}) has the longest step; pipeline stages even (imbalance {:.1f} %)",
                       longest->stage, RankRanges(longest->ranks), 100 * p.imbalance);
  }
  if (cross.straggler_rank && cross.straggler_stands_out && !cross.straggler_within_clock_uncertainty &&
      HasStragglerFinding(findings)) {
    // The finding quotes the wait ratios' rank where they name one: a header naming the arrivals' rank alone
    // would contradict it.
    if (cross.slow_rank_rules_disagree()) {
      return fmt::format("late rank unclear: the timeline's arrivals name rank {}, the HCCL wait ratios rank {}",
                         *cross.straggler_rank, *cross.ascend_slow_rank);
    }
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
  if (cross != nullptr) result->bounded_by = BoundedBy(*cross, result->findings);
  result->dominant_reason += OneOffNote(result->findings);
}

// On a run of several ranks a finding's figures are one rank's: "12.3 % of the step" in its title is of
// that rank's step, while the gain's share beside it is of the slowest step; the title says whose.
void NameTheStepInTitles(size_t ranks, std::vector<Finding>* findings) {
  static constexpr std::string_view kOfTheStep = "% of the step";
  if (ranks <= 1) return;
  for (Finding& finding : *findings) {
    const size_t at = finding.title.find(kOfTheStep);
    if (at == std::string::npos || finding.evidence_rank == kNoId) continue;
    finding.title.replace(at, kOfTheStep.size(), fmt::format("% of rank {}'s step", finding.evidence_rank));
  }
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
  ChargeWaitToItsCause(comm, cross, moe.ranks.empty() ? nullptr : &moe, &result.findings);
  KeepWaitNotExplained(gains, ranks.size(), &result.findings);
  KeepPartClaimsWithinQuotedRanks(result.ranks, &result.findings);
  RankAcrossRanks(gains, ranks.size(), &result);
  NameTheStepInTitles(ranks.size(), &result.findings);
  GiveVerdict(job_times, units_healthy, cross, &result);
  std::vector<RankStep> steps;
  for (const RankAdvice& r : result.ranks) steps.push_back(RankStep{r.rank, &r.split});
  result.bounding_rank = FindBoundingRank(steps, cross, result.findings);
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

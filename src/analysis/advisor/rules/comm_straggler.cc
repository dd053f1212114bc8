// communication.straggler: one rank arrives late to the collectives and the others wait for it
// (comm_cross_rank.h: per matched collective, wait = last start - own start; msprof-analyze's slow-rank
// rule on Ascend). Gain on a waiting rank: its mean wait per step, which goes away when the straggler
// catches up (its own extra work is what to fix). Only when one rank stands out: it made the others wait
// at least twice as long as any other rank did. Where the ranks kept their lead-ins, the finding says
// what the straggler did more than the median rank before the collectives it held up (by cause and by
// operator), so that no manual compare is needed; and, whichever rule fired, it compares the rank that
// computes most with the one that computes least (rank_operator_diff.h), as msprof-analyze's automatic
// kernel and API compare do.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

const RankWait* WaitOf(const CrossRankCommunication& cross, int64_t rank) {
  for (const RankWait& wait : cross.ranks) {
    if (wait.rank == rank) return &wait;
  }
  return nullptr;
}

// The timeline's arrivals and the HCCL wait ratios name different slow ranks: the finding quotes one and
// says so, as `comm` does, so that no command names a straggler the other rule contradicts.
void SayTheRulesDisagree(const CrossRankCommunication& cross, Finding* f) {
  const std::string by_arrivals = std::to_string(*cross.straggler_rank);
  const std::string by_ratios = std::to_string(*cross.ascend_slow_rank);
  f->title += fmt::format("; the rules disagree: the timeline's arrivals name rank {}, the wait ratios rank {}",
                          by_arrivals, by_ratios);
  f->AddText("disagreement", fmt::format("the timeline's arrivals (per matched collective) name rank {}, the HCCL "
                                         "wait ratios (totals) rank {}",
                                         by_arrivals, by_ratios));
  f->strategy +=
      fmt::format(" The two rules name different ranks: compare each of ranks {} and {} with a third rank's profile.",
                  by_arrivals, by_ratios);
  // Which rank is late is not known, so neither rank's wait is what putting the late one on time saves.
  f->uncapped_gain_ns = 0;
  f->gain_model = fmt::format(
      "unknown: the timeline's arrivals name rank {} late, the HCCL wait ratios rank {}; what putting the late rank "
      "on time saves is not measured until the two agree",
      by_arrivals, by_ratios);
}

bool InPipelineStage(const RankEvidence& rank) {
  if (rank.cross == nullptr || !rank.cross->pipeline) return false;
  for (const PipelineStage& stage : rank.cross->pipeline->stages) {
    if (std::find(stage.ranks.begin(), stage.ranks.end(), rank.rank_id) != stage.ranks.end()) return true;
  }
  return false;
}

// A staged rank whose late rank sits in another stage waits for the pipeline: its send / receive waits are
// the bubble the pipeline findings charge to the stage that bounds the step, not a straggler's.
bool WaitsForAnotherStage(const RankEvidence& rank, int64_t late) {
  if (rank.cross == nullptr || !rank.cross->pipeline) return false;
  const PipelineStage* own = StageOfRank(*rank.cross->pipeline, rank.rank_id);
  const PipelineStage* other = StageOfRank(*rank.cross->pipeline, late);
  return own != nullptr && other != nullptr && own->stage != other->stage;
}

// "MatMulV2 +120.0 us (3.100 -> 3.220 ms)": a name's time per step on the fast and the slow rank.
std::string DiffList(const std::vector<WorkDiff>& diffs, bool with_calls) {
  std::string out;
  for (const WorkDiff& d : diffs) {
    out += fmt::format("{}{} {}{} ({} -> {}", out.empty() ? "" : "; ", d.name.view(), d.delta_ns() >= 0 ? "+" : "-",
                       FormatDuration(std::abs(d.delta_ns())), FormatDuration(d.fast_ns), FormatDuration(d.slow_ns));
    if (with_calls) {
      out += fmt::format(", self {} -> {}, calls {:.4g} -> {:.4g}", FormatDuration(d.fast_self_ns),
                         FormatDuration(d.slow_self_ns), d.fast_calls, d.slow_calls);
    }
    out += ")";
  }
  return out;
}

// msprof-analyze compares a cluster's slowest rank with its fastest automatically (its kernel compare and
// API compare): the rank that computes most per step against the one that computes least, by the operators
// each ran between its collectives; where those name none (compute that runs before a step's first
// collective has no lead-in, or ranks that compute alike), by the device operator types of their whole
// steps; and always by the host APIs of their steps, both ranks' calls, time and self time per step.
void CompareSlowestWithFastest(const RankEvidence& rank, Finding* f) {
  if (rank.cross == nullptr || !rank.cross->slowest_vs_fastest) return;
  const RankOperatorDiff& diff = *rank.cross->slowest_vs_fastest;
  const bool by_lead_ins = !diff.extra_per_step.empty();
  if (!by_lead_ins && diff.step_operators.empty() && diff.host_apis.empty()) return;
  f->AddNumber("slowest_rank", static_cast<double>(diff.slow_rank), "rank");
  f->AddNumber("fastest_rank", static_cast<double>(diff.fast_rank), "rank");
  // Which ranks these are, by computing: the late rank may compute least (it is late for another reason).
  const std::string ranks = fmt::format("rank {} computes most ({} per step), rank {} least ({})", diff.slow_rank,
                                        FormatDuration(diff.slow_computing_ns_per_step), diff.fast_rank,
                                        FormatDuration(diff.fast_computing_ns_per_step));
  // Within 5 % the operator differences are µs-level noise: marked so that nobody acts on them.
  const char* alike = diff.computes_alike ? ", alike within 5 % (the differences below are noise, not a cause)" : "";
  if (by_lead_ins) {
    std::string operators;
    for (const LeadOperator& op : diff.extra_per_step) {
      operators += fmt::format("{}+{} in {}", operators.empty() ? "" : ", ", FormatDuration(static_cast<double>(op.ns)),
                               op.name.view());
    }
    f->AddText("slowest_vs_fastest_rank",
               fmt::format("{}{}: {} per step, between collectives", ranks, alike, operators));
  } else if (!diff.step_operators.empty()) {
    f->AddText("slowest_vs_fastest_rank",
               fmt::format("{}{}: device operators per step over whole steps, rank {} -> rank {}: {}", ranks, alike,
                           diff.fast_rank, diff.slow_rank, DiffList(diff.step_operators, /*with_calls=*/false)));
  }
  if (!diff.host_apis.empty()) {
    f->AddText("slowest_vs_fastest_apis",
               fmt::format("host APIs per step, rank {} -> rank {} (time, self time, calls): {}", diff.fast_rank,
                           diff.slow_rank, DiffList(diff.host_apis, /*with_calls=*/true)));
  }
}

// Ascend: communication.json splits each HCCL op into transit, wait and synchronization; msprof-analyze's
// slow-rank rule names the rank the others wait for. Without it (one rank in the input, or ranks too
// alike to name one), a rank's own wait does not say who is late: HCCL's wait holds the handshake every
// rank of the op goes through, so the late rank itself can show a high ratio (both ranks of a pair at
// 0.48). The finding then says the rank waits and that the late rank cannot be told from its data; its gain
// is unknown (the wait is symmetric handshake as much as lateness), so it does not rank above measured ones.
void AscendSlowRank(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const int64_t self = rank.rank_id;
  const std::optional<int64_t> slow = rank.cross ? rank.cross->ascend_slow_rank : std::nullopt;
  if (slow == self || rank.comm == nullptr || !rank.comm->ascend_wait_ratio) return;
  const int64_t slow_rank = slow.value_or(kNoId);  // read only where `slow` is set
  // A pipeline stage's send / receive waits are its bubble, which the pipeline findings charge to the stage
  // that bounds the step: on a staged rank only the collectives' waits are weighed here.
  const bool staged = InPipelineStage(rank);
  double wait_ms = 0, transit_ms = 0;
  for (const AscendCommOp& op : rank.comm->ascend_ops) {
    if (op.total || !SplitKnown(op) || (staged && op.p2p)) continue;
    wait_ms += op.wait_ms;
    if (op.transit_ms > 0) transit_ms += op.transit_ms;
  }
  const std::optional<double> ratio =
      !staged ? rank.comm->ascend_wait_ratio
              : (wait_ms + transit_ms > 0 ? std::optional<double>(wait_ms / (wait_ms + transit_ms)) : std::nullopt);
  if (!ratio) return;
  const double threshold = config.Get(threshold::kCommWaitRatioPct);
  const double ratio_pct = 100 * *ratio;
  if (ratio_pct < threshold) return;
  const double wait_per_step = PerStep(rank, wait_ms * 1e6);
  Finding f = NewFinding("communication.straggler", rank, config);
  f.title = slow ? fmt::format(
                       "rank {} waits for rank {}: HCCL wait ratio {:.2f}, wait / (wait + transit) ({} of "
                       "wait per step)",
                       self, slow_rank, *ratio, FormatDuration(wait_per_step))
                 : fmt::format(
                       "rank {}'s HCCL ops wait: HCCL wait ratio {:.2f}, wait / (wait + transit) ({} of wait per "
                       "step); which rank is late cannot be told from this rank alone",
                       self, *ratio, FormatDuration(wait_per_step));
  f.metric = "communication.json wait / (wait + transit)";
  f.value = ratio_pct;
  f.uncapped_gain_ns = slow ? wait_per_step : 0;
  f.gain_model = slow ? "the rank's HCCL wait time per step (communication.json)"
                      : "unknown: which rank is late cannot be told from one rank's waits, so what balancing it "
                        "saves is not measured";
  if (slow) {
    f.AddNumber("slow_rank", static_cast<double>(slow_rank), "rank");
    f.AddText("why", rank.cross->ascend_verdict);
  } else {
    f.AddText("why",
              "one rank's communication.json: its wait counts the handshake each rank of an op goes through, "
              "so the late rank shows waits too; analyse every rank's directory together to name the late one");
  }
  f.AddNumber("wait_ms_total", wait_ms, "ms");
  f.AddNumber("wait_ratio", *ratio, "ratio");
  if (rank.comm->ascend_synchronization_ratio) {
    f.AddNumber("synchronization_ratio", *rank.comm->ascend_synchronization_ratio, "ratio");
  }
  f.strategy = slow ? "Balance the slow rank's work before each collective (data, host work, a slower device): comm "
                      "shows what each rank waits for and the slow rank's own timeline what it does meanwhile; "
                      "msprof-analyze cluster for the matrix."
                    : "Profile every rank of the group and analyse their directories together: the rank the others "
                      "wait for is then named, with what it does meanwhile; msprof-analyze cluster for the matrix.";
  f.apis = {"tuneprof comm RUN_DIR", "msprof-analyze cluster -m all"};
  CompareSlowestWithFastest(rank, &f);
  if (slow && rank.cross->slow_rank_rules_disagree()) SayTheRulesDisagree(*rank.cross, &f);
  out->push_back(std::move(f));
}

// "compute 2.900 ms, host pause 1.648 ms": the causes that explain the straggler's lateness, largest first.
std::string CauseList(const RankEvidence& rank, const RankWait& straggler) {
  std::vector<std::pair<int64_t, WaitCause>> causes;
  for (size_t c = 0; c < kWaitCauseCount; ++c) {
    const auto cause = static_cast<WaitCause>(c);
    if (cause != WaitCause::kUnexplained && straggler.held_up_by_cause[c] > 0) {
      causes.emplace_back(straggler.held_up_by_cause[c], cause);
    }
  }
  std::sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [ns, cause] : causes) {
    std::string name(WaitCauseName(cause));
    std::replace(name.begin(), name.end(), '_', ' ');
    out +=
        fmt::format("{}{} {}", out.empty() ? "" : ", ", name, FormatDuration(PerStep(rank, static_cast<double>(ns))));
  }
  return out;
}

// An operator whose extra time is below this share of the time the straggler held collectives up does not
// explain its lateness (the ranks' own noise).
constexpr double kMaterialOperatorShare = 0.1;

// Why the straggler is late, measured rather than left to a manual compare: what it did more than the
// median rank before the collectives it held up, by cause and by operator (wait_causes.h).
void ExplainStraggler(const RankEvidence& rank, const RankWait& straggler, Finding* f) {
  f->AddNumber("straggler_held_up_us_per_step", PerStep(rank, static_cast<double>(straggler.held_up_ns)) / 1e3, "us");
  for (size_t c = 0; c < kWaitCauseCount; ++c) {
    f->AddNumber(fmt::format("straggler_{}_us_per_step", WaitCauseName(static_cast<WaitCause>(c))),
                 PerStep(rank, static_cast<double>(straggler.held_up_by_cause[c])) / 1e3, "us");
  }
  std::string operators;
  for (size_t i = 0; i < straggler.late_operator_extra.size() && i < 3; ++i) {
    const LeadOperator& op = straggler.late_operator_extra[i];
    if (static_cast<double>(op.ns) < kMaterialOperatorShare * static_cast<double>(straggler.held_up_ns)) break;
    operators += fmt::format("{}+{} in {}", i == 0 ? "" : ", ",
                             FormatDuration(PerStep(rank, static_cast<double>(op.ns))), op.name.view());
  }
  const std::string causes = CauseList(rank, straggler);
  if (!operators.empty()) f->AddText("straggler_extra_operators", operators);
  if (!causes.empty()) f->AddText("straggler_wait_causes", causes);
  if (operators.empty() && causes.empty()) return;
  std::string why = fmt::format("Before the {} collectives it arrived late at, ", straggler.late_collectives);
  if (operators.empty()) {
    why += fmt::format("the others wait for rank {}'s {} per step", straggler.rank, causes);
  } else {
    why += fmt::format("rank {} spends {} per step more than the median rank", straggler.rank, operators);
    if (!causes.empty()) why += fmt::format("; the others wait for its {} per step", causes);
  }
  f->strategy = why +
                ". Balance that work (data per rank, the layers or embeddings it holds, host work before "
                "the collective, logging on one rank) or fix what slows it (a slower device or link).";
  f->apis = {"tuneprof comm RUN_DIR", "tuneprof profile --critical-path RUN_DIR"};
}

}  // namespace

void RuleCommStraggler(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.cross == nullptr || rank.cross->ascend_slow_rank || rank.cross->ranks.size() < 2) {
    AscendSlowRank(rank, config, out);
  }
  if (rank.cross == nullptr || !rank.cross->straggler_rank) return;
  const int64_t self = rank.rank_id;
  const int64_t straggler = *rank.cross->straggler_rank;
  const RankWait* wait = WaitOf(*rank.cross, self);
  if (self == straggler || wait == nullptr || !wait->wait_ratio || !rank.cross->straggler_stands_out) return;
  if (WaitsForAnotherStage(rank, straggler)) return;
  const RankWait* late = WaitOf(*rank.cross, straggler);
  // Only the waits at the collectives the straggler arrived at last are its doing: at the others the rank
  // waited for whoever was last there.
  const double wait_ns = static_cast<double>(wait->wait_for_straggler_ns);
  const double wait_per_step = PerStep(rank, wait_ns);
  const double share = wait->communication_ns > 0 ? wait_ns / static_cast<double>(wait->communication_ns) : 0;
  const double threshold = config.Get(threshold::kCommWaitRatioPct);
  if (100 * share < threshold) return;
  const uint64_t last_at = late != nullptr ? late->times_last : 0;
  Finding f = NewFinding("communication.straggler", rank, config);
  f.title = fmt::format(
      "rank {} waits {} per step for rank {}, {:.0f} % of its collective time (at the {} of {} matched collectives "
      "rank {} arrived at last)",
      self, FormatDuration(wait_per_step), straggler, 100 * share, last_at, wait->matched, straggler);
  f.metric = "wait for the straggler at the collectives it arrived at last / collective time (matched collectives)";
  f.value = 100 * share;
  f.uncapped_gain_ns = wait_per_step;
  f.gain_model =
      fmt::format("rank {}'s wait for rank {} at the collectives it arrived at last, per step", self, straggler);
  f.AddNumber("straggler_rank", static_cast<double>(straggler), "rank");
  f.AddText("why", rank.cross->straggler_reason);
  f.AddNumber("wait_us_per_step", wait_per_step / 1e3, "us");
  f.AddNumber("all_waits_us_per_step", PerStep(rank, static_cast<double>(wait->wait_ns)) / 1e3, "us");
  f.AddNumber("matched_collectives", static_cast<double>(wait->matched), "count");
  f.AddNumber("straggler_last_collectives", static_cast<double>(last_at), "count");
  f.strategy =
      "Find what the straggler does that the others do not (more data, a slower device or link, "
      "host work before the collective, logging on rank 0) and balance it; compare its profile "
      "with a fast rank's (tuneprof compare).";
  f.apis = {"tuneprof compare SLOW_RANK_TRACE FAST_RANK_TRACE"};
  if (rank.cross->wait_causes_known && late != nullptr && late->held_up_ns > 0) ExplainStraggler(rank, *late, &f);
  CompareSlowestWithFastest(rank, &f);
  if (rank.cross->slow_rank_rules_disagree()) SayTheRulesDisagree(*rank.cross, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof

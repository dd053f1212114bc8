// moe.expert_imbalance: a mixture-of-experts model whose router sends more tokens to some experts (and so
// to some expert-parallel ranks) than to others (moe_balance.h). Each MoE layer's grouped matmul takes as
// long as its most loaded rank, and the other ranks wait for that rank at the all-to-all that follows.
// Gain: Σ over the layers' calls of (slowest rank's grouped-GEMM time, or its experts' time between dispatch
// and combine where the all-to-alls gave the load - the EP ranks' mean) per step, the
// step an even load would have; on the slowest rank it saves compute, on the others their wait.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// At most this many ranks are listed by name in the per-rank tokens: the rest is in the counts.
constexpr size_t kListedRanks = 64;

std::string RankTokens(const MoeBalance& moe) {
  std::string text;
  for (size_t i = 0; i < moe.ranks.size() && i < kListedRanks; ++i) {
    text += fmt::format("{}{}: {:.0f}", i == 0 ? "" : ", ", moe.ranks[i], moe.tokens_per_step[i]);
  }
  if (moe.ranks.size() > kListedRanks) text += fmt::format(", ... ({} ranks)", moe.ranks.size());
  return text;
}

// "rank: MB" per EP rank, "unknown" for a rank whose all-to-alls carry no sizes; "" when no rank's do.
std::string RankAllToAll(const MoeBalance& moe) {
  const auto& bytes = moe.all_to_all_bytes_per_step;
  if (std::none_of(bytes.begin(), bytes.end(), [](double b) { return b >= 0; })) return "";
  std::string text;
  for (size_t i = 0; i < moe.ranks.size() && i < kListedRanks && i < bytes.size(); ++i) {
    text += i == 0 ? "" : ", ";
    text += bytes[i] < 0 ? fmt::format("{}: unknown", moe.ranks[i])
                         : fmt::format("{}: {:.3f}", moe.ranks[i], bytes[i] / 1e6);
  }
  if (moe.ranks.size() > kListedRanks) text += fmt::format(", ... ({} ranks)", moe.ranks.size());
  return text;
}

bool IsEpRank(const MoeBalance& moe, int64_t rank) {
  return std::find(moe.ranks.begin(), moe.ranks.end(), rank) != moe.ranks.end();
}

void AddEvidence(const MoeBalance& moe, Finding* f) {
  f->AddNumber("ep_ranks", static_cast<double>(moe.ranks.size()), "count");
  f->AddNumber("max_rank_tokens_per_step", moe.max_rank_tokens, "count");
  f->AddNumber("mean_rank_tokens_per_step", moe.mean_rank_tokens, "count");
  f->AddNumber("max_rank", static_cast<double>(moe.max_rank), "rank");
  f->AddNumber("rank_max_over_mean", moe.rank_imbalance, "ratio");
  if (moe.max_expert >= 0) {
    f->AddNumber("max_expert_tokens_per_step", moe.max_expert_tokens, "count");
    f->AddNumber("mean_expert_tokens_per_step", moe.mean_expert_tokens, "count");
    f->AddNumber("max_expert", static_cast<double>(moe.max_expert), "");
    f->AddNumber("expert_max_over_mean", moe.expert_imbalance, "ratio");
  }
  f->AddNumber("slowest_rank", static_cast<double>(moe.slowest_rank), "rank");
  f->AddNumber("slowest_rank_extra_compute_us_per_step", moe.slowest_excess_ns / 1e3, "us");
  f->AddNumber("others_wait_us_per_step", moe.others_wait_ns / 1e3, "us");
  f->AddNumber("matched_calls", static_cast<double>(moe.matched_calls), "count");
  f->AddText("rank_tokens_per_step", RankTokens(moe));
  std::string all_to_all = RankAllToAll(moe);
  if (!all_to_all.empty()) f->AddText("rank_all_to_all_mb_per_step", std::move(all_to_all));
  f->AddText("shapes_from", moe.source);
}

std::string Title(const MoeBalance& moe) {
  const std::string experts =
      moe.max_expert < 0 ? ""
                         : fmt::format("expert {} gets {:.2f}x the mean tokens", moe.max_expert, moe.expert_imbalance);
  if (moe.ranks.size() < 2) return "MoE tokens per expert: " + experts;
  return fmt::format(
      "MoE tokens per expert-parallel rank: rank {} gets {:.2f}x the mean ({:.0f} vs {:.0f} a step){}; "
      "the others wait {} a step for its experts",
      moe.max_rank, moe.rank_imbalance, moe.max_rank_tokens, moe.mean_rank_tokens,
      experts.empty() ? "" : ", " + experts, FormatDuration(moe.others_wait_ns));
}

}  // namespace

void RuleMoeExpertBalance(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.moe == nullptr || !IsEpRank(*rank.moe, rank.rank_id)) return;
  const MoeBalance& moe = *rank.moe;
  const double threshold = config.Get(threshold::kMoeExpertImbalancePct);
  const double imbalance = std::max(moe.rank_imbalance, moe.expert_imbalance);
  if (100 * (imbalance - 1) <= threshold) return;
  Finding f = NewFinding("moe.expert_imbalance", rank, config);
  f.title = Title(moe);
  f.value = 100 * (imbalance - 1);
  f.saves_from = rank.rank_id == moe.slowest_rank ? TimePart::kComputeBound : TimePart::kCommunication;
  f.uncapped_gain_ns = moe.cost_ns;
  f.gain_model = moe.ranks.size() < 2 ? "unknown: one expert-parallel rank in the input; what the others wait for "
                                        "it is not known"
                 : MoeCallsAreGroupedGemms(moe.source)
                     ? "Σ over the MoE layers' grouped-GEMM calls of (slowest EP rank - mean of the EP ranks) per "
                       "step: the step with every rank's experts equally loaded"
                     : "Σ over the MoE layers (the experts' compute between dispatch and combine) of (slowest EP "
                       "rank - mean of the EP ranks) per step: the step with every rank's experts equally loaded";
  AddEvidence(moe, &f);
  f.strategy =
      "Even out the router: an auxiliary load-balancing loss (or a larger coefficient), a token capacity factor "
      "that caps what one expert takes per step, or replicate the hottest experts on the least loaded ranks "
      "(redundant experts, as EPLB places them) so that every expert-parallel rank gets the same tokens.";
  f.apis = {std::string(
      ForPlatform(rank,
                  "Megatron --moe-router-load-balancing-type aux_loss|seq_aux_loss|sinkhorn, --moe-aux-loss-coeff, "
                  "--moe-expert-capacity-factor (with --moe-pad-expert-input-to-capacity); DeepSeek EPLB / vLLM "
                  "--enable-eplb for redundant experts",
                  "MindSpeed --moe-router-load-balancing-type aux_loss|seq_aux_loss|sinkhorn, --moe-aux-loss-coeff, "
                  "--moe-expert-capacity-factor; redundant experts (EPLB) in MindIE / vLLM-Ascend",
                  "an auxiliary load-balancing loss, an expert capacity factor, redundant experts"))};
  out->push_back(std::move(f));
}

}  // namespace tuneprof

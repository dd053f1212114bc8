#include "analysis/comm/rank_operator_diff.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace tuneprof {
namespace {

// Ranks whose computing per step differs by less than this share of the slower's compute alike (msprof-
// analyze's 5 % gap ratio); an operator whose extra time is below kMaterialShare of the ranks' computing
// gap does not explain it (noise of the two timelines).
constexpr double kMinComputingGap = 0.05;
constexpr double kMaterialShare = 0.1;

double ComputingPerStep(const RankCommunication& r) {
  return static_cast<double>(r.computing_ns) / static_cast<double>(r.steps);
}

// Each operator's lead-in time per step on the rank.
std::map<std::string_view, double> OperatorsPerStep(const RankCommunication& r) {
  std::map<std::string_view, double> out;
  for (const CollectiveLeadIn& lead : r.lead_ins) {
    for (const LeadOperator& op : lead.operators) out[op.name.view()] += static_cast<double>(op.ns);
  }
  for (auto& [name, ns] : out) ns /= static_cast<double>(r.steps);
  return out;
}

}  // namespace

std::optional<RankOperatorDiff> DiffSlowestAndFastestRank(const std::vector<RankCommunication>& ranks) {
  const RankCommunication* slow = nullptr;
  const RankCommunication* fast = nullptr;
  for (const RankCommunication& r : ranks) {
    if (r.steps == 0 || r.lead_ins.empty()) continue;
    if (slow == nullptr || ComputingPerStep(r) > ComputingPerStep(*slow)) slow = &r;
    if (fast == nullptr || ComputingPerStep(r) < ComputingPerStep(*fast)) fast = &r;
  }
  if (slow == nullptr || slow == fast) return std::nullopt;
  const double gap = ComputingPerStep(*slow) - ComputingPerStep(*fast);
  if (gap <= 0 || gap < kMinComputingGap * ComputingPerStep(*slow)) return std::nullopt;
  RankOperatorDiff diff;
  diff.slow_rank = slow->rank;
  diff.fast_rank = fast->rank;
  diff.slow_computing_ns_per_step = ComputingPerStep(*slow);
  diff.fast_computing_ns_per_step = ComputingPerStep(*fast);
  const std::map<std::string_view, double> fast_ops = OperatorsPerStep(*fast);
  for (const auto& [name, ns] : OperatorsPerStep(*slow)) {
    auto it = fast_ops.find(name);
    const double extra = ns - (it == fast_ops.end() ? 0 : it->second);
    if (extra >= std::max(1.0, kMaterialShare * gap)) {
      diff.extra_per_step.push_back(LeadOperator{SharedText(name), static_cast<int64_t>(extra)});
    }
  }
  std::stable_sort(diff.extra_per_step.begin(), diff.extra_per_step.end(),
                   [](const LeadOperator& a, const LeadOperator& b) { return a.ns > b.ns; });
  if (diff.extra_per_step.size() > kMaxOperatorDiffs) diff.extra_per_step.resize(kMaxOperatorDiffs);
  return diff;
}

}  // namespace tuneprof

#include "analysis/comm/rank_operator_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

namespace tuneprof {
namespace {

// An operator whose extra time is below kMaterialShare of the ranks' computing gap does not explain it
// (noise of the two timelines).
constexpr double kMaterialShare = 0.1;

double ComputingPerStep(const RankCommunication& r) {
  return static_cast<double>(r.computing_ns) / static_cast<double>(r.steps);
}

bool Comparable(const RankCommunication& r) {
  return r.steps > 0 && (!r.lead_ins.empty() || !r.step_work.device_ops.empty() || !r.step_work.host_apis.empty());
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

std::vector<LeadOperator> LeadInExtras(const RankCommunication& slow, const RankCommunication& fast, double gap) {
  std::vector<LeadOperator> out;
  const std::map<std::string_view, double> fast_ops = OperatorsPerStep(fast);
  for (const auto& [name, ns] : OperatorsPerStep(slow)) {
    auto it = fast_ops.find(name);
    const double extra = ns - (it == fast_ops.end() ? 0 : it->second);
    if (extra >= std::max(1.0, kMaterialShare * gap))
      out.push_back(LeadOperator{SharedText(name), static_cast<int64_t>(extra)});
  }
  std::stable_sort(out.begin(), out.end(), [](const LeadOperator& a, const LeadOperator& b) { return a.ns > b.ns; });
  if (out.size() > kMaxOperatorDiffs) out.resize(kMaxOperatorDiffs);
  return out;
}

// The names of both lists with each rank's figures per step, the largest |difference| first. A list cut at
// kMaxStepWorkNames does not say a name it lacks took no time there: such a name is not compared.
std::vector<WorkDiff> Differences(const std::vector<NamedWork>& slow, uint64_t slow_steps,
                                  const std::vector<NamedWork>& fast, uint64_t fast_steps) {
  std::map<std::string_view, WorkDiff> by_name;
  std::map<std::string_view, int> lists;  // bit 1: in the slow rank's list, bit 2: in the fast rank's
  // One rank's list into its side of each name's figures, per step.
  const auto add = [&](const std::vector<NamedWork>& list, uint64_t steps, int bit, double WorkDiff::*calls,
                       double WorkDiff::*ns, double WorkDiff::*self_ns) {
    const double per = static_cast<double>(steps);
    for (const NamedWork& w : list) {
      lists[w.name.view()] |= bit;
      WorkDiff& d = by_name[w.name.view()];
      d.name = w.name;
      d.*calls = static_cast<double>(w.calls) / per;
      d.*ns = static_cast<double>(w.total_ns) / per;
      d.*self_ns = static_cast<double>(w.self_ns) / per;
    }
  };
  add(slow, slow_steps, 1, &WorkDiff::slow_calls, &WorkDiff::slow_ns, &WorkDiff::slow_self_ns);
  add(fast, fast_steps, 2, &WorkDiff::fast_calls, &WorkDiff::fast_ns, &WorkDiff::fast_self_ns);
  std::vector<WorkDiff> out;
  const bool slow_cut = slow.size() >= kMaxStepWorkNames, fast_cut = fast.size() >= kMaxStepWorkNames;
  for (auto& [name, d] : by_name) {
    const int in = lists[name];
    if ((!(in & 1) && slow_cut) || (!(in & 2) && fast_cut)) continue;
    if (std::abs(d.delta_ns()) >= kMinDiffNs) out.push_back(d);
  }
  // by_name is in name order, so the stable sort breaks ties by name.
  std::stable_sort(out.begin(), out.end(), [](const WorkDiff& a, const WorkDiff& b) {
    return std::abs(a.delta_ns()) > std::abs(b.delta_ns());
  });
  if (out.size() > kMaxOperatorDiffs) out.resize(kMaxOperatorDiffs);
  return out;
}

}  // namespace

std::optional<RankOperatorDiff> DiffSlowestAndFastestRank(const std::vector<RankCommunication>& ranks) {
  const RankCommunication* slow = nullptr;
  const RankCommunication* fast = nullptr;
  for (const RankCommunication& r : ranks) {
    if (!Comparable(r)) continue;
    if (slow == nullptr || ComputingPerStep(r) > ComputingPerStep(*slow)) slow = &r;
    if (fast == nullptr || ComputingPerStep(r) < ComputingPerStep(*fast)) fast = &r;
  }
  if (slow == nullptr || slow == fast) return std::nullopt;
  const double gap = ComputingPerStep(*slow) - ComputingPerStep(*fast);
  if (gap <= 0) return std::nullopt;
  RankOperatorDiff diff;
  diff.slow_rank = slow->rank;
  diff.fast_rank = fast->rank;
  diff.slow_computing_ns_per_step = ComputingPerStep(*slow);
  diff.fast_computing_ns_per_step = ComputingPerStep(*fast);
  diff.computes_alike = gap < kMinComputingGap * ComputingPerStep(*slow);
  if (!diff.computes_alike) diff.extra_per_step = LeadInExtras(*slow, *fast, gap);
  diff.step_operators = Differences(slow->step_work.device_ops, slow->steps, fast->step_work.device_ops, fast->steps);
  diff.host_apis = Differences(slow->step_work.host_apis, slow->steps, fast->step_work.host_apis, fast->steps);
  return diff;
}

}  // namespace tuneprof

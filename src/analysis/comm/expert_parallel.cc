#include "analysis/comm/expert_parallel.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "analysis/core/comm_kernel_rules.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

// Whether a collective is an expert-parallel kernel; names repeat, so each is matched once.
class ExpertParallelNames {
 public:
  bool Contains(const Collective& c) {
    if (c.source != CollectiveSource::kNcclKernel) return false;
    auto [it, added] = known_.try_emplace(c.name, false);
    if (added) {
      const CommKernelRule* rule = MatchCommKernel(c.name);
      it->second = rule != nullptr && rule->expert_parallel;
    }
    return it->second;
  }

 private:
  std::unordered_map<std::string, bool> known_;
};

// The device time the compute units are busy (compute and fused kernels), over the whole trace. Fused
// kernels known only from kernel_details (no timeline: no event draws them) compute too.
IntervalSet ComputeBusy(const Trace& trace, const std::vector<Collective>& collectives) {
  const EventTable& events = trace.events();
  std::vector<Interval> compute;
  for (const Collective& c : collectives) {
    if (c.event == kNoIndex) compute.push_back(Interval{c.start_ns, c.start_ns + c.duration_ns});
  }
  for (const DeviceWorkEvent& w : ListDeviceWork(trace)) {
    if (Computes(w.work)) compute.push_back(Interval{events.ts_ns[w.event], events.end_ns(w.event)});
  }
  return UnionOf(std::move(compute));
}

struct StepKernels {
  std::vector<Interval> spans;
  uint64_t kernels = 0;
  int64_t bytes = kNoId;
};

// `window`: the step's device span, which the kernels are measured inside, so that their share of the step
// stays within it even where the step's own definitions placed a kernel elsewhere (torch_npu's). `step_ns`
// is the step every command reports (StepTimeNs), never shorter than that span, so the share stays <= 1.
ExpertParallelStep Measure(std::optional<int64_t> step, int64_t step_ns, std::optional<Interval> window,
                           StepKernels kernels, const IntervalSet& busy) {
  ExpertParallelStep out;
  out.step = step;
  out.step_ns = step_ns;
  out.kernels = kernels.kernels;
  out.bytes = kernels.bytes;
  IntervalSet all_to_all = UnionOf(std::move(kernels.spans));
  if (window) all_to_all = Intersect(all_to_all, IntervalSet{*window});
  out.all_to_all_ns = TotalLength(all_to_all);
  out.hidden_ns = IntersectionLength(all_to_all, busy);
  out.exposed_ns = out.all_to_all_ns - out.hidden_ns;
  if (step_ns > 0) out.share_of_step = static_cast<double>(out.all_to_all_ns) / static_cast<double>(step_ns);
  return out;
}

}  // namespace

std::vector<ExpertParallelStep> MeasureExpertParallel(const Trace& trace, const RankBreakdown& breakdown,
                                                      const std::vector<Collective>& collectives) {
  // Keyed by step number; a trace without steps keys everything under nullopt.
  std::map<std::optional<int64_t>, StepKernels> by_step;
  const bool whole_trace = breakdown.steps.empty() || !breakdown.steps.front().step;
  ExpertParallelNames names;
  for (const Collective& c : collectives) {
    if (!names.Contains(c)) continue;
    if (!whole_trace && !c.step) continue;  // launched outside every step
    StepKernels& k = by_step[whole_trace ? std::nullopt : c.step];
    k.spans.push_back(Interval{c.start_ns, c.start_ns + c.duration_ns});
    ++k.kernels;
    if (c.bytes >= 0) k.bytes = std::max<int64_t>(k.bytes, 0) + c.bytes;
  }
  std::vector<ExpertParallelStep> out;
  if (by_step.empty()) return out;
  const IntervalSet busy = ComputeBusy(trace, collectives);
  if (whole_trace) {
    const StepBreakdown& whole = breakdown.steps.empty() ? breakdown.total : breakdown.steps.front();
    out.push_back(Measure(std::nullopt, whole.wall_ns, std::nullopt, std::move(by_step.begin()->second), busy));
    return out;
  }
  for (const StepBreakdown& s : breakdown.steps) {
    auto it = by_step.find(s.step);
    if (it == by_step.end()) continue;
    std::optional<Interval> window;
    if (s.device_start_ns != kNoId && s.device_end_ns != kNoId) window = Interval{s.device_start_ns, s.device_end_ns};
    out.push_back(Measure(s.step, StepTimeNs(s, breakdown.definitions), window, std::move(it->second), busy));
  }
  return out;
}

}  // namespace tuneprof

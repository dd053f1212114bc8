// idle.gpu_gaps (nsys gpu_gaps): device gaps of at least 500 ms between the first and last device work.
// idle.low_utilization (nsys gpu_time_util, TensorBoard plugin rule 5): the run cut into 30 equal
// chunks, the chunks whose device busy time is below 50 %, coalesced into ranges. Both read the union
// of the rank's device work (all devices of the rank on one timeline). Gain: the idle time inside the
// gaps (resp. low chunks), per step. Low chunks idle mostly while launched work waited to start are told
// as that cause (waiting on events, other streams or work not in the trace), not as a small batch.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

std::string Range(const Trace& trace, int64_t start, int64_t end) {
  const int64_t origin = trace.start_ns();
  return fmt::format("{:.3f}-{:.3f} ms", static_cast<double>(start - origin) / 1e6,
                     static_cast<double>(end - origin) / 1e6);
}

void Gaps(const RankEvidence& rank, const IntervalSet& busy, const AdvisorConfig& config, std::vector<Finding>* out) {
  const int64_t min_gap = static_cast<int64_t>(config.Get(threshold::kGpuGapMs) * 1e6);
  double total = 0, longest = 0;
  uint64_t count = 0;
  std::string ranges;
  for (size_t i = 1; i < busy.size(); ++i) {
    const int64_t gap = busy[i].start_ns - busy[i - 1].end_ns;
    if (gap < min_gap) continue;
    ++count;
    total += static_cast<double>(gap);
    longest = std::max(longest, static_cast<double>(gap));
    if (count <= 5) ranges += (ranges.empty() ? "" : ", ") + Range(*rank.trace, busy[i - 1].end_ns, busy[i].start_ns);
  }
  if (count == 0) return;
  Finding f = NewFinding("idle.gpu_gaps", rank, config);
  f.title = fmt::format("{} device gaps of at least {:.0f} ms ({} in all)", count, config.Get(threshold::kGpuGapMs),
                        FormatDuration(total));
  f.value = static_cast<double>(count);
  f.uncapped_gain_ns = PerStep(rank, total);
  f.AddNumber("gaps", static_cast<double>(count), "count");
  f.AddNumber("gap_total_us", total / 1e3, "us");
  f.AddNumber("longest_gap_us", longest / 1e3, "us");
  f.AddText("first_gaps", ranges);
  out->push_back(std::move(f));
}

void LowUtilization(const RankEvidence& rank, const IntervalSet& busy, const AdvisorConfig& config,
                    std::vector<Finding>* out) {
  std::vector<Interval> low_spans;
  const int64_t chunks = std::max<int64_t>(1, static_cast<int64_t>(config.Get(threshold::kGpuTimeUtilChunks)));
  const double threshold = config.Get(threshold::kDeviceBusyPct);
  const int64_t first = busy.front().start_ns, last = busy.back().end_ns;
  const int64_t chunk = (last - first) / chunks;
  if (chunk <= 0) return;
  double idle_in_low = 0, busy_in_all = 0;
  uint64_t low = 0;
  std::string ranges;
  int64_t range_start = kNoId;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t start = first + c * chunk, end = c + 1 == chunks ? last : start + chunk;
    const double used = static_cast<double>(IntersectionLength(busy, IntervalSet{Interval{start, end}}));
    busy_in_all += used;
    const bool is_low = 100 * used / static_cast<double>(end - start) < threshold;
    if (is_low) {
      ++low;
      low_spans.push_back(Interval{start, end});
      idle_in_low += static_cast<double>(end - start) - used;
      if (range_start == kNoId) range_start = start;
    }
    if ((!is_low || c + 1 == chunks) && range_start != kNoId) {
      ranges += (ranges.empty() ? "" : ", ") + Range(*rank.trace, range_start, is_low ? end : start);
      range_start = kNoId;
    }
  }
  if (low == 0) return;
  Finding f = NewFinding("idle.low_utilization", rank, config);
  f.catch_all = true;
  f.title = fmt::format("the device is busy less than {:.0f} % of the time in {} of {} chunks of the run", threshold,
                        low, chunks);
  f.value = 100 * busy_in_all / static_cast<double>(last - first);
  f.uncapped_gain_ns = PerStep(rank, idle_in_low);
  f.AddNumber("busy_pct", *f.value, "%");
  f.AddNumber("low_chunks", static_cast<double>(low), "count");
  f.AddNumber("idle_in_low_chunks_us", idle_in_low / 1e3, "us");
  f.AddText("low_ranges", ranges);
  // A run that replays CUDA graphs already has them: only more work per step is left to suggest.
  const std::string_view gpu_apis = rank.compute->graphs.any()
                                        ? "larger batch_size (the run already replays CUDA graphs)"
                                        : "larger batch_size; torch.compile(model, mode=\"reduce-overhead\")";
  f.apis = {std::string(ForPlatform(
      rank, gpu_apis,
      "larger batch_size; TASK_QUEUE_ENABLE=2 (torch_npu's two-level task queue); "
      "torch_npu.npu.NPUGraph / torch_npu.npu.graph (capture and replay a fixed-shape step; aclnn operators only)",
      "larger batch_size; torch.compile(model, mode=\"reduce-overhead\")"))};
  const double queued_idle =
      static_cast<double>(IntersectionLength(Subtract(UnionOf(std::move(low_spans)), busy), QueuedDeviceWork(rank)));
  if (queued_idle > 0 && 2 * queued_idle >= idle_in_low) SayQueuedIdle(queued_idle, &f);
  out->push_back(std::move(f));
}

}  // namespace

void RuleDeviceIdle(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.split.cpu_only) return;
  const IntervalSet& busy = rank.device_work.Busy(*rank.trace);
  if (busy.empty()) return;
  Gaps(rank, busy, config, out);
  LowUtilization(rank, busy, config, out);
}

}  // namespace tuneprof

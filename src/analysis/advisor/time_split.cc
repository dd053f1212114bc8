#include "analysis/advisor/time_split.h"

#include <algorithm>
#include <vector>

#include "analysis/advisor/op_classes.h"
#include "analysis/cpu_work.h"
#include "analysis/device_work.h"
#include "analysis/intervals.h"

namespace tuneprof {
namespace {

double MeanStepTime(const RankBreakdown& breakdown) {
  double sum = 0;
  for (const StepBreakdown& step : breakdown.steps) {
    const bool has_host_range = step.host_start_ns != kNoId && step.host_end_ns != kNoId;
    sum += static_cast<double>(has_host_range ? step.host_end_ns - step.host_start_ns : step.wall_ns);
  }
  return breakdown.steps.empty() ? 0 : sum / static_cast<double>(breakdown.steps.size());
}

// The host ranges of the steps, or everything when the trace has none.
IntervalSet StepRanges(const RankBreakdown& breakdown) {
  std::vector<Interval> ranges;
  for (const StepBreakdown& step : breakdown.steps) {
    if (step.host_start_ns == kNoId) return {Interval{std::numeric_limits<int64_t>::min() / 2,
                                                      std::numeric_limits<int64_t>::max() / 2}};
    ranges.push_back(Interval{step.host_start_ns, step.host_end_ns});
  }
  return UnionOf(std::move(ranges));
}

IntervalSet DataLoaderRanges(const Trace& trace) {
  const EventTable& events = trace.events();
  std::vector<Interval> ranges;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.dur_ns[i] <= 0 || IsDeviceKind(events.kind[i])) continue;
    if (IsDataLoaderRange(trace.str(events.name[i]))) ranges.push_back(Interval{events.ts_ns[i], events.end_ns(i)});
  }
  return UnionOf(std::move(ranges));
}

struct WorkTimes {
  IntervalSet busy;             // every work interval, except CPU work done for the DataLoader
  double compute_bound_ns = 0;  // self time of matmul/conv/attention work
  double computing_ns = 0;      // self time of all compute work
};

WorkTimes MeasureWork(const Trace& trace, const RankBreakdown& breakdown, const HostOpTree& tree,
                      const IntervalSet& dataloader) {
  const EventTable& events = trace.events();
  const bool cpu = breakdown.work_on == WorkSource::kCpu;
  WorkTimes times;
  std::vector<Interval> busy;
  for (const DeviceWorkEvent& work : cpu ? ListCpuWork(trace) : ListDeviceWork(trace)) {
    const Interval span{events.ts_ns[work.event], events.end_ns(work.event)};
    if (cpu && IntersectionLength(dataloader, IntervalSet{span}) == span.length() && span.length() > 0) continue;
    busy.push_back(span);
    if (work.work != WorkClass::kCompute) continue;
    const double self = static_cast<double>(cpu ? tree.self_ns[work.event] : std::max<int64_t>(events.dur_ns[work.event], 0));
    times.computing_ns += self;
    if (IsComputeBoundLetter(OpLetter(trace.str(events.name[work.event])))) times.compute_bound_ns += self;
  }
  times.busy = UnionOf(std::move(busy));
  return times;
}

void SetPart(TimeSplit* split, TimePart part, double ns) { split->part_ns[static_cast<size_t>(part)] = std::max(ns, 0.0); }

}  // namespace

bool IsDataLoaderRange(std::string_view name) {
  return name.find("DataLoader") != std::string_view::npos || name.find("dataloader") != std::string_view::npos;
}

TimeSplit SplitStepTime(const Trace& trace, const RankBreakdown& breakdown, const HostOpTree& tree) {
  TimeSplit split;
  split.steps = breakdown.steps.size();
  split.cpu_only = breakdown.work_on == WorkSource::kCpu;
  if (split.steps == 0) return split;
  const double n = static_cast<double>(split.steps);
  const StepBreakdown& total = breakdown.total;

  const IntervalSet dataloader = Intersect(DataLoaderRanges(trace), StepRanges(breakdown));
  const WorkTimes work = MeasureWork(trace, breakdown, tree, dataloader);
  split.compute_bound_share = work.computing_ns > 0 ? work.compute_bound_ns / work.computing_ns : 0;
  split.dataloader_ns = static_cast<double>(TotalLength(dataloader)) / n;

  double computing = static_cast<double>(total.computing_ns) / n;
  const double communication = static_cast<double>(total.communication_not_overlapped_ns) / n;
  const double memcpy = static_cast<double>(total.memcpy_ns) / n;
  // On a CPU-only trace the main thread is the device: all its DataLoader time is input-pipeline time,
  // including the operators run for it (which the breakdown counted as computing).
  double data = static_cast<double>(TotalLength(Subtract(dataloader, work.busy))) / n;
  if (split.cpu_only) {
    computing = std::max(0.0, computing - static_cast<double>(IntersectionLength(dataloader, work.busy)) / n);
    data = split.dataloader_ns;
  }
  const double busy = computing + communication + memcpy;
  split.step_ns = std::max(MeanStepTime(breakdown), busy + data);
  const double idle = split.step_ns - busy;

  data = std::min(data, idle);
  // Host wait counts every gap ended by a late launch, the DataLoader's included: take those out.
  const double host_wait = split.cpu_only ? idle - data
                                          : std::min(std::max(0.0, static_cast<double>(total.host.host_wait_ns) / n - data),
                                                     idle - data);
  SetPart(&split, TimePart::kComputeBound, computing * split.compute_bound_share);
  SetPart(&split, TimePart::kMemoryBound, computing * (1 - split.compute_bound_share));
  SetPart(&split, TimePart::kCommunication, communication);
  SetPart(&split, TimePart::kMemcpy, memcpy);
  SetPart(&split, TimePart::kData, data);
  SetPart(&split, TimePart::kHostWait, host_wait);
  SetPart(&split, TimePart::kIdle, idle - data - host_wait);
  return split;
}

}  // namespace tuneprof

#include "analysis/breakdown/ascend_step_breakdown.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "analysis/core/intervals.h"

namespace tuneprof {
namespace {

constexpr std::string_view kBubblePrefix = "hcom_receive";
constexpr std::string_view kDequeueCategory = "dequeue";
constexpr size_t kOutside = std::numeric_limits<size_t>::max();

// torch_npu runs CANN calls on a queue thread: each `dequeue` range on it ran the calls that an
// `enqueue` on the step's thread queued, and the enqueue is what sits inside the ProfilerStep.
class TaskQueue {
 public:
  explicit TaskQueue(const Trace& trace) {
    StringId dequeue;
    if (!trace.strings().Find(kDequeueCategory, &dequeue)) return;
    const EventTable& events = trace.events();
    std::vector<int64_t> enqueue_of(events.size(), kNoId);
    StringId flow;
    if (trace.strings().Find(kTorchNpuTaskQueueFlow, &flow)) {
      for (const Link& link : trace.links()) {
        if (link.category == flow) enqueue_of[link.to] = events.ts_ns[link.from];
      }
    }
    for (uint32_t i = 0; i < events.size(); ++i) {
      if (events.category[i] == dequeue && events.dur_ns[i] >= 0) {
        dequeues_.push_back(Dequeue{events.ts_ns[i], events.end_ns(i), enqueue_of[i]});
      }
    }
    std::sort(dequeues_.begin(), dequeues_.end(),
              [](const Dequeue& a, const Dequeue& b) { return a.start_ns < b.start_ns; });
  }

  bool empty() const { return dequeues_.empty(); }

  // The enqueue time behind a CANN call made at `call_ns`; kNoId when no dequeue holds the call (torch_npu
  // then drops the call) or the dequeue's enqueue is not in the trace.
  int64_t EnqueueOf(int64_t call_ns) const {
    auto it = std::upper_bound(dequeues_.begin(), dequeues_.end(), call_ns,
                               [](int64_t t, const Dequeue& d) { return t < d.start_ns; });
    if (it == dequeues_.begin()) return kNoId;
    --it;
    return call_ns <= it->end_ns ? it->enqueue_ns : kNoId;
  }

 private:
  struct Dequeue {
    int64_t start_ns;
    int64_t end_ns;
    int64_t enqueue_ns;
  };
  std::vector<Dequeue> dequeues_;
};

struct LaunchedTask {
  int64_t anchor_ns;  // when the step's thread asked for it: the enqueue, or the CANN call
  int64_t start_ns;
  int64_t end_ns;
};

std::vector<LaunchedTask> LaunchedTasks(const Trace& trace, const LaunchTimes& launch) {
  const TaskQueue queue(trace);
  const EventTable& events = trace.events();
  std::vector<LaunchedTask> tasks;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (launch[i] == kNoId || !IsDeviceKind(events.kind[i]) || events.dur_ns[i] < 0) continue;
    const int64_t anchor = queue.empty() ? launch[i] : queue.EnqueueOf(launch[i]);
    if (anchor != kNoId) tasks.push_back(LaunchedTask{anchor, events.ts_ns[i], events.end_ns(i)});
  }
  std::sort(tasks.begin(), tasks.end(),
            [](const LaunchedTask& a, const LaunchedTask& b) { return a.anchor_ns < b.anchor_ns; });
  return tasks;
}

// The device range of one step from the tasks launched in it, sorted by anchor in [first, last).
TorchNpuStepRange RangeOf(const Step& step, std::span<const LaunchedTask> launched) {
  TorchNpuStepRange range{step.number, step.start_ns, step.end_ns, step.start_ns, step.end_ns};
  if (launched.empty()) return range;
  int64_t first_start = std::numeric_limits<int64_t>::max();
  for (const LaunchedTask& t : launched) {
    if (t.anchor_ns != launched.front().anchor_ns) break;
    first_start = std::min(first_start, t.start_ns);
  }
  int64_t last_end = std::numeric_limits<int64_t>::min();
  for (auto it = launched.rbegin(); it != launched.rend() && it->anchor_ns == launched.back().anchor_ns; ++it) {
    last_end = std::max(last_end, it->end_ns);
  }
  range.start_ns = first_start;
  range.end_ns = std::max(last_end, step.end_ns);
  return range;
}

// Finds the first range (in step order, as torch_npu looks) with start <= t < end.
class RangeLocator {
 public:
  explicit RangeLocator(const std::vector<TorchNpuStepRange>& ranges)
      : ranges_(ranges), max_end_so_far_(RunningMaxEnds(ranges)) {
    min_start_after_.resize(ranges.size());
    int64_t min_start = std::numeric_limits<int64_t>::max();
    for (size_t k = ranges.size(); k > 0; --k) {
      min_start = std::min(min_start, ranges[k - 1].start_ns);
      min_start_after_[k - 1] = min_start;
    }
  }

  size_t RangeAt(int64_t t) const {
    if (ranges_.empty()) return 0;  // no steps: one window holds everything
    // Ranges before the first whose running maximum end passes t all end at or before t.
    size_t k = static_cast<size_t>(std::upper_bound(max_end_so_far_.begin(), max_end_so_far_.end(), t) -
                                   max_end_so_far_.begin());
    for (; k < ranges_.size() && min_start_after_[k] <= t; ++k) {
      if (ranges_[k].start_ns <= t && t < ranges_[k].end_ns) return k;
    }
    return kOutside;
  }

 private:
  const std::vector<TorchNpuStepRange>& ranges_;
  std::vector<int64_t> max_end_so_far_;
  std::vector<int64_t> min_start_after_;
};

// What one step collects before it is measured.
struct StepAccumulator {
  TorchNpuStep step;
  int64_t first_start_ns = std::numeric_limits<int64_t>::max();  // over every piece: the E2E span
  int64_t last_end_ns = std::numeric_limits<int64_t>::min();
  int64_t first_task_ns = std::numeric_limits<int64_t>::max();  // over compute and communication

  bool empty() const { return first_start_ns > last_end_ns; }
  void Extend(const Interval& piece) {
    first_start_ns = std::min(first_start_ns, piece.start_ns);
    last_end_ns = std::max(last_end_ns, piece.end_ns);
  }
};

IntervalSet GapsBetween(const IntervalSet& busy) {
  IntervalSet gaps;
  for (size_t i = 1; i < busy.size(); ++i) gaps.push_back(Interval{busy[i - 1].end_ns, busy[i].start_ns});
  return gaps;
}

// The device's timeline as msprof's Overlap Analysis sees it, built from the tasks.
struct OverlapPieces {
  IntervalSet compute;
  IntervalSet communication;
  IntervalSet communication_not_overlapped;
  IntervalSet free;
  IntervalSet busy;    // compute or communication
  IntervalSet memory;  // not torch_npu's: what of Free is copies and syncs
  IntervalSet other;
  std::vector<Interval> bubbles;  // hcom_receive* operations, as they are (torch_npu sums durations)
};

OverlapPieces PiecesOf(const Trace& trace, std::span<const DeviceWorkEvent> work) {
  const EventTable& events = trace.events();
  std::vector<Interval> by_class[static_cast<size_t>(WorkClass::kCount)];
  OverlapPieces pieces;
  for (const DeviceWorkEvent& w : work) {
    const Interval interval{events.ts_ns[w.event], events.end_ns(w.event)};
    // A fused compute + communication kernel counts once, as compute (device_work.h).
    const WorkClass counted = w.work == WorkClass::kFusedComm ? WorkClass::kCompute : w.work;
    by_class[static_cast<size_t>(counted)].push_back(interval);
    if (w.work == WorkClass::kCommunication && trace.str(events.name[w.event]).starts_with(kBubblePrefix)) {
      pieces.bubbles.push_back(interval);
    }
  }
  auto take = [&](WorkClass c) { return UnionOf(std::move(by_class[static_cast<size_t>(c)])); };
  pieces.compute = take(WorkClass::kCompute);
  pieces.communication = take(WorkClass::kCommunication);
  pieces.memory = take(WorkClass::kMemory);
  pieces.other = take(WorkClass::kOther);
  pieces.communication_not_overlapped = Subtract(pieces.communication, pieces.compute);
  pieces.busy = Unite(pieces.compute, pieces.communication);
  pieces.free = GapsBetween(pieces.busy);
  return pieces;
}

// Adds each piece to the step whose range holds its start; `field` is the sum it goes to.
void Distribute(const std::vector<Interval>& pieces, const RangeLocator& locator, std::vector<StepAccumulator>* steps,
                int64_t StepBreakdown::*field, bool is_task) {
  for (const Interval& piece : pieces) {
    const size_t k = locator.RangeAt(piece.start_ns);
    if (k == kOutside) continue;
    StepAccumulator& acc = (*steps)[k];
    acc.step.breakdown.*field += piece.length();
    acc.Extend(piece);
    if (is_task) acc.first_task_ns = std::min(acc.first_task_ns, piece.start_ns);
  }
}

// Copies and syncs inside the step's span that no compute or communication hides (part of Free).
void MeasureFreeContents(const OverlapPieces& pieces, const IntervalSet& span, StepBreakdown* out) {
  const IntervalSet memory = Intersect(pieces.memory, span);
  out->memory_ns = TotalLength(memory);
  out->memcpy_ns = TotalLength(Subtract(memory, pieces.busy));
  out->other_ns = TotalLength(Subtract(Subtract(Intersect(pieces.other, span), pieces.busy), pieces.memory));
}

void Finish(const OverlapPieces& pieces, StepAccumulator* acc) {
  StepBreakdown& s = acc->step.breakdown;
  s.device_events = acc->step.events.size();
  s.overlapped_ns = s.communication_ns - s.communication_not_overlapped_ns;
  if (acc->empty()) return;
  s.device_start_ns = acc->first_start_ns;
  s.device_end_ns = acc->last_end_ns;
  s.wall_ns = acc->last_end_ns - acc->first_start_ns - s.bubble_ns;
  if (s.host_start_ns != kNoId && acc->first_task_ns != std::numeric_limits<int64_t>::max()) {
    s.preparing_ns = acc->first_task_ns - s.host_start_ns;
  }
  MeasureFreeContents(pieces, IntervalSet{Interval{acc->first_start_ns, acc->last_end_ns}}, &s);
}

}  // namespace

std::vector<TorchNpuStepRange> TorchNpuStepRanges(const Trace& trace, const LaunchTimes& launch) {
  std::vector<TorchNpuStepRange> ranges;
  if (trace.steps().empty()) return ranges;
  const std::vector<LaunchedTask> launched = LaunchedTasks(trace, launch);
  for (const Step& step : trace.steps()) {
    // Tasks whose anchor lies in the step's host range [start, end].
    auto first = std::lower_bound(launched.begin(), launched.end(), step.start_ns,
                                  [](const LaunchedTask& t, int64_t ts) { return t.anchor_ns < ts; });
    auto last = std::upper_bound(first, launched.end(), step.end_ns,
                                 [](int64_t ts, const LaunchedTask& t) { return ts < t.anchor_ns; });
    ranges.push_back(RangeOf(step, std::span<const LaunchedTask>(first, last)));
  }
  return ranges;
}

TorchNpuSteps MeasureTorchNpuSteps(const Trace& trace, std::span<const DeviceWorkEvent> work,
                                   const std::vector<TorchNpuStepRange>& ranges) {
  const RangeLocator locator(ranges);
  std::vector<StepAccumulator> steps(std::max<size_t>(ranges.size(), 1));
  for (size_t k = 0; k < ranges.size(); ++k) {
    StepBreakdown& s = steps[k].step.breakdown;
    s.step = ranges[k].number;
    s.host_start_ns = ranges[k].host_start_ns;
    s.host_end_ns = ranges[k].host_end_ns;
  }

  const OverlapPieces pieces = PiecesOf(trace, work);
  Distribute(pieces.compute, locator, &steps, &StepBreakdown::computing_ns, true);
  Distribute(pieces.communication, locator, &steps, &StepBreakdown::communication_ns, true);
  Distribute(pieces.communication_not_overlapped, locator, &steps, &StepBreakdown::communication_not_overlapped_ns,
             false);
  Distribute(pieces.free, locator, &steps, &StepBreakdown::free_ns, false);
  Distribute(pieces.bubbles, locator, &steps, &StepBreakdown::bubble_ns, false);

  TorchNpuSteps result;
  const EventTable& events = trace.events();
  for (const DeviceWorkEvent& w : work) {
    const size_t k = locator.RangeAt(events.ts_ns[w.event]);
    if (k == kOutside) {
      ++result.events_outside_steps;
    } else {
      steps[k].step.events.push_back(w.event);
    }
  }
  for (StepAccumulator& acc : steps) {
    Finish(pieces, &acc);
    result.steps.push_back(std::move(acc.step));
  }
  return result;
}

}  // namespace tuneprof

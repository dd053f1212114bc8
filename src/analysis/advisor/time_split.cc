#include "analysis/advisor/time_split.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "analysis/compute/op_flops.h"
#include "analysis/core/cpu_work.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"
#include "analysis/core/op_classes.h"

namespace tuneprof {
namespace {

double MeanStepTime(const RankBreakdown& breakdown) {
  double sum = 0;
  for (const StepBreakdown& step : breakdown.steps) sum += static_cast<double>(StepTimeNs(step, breakdown.definitions));
  return breakdown.steps.empty() ? 0 : sum / static_cast<double>(breakdown.steps.size());
}

struct WorkTimes {
  IntervalSet busy;             // every work interval, except CPU work done for the DataLoader
  IntervalSet all;              // every work interval, the DataLoader's included
  double compute_bound_ns = 0;  // self time of matmul/conv/attention work
  double computing_ns = 0;      // self time of compute work with a class (every CPU operator's)
  double unclassified_ns = 0;   // self time of device compute work without one
  double fused_comm_ns = 0;     // self time of fused compute + communication kernels (MC2)
  double dispatch_ns = 0;       // CPU-only: time in step ranges inside tiny outermost operators
  // CPU-only: the part of dispatch_ns while a collective runs on another thread and no compute does:
  // the step waits for the collective there, whatever the thread dispatches meanwhile.
  double dispatch_in_communication_ns = 0;
};

// The outermost operator an event runs under (itself when it is one).
uint32_t OutermostOp(const HostOpTree& tree, uint32_t event) {
  return tree.outermost_op[event] != kNoIndex ? tree.outermost_op[event] : event;
}

// On a CPU-only trace an operator that touches a few kilobytes does less work than its dispatch costs:
// the dispatcher, autograd recording and the Python binding take microseconds per call whatever the
// tensor size, so its time is framework overhead, not compute. Sized by its tensors when the trace kept
// shapes (robust to a preempted thread stretching one call), else by its duration.
bool IsTinyOp(const Trace& trace, uint32_t op, const TinyOpLimits& limits) {
  OpShapes shapes;
  if (ParseOpShapesOf(trace, op, &shapes)) {
    const OpCost cost = EstimateOpCost(trace.str(trace.events().name[op]), shapes);
    if (cost.bytes >= 0) return cost.bytes <= limits.max_bytes && cost.flops <= limits.max_flops;
  }
  return trace.events().dur_ns[op] < limits.max_ns;
}

// Whether the outermost operator `event` runs under is tiny, decided once per operator. Asked on CPU-only
// traces alone: a device trace's split has no tiny operators, and a map entry per kernel would cost more than
// the rest of the split.
bool UnderTinyOp(const Trace& trace, const HostOpTree& tree, uint32_t event, const TinyOpLimits& tiny,
                 std::unordered_map<uint32_t, bool>* decided) {
  const uint32_t outermost = OutermostOp(tree, event);
  auto [it, fresh] = decided->try_emplace(outermost, false);
  if (fresh) it->second = IsTinyOp(trace, outermost, tiny);
  return it->second;
}

// On a device trace all the work is busy time: both unions are the device work's, shared.
WorkTimes MeasureWork(const Trace& trace, const RankBreakdown& breakdown, const HostOpTree& tree,
                      const IntervalSet& dataloader, const IntervalSet& steps, const TinyOpLimits& tiny,
                      SharedDeviceWork* device_work) {
  const EventTable& events = trace.events();
  const bool cpu = breakdown.work_on == WorkSource::kCpu;
  WorkTimes times;
  std::vector<Interval> busy, all;                                    // CPU-only
  std::vector<Interval> communication, computing, tiny_spans, calls;  // CPU-only
  std::unordered_map<uint32_t, bool> tiny_outermost;                  // outermost op -> IsTinyOp, decided once
  OpLetters letters(trace);
  KernelLetters kernel_letters(trace, tree);
  const std::vector<DeviceWorkEvent> cpu_work = cpu ? ListCpuWork(trace) : std::vector<DeviceWorkEvent>{};
  for (const DeviceWorkEvent& work : cpu ? cpu_work : device_work->List(trace)) {
    const Interval span{events.ts_ns[work.event], events.end_ns(work.event)};
    if (cpu) all.push_back(span);
    if (cpu && IntersectionLength(dataloader, IntervalSet{span}) == span.length() && span.length() > 0) continue;
    if (cpu) busy.push_back(span);
    if (cpu && work.work == WorkClass::kCommunication) {
      communication.push_back(span);
      if (IsCollectiveCall(trace, work.event)) calls.push_back(span);
    }
    if (!Computes(work.work)) continue;
    if (cpu && UnderTinyOp(trace, tree, work.event, tiny, &tiny_outermost)) {
      if (tree.parent_op[work.event] == kNoIndex) {
        times.dispatch_ns += static_cast<double>(IntersectionLength(steps, IntervalSet{span}));
        tiny_spans.push_back(span);
      }
      continue;
    }
    if (cpu) computing.push_back(span);
    const double self =
        static_cast<double>(cpu ? tree.self_ns[work.event] : std::max<int64_t>(events.dur_ns[work.event], 0));
    if (cpu) {
      times.computing_ns += self;
      if (IsComputeBoundLetter(letters.Of(events.name[work.event]))) times.compute_bound_ns += self;
      continue;
    }
    // A fused compute + communication kernel (MC2), whose matmul and transfer run as one, is its own
    // part (the same rule classes it where only kernel_details lists it); a kernel neither its name nor
    // its launching operator classes is unclassified, never counted memory-bound by default.
    if (work.work == WorkClass::kFusedComm) {
      times.fused_comm_ns += self;
      continue;
    }
    const char letter = kernel_letters.Of(work.event);
    if (letter == op_letter::kOther) {
      times.unclassified_ns += self;
      continue;
    }
    times.computing_ns += self;
    if (IsComputeBoundLetter(letter)) times.compute_bound_ns += self;
  }
  times.busy = cpu ? UnionOf(std::move(busy)) : device_work->Busy(trace);
  times.all = cpu ? UnionOf(std::move(all)) : times.busy;
  if (!communication.empty() && !tiny_spans.empty()) {
    const IntervalSet computes = Subtract(UnionOf(std::move(computing)), UnionOf(std::move(calls)));
    const IntervalSet waiting =
        Subtract(Intersect(UnionOf(std::move(communication)), UnionOf(std::move(tiny_spans))), computes);
    times.dispatch_in_communication_ns = static_cast<double>(IntersectionLength(steps, waiting));
  }
  return times;
}

// A torch_npu rank without a timeline still lists its operators in kernel_details.csv: their durations
// class the computing as the timeline's kernels would (by op type, else name; fused compute +
// communication operators (MC2) in their own part, as there), communication and copies left out.
void ClassFromKernelDetails(const Trace& trace, WorkTimes* times) {
  OpLetters letters(trace);
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    const std::string_view core = trace.str(row.accelerator_core);
    if (row.dur_ns == kNoId || row.dur_ns <= 0 || core == "HCCL" || core == "COMMUNICATION") continue;
    const std::optional<WorkClass> work = ClassifyDeviceWork(EventKind::kKernel, trace.str(row.name));
    if (!work || !Computes(*work)) continue;
    const double dur = static_cast<double>(row.dur_ns);
    if (work == WorkClass::kFusedComm) {  // as on a timeline: their own part
      times->fused_comm_ns += dur;
      continue;
    }
    char letter = trace.str(row.type).empty() ? op_letter::kOther : letters.Of(row.type);
    if (letter == op_letter::kOther) letter = letters.Of(row.name);  // the timeline's kernel name
    if (letter == op_letter::kOther) {                               // unclassified, as on a timeline
      times->unclassified_ns += dur;
      continue;
    }
    times->computing_ns += dur;
    if (IsComputeBoundLetter(letter)) times->compute_bound_ns += dur;
  }
}

void SetPart(TimeSplit* split, TimePart part, double ns) {
  split->part_ns[static_cast<size_t>(part)] = std::max(ns, 0.0);
}

// Where the timeline classes no computing, the operator table's classes, if it has any.
void ClassFromTableInstead(const Trace& trace, WorkTimes* work) {
  WorkTimes table;
  ClassFromKernelDetails(trace, &table);
  if (table.computing_ns + table.unclassified_ns + table.fused_comm_ns <= 0) return;
  work->computing_ns = table.computing_ns;
  work->compute_bound_ns = table.compute_bound_ns;
  work->unclassified_ns = table.unclassified_ns;
  work->fused_comm_ns = table.fused_comm_ns;
}

// Computing per step into its compute-bound, memory-bound, unclassified and fused comm parts, by their
// shares.
void SplitComputing(double computing, TimeSplit* split) {
  const double memory_bound_share =
      1 - split->compute_bound_share - split->unclassified_share - split->fused_comm_share;
  SetPart(split, TimePart::kComputeBound, computing * split->compute_bound_share);
  SetPart(split, TimePart::kMemoryBound, computing * memory_bound_share);
  SetPart(split, TimePart::kUnclassified, computing * split->unclassified_share);
  SetPart(split, TimePart::kFusedComm, computing * split->fused_comm_share);
}

}  // namespace

IntervalSet StepRanges(const RankBreakdown& breakdown) {
  std::vector<Interval> ranges;
  for (const StepBreakdown& step : breakdown.steps) {
    if (step.host_start_ns == kNoId)
      return {Interval{std::numeric_limits<int64_t>::min() / 2, std::numeric_limits<int64_t>::max() / 2}};
    ranges.push_back(Interval{step.host_start_ns, step.host_end_ns});
  }
  return UnionOf(std::move(ranges));
}

TimeSplit SplitStepTime(const Trace& trace, const RankBreakdown& breakdown, const HostOpTree& tree,
                        const TinyOpLimits& tiny, SharedDeviceWork* device_work) {
  TimeSplit split;
  split.steps = breakdown.steps.size();
  split.cpu_only = breakdown.work_on == WorkSource::kCpu;
  if (split.steps == 0) return split;
  const double n = static_cast<double>(split.steps);
  const StepBreakdown& total = breakdown.total;

  const IntervalSet dataloader = Intersect(DataLoaderRanges(trace), StepRanges(breakdown));
  const IntervalSet steps = StepRanges(breakdown);
  SharedDeviceWork own_device_work;
  WorkTimes work = MeasureWork(trace, breakdown, tree, dataloader, steps, tiny,
                               device_work != nullptr ? device_work : &own_device_work);
  if (work.computing_ns <= 0 && breakdown.total.computing_ns > 0) ClassFromTableInstead(trace, &work);
  // Shares of all the compute self time, the unclassified and fused kernels' included.
  const double all_computing = work.computing_ns + work.unclassified_ns + work.fused_comm_ns;
  split.compute_bound_share = all_computing > 0 ? work.compute_bound_ns / all_computing : 0;
  split.unclassified_share = all_computing > 0 ? work.unclassified_ns / all_computing : 0;
  split.fused_comm_share = all_computing > 0 ? work.fused_comm_ns / all_computing : 0;
  split.dataloader_ns = static_cast<double>(TotalLength(dataloader)) / n;

  double computing = static_cast<double>(total.computing_ns) / n;
  double communication = static_cast<double>(total.communication_not_overlapped_ns) / n;
  const double memcpy = static_cast<double>(total.memcpy_ns) / n;
  const double bubble = static_cast<double>(total.bubble_ns) / n;
  // On a CPU-only trace the main thread is the device: all its DataLoader time is input-pipeline time,
  // including the operators run for it (which the breakdown counted as computing).
  double data = static_cast<double>(TotalLength(Subtract(dataloader, work.busy))) / n;
  if (split.cpu_only) {
    computing = std::max(0.0, computing - static_cast<double>(IntersectionLength(dataloader, work.all)) / n);
    data = split.dataloader_ns;
    split.dispatch_ns = std::min(work.dispatch_ns / n, computing);
    computing -= split.dispatch_ns;  // framework overhead: it joins the host part below
    // Dispatch while a collective runs on another thread and nothing computes is the step waiting for
    // the collective: communication, as on a device, not host overhead.
    const double waiting = std::min(work.dispatch_in_communication_ns / n, split.dispatch_ns);
    split.dispatch_ns -= waiting;
    communication += waiting;
  }
  split.compute_classes_known = computing <= 0 || all_computing > 0;
  // Computing no operator classes is neither compute- nor memory-bound: all of it is unclassified.
  if (!split.compute_classes_known) split.unclassified_share = 1;
  const double busy = computing + communication + memcpy + bubble;
  // torch_npu's step is its Stage + Bubble: input waits in Preparing, before the step's first device task,
  // are outside it (as torch_npu counts them), so only those inside it (in its Free) are the data part.
  const bool torch_npu = breakdown.definitions == StepDefinitions::kTorchNpu;
  split.step_ns = std::max(MeanStepTime(breakdown), torch_npu ? busy : busy + data);
  const double idle = split.step_ns - busy;

  data = std::min(data, idle);
  // Host wait counts every gap ended by a late launch, the DataLoader's included: take those out. Host
  // pauses (host_side.h) are the host busy elsewhere, not launching: they stay idle time.
  const double launch_wait = static_cast<double>(total.host.host_wait_ns - total.host.host_pause_ns) / n;
  const double host_wait = split.cpu_only ? idle - data : std::min(std::max(0.0, launch_wait - data), idle - data);
  SplitComputing(computing, &split);
  SetPart(&split, TimePart::kCommunication, communication);
  SetPart(&split, TimePart::kMemcpy, memcpy);
  SetPart(&split, TimePart::kPipelineBubble, bubble);
  SetPart(&split, TimePart::kData, data);
  SetPart(&split, TimePart::kHostWait, host_wait);
  SetPart(&split, TimePart::kIdle, idle - data - host_wait);
  return split;
}

}  // namespace tuneprof

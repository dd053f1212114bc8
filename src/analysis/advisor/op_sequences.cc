#include "analysis/advisor/op_sequences.h"

#include <algorithm>

#include "analysis/core/device_work.h"
#include "analysis/core/op_classes.h"
#include "base/pair_table.h"

namespace tuneprof {
namespace {

bool CorrelatedCall(const EventTable& events, uint32_t i) {
  return (events.kind[i] == EventKind::kRuntime || events.kind[i] == EventKind::kDriver) &&
         events.correlation[i] != kNoId;
}

// Launch calls (runtime or driver) by correlation id, the first call of an id kept; keyed (0, id).
PairTable LaunchesByCorrelation(const Trace& trace) {
  const EventTable& events = trace.events();
  size_t calls = 0;
  for (uint32_t i = 0; i < events.size(); ++i) calls += CorrelatedCall(events, i);
  PairTable launches(calls);
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (CorrelatedCall(events, i)) launches.At(0, static_cast<uint64_t>(events.correlation[i]), i);
  }
  return launches;
}

uint32_t OutermostOp(const HostOpTree& tree, uint32_t event) { return tree.outermost_op[event]; }

bool IsModelOp(const Trace& trace, uint32_t event) {
  std::string_view name = trace.str(trace.events().name[event]);
  return name.starts_with("aten::");
}

}  // namespace

std::vector<int64_t> DeviceTimeByHostOp(const Trace& trace, const HostOpTree& tree,
                                        std::span<const DeviceWorkEvent> device_work) {
  const EventTable& events = trace.events();
  std::vector<int64_t> device_time(events.size(), 0);
  const PairTable launches = LaunchesByCorrelation(trace);
  for (const DeviceWorkEvent& work : device_work) {
    // A sync a copy_ launched holds the stream while it waits: not the operator's device work.
    if (work.work == WorkClass::kOther || events.correlation[work.event] == kNoId) continue;
    const uint32_t* launch = launches.Find(0, static_cast<uint64_t>(events.correlation[work.event]));
    if (launch == nullptr) continue;
    const uint32_t op = OutermostOp(tree, *launch);
    if (op != kNoIndex) device_time[op] += std::max<int64_t>(events.dur_ns[work.event], 0);
  }
  return device_time;
}

std::vector<OpSequence> BuildOpSequences(const Trace& trace, const HostOpTree& tree, bool cpu_only) {
  const std::vector<DeviceWorkEvent> device_work = cpu_only ? std::vector<DeviceWorkEvent>{} : ListDeviceWork(trace);
  return BuildOpSequences(trace, tree, cpu_only,
                          cpu_only ? std::vector<int64_t>{} : DeviceTimeByHostOp(trace, tree, device_work),
                          device_work);
}

std::vector<OpSequence> BuildOpSequences(const Trace& trace, const HostOpTree& tree, bool cpu_only,
                                         const std::vector<int64_t>& device_time,
                                         std::span<const DeviceWorkEvent> device_work) {
  const EventTable& events = trace.events();
  OpLetters letters(trace);
  std::vector<OpSequence> sequences;
  for (uint32_t track = 0; track < tree.by_track.size(); ++track) {
    OpSequence sequence{SequenceLevel::kHostOps, track, {}, {}, {}};
    for (uint32_t event : tree.by_track[track]) {
      if (events.kind[event] != EventKind::kHostOp || tree.parent_op[event] != kNoIndex) continue;
      if (!IsModelOp(trace, event)) continue;
      const char letter = letters.Of(events.name[event]);
      if (letter == op_letter::kSkip) continue;
      sequence.letters.push_back(letter);
      sequence.events.push_back(event);
      sequence.time_ns.push_back(cpu_only ? events.dur_ns[event] : device_time[event]);
    }
    if (!sequence.letters.empty()) sequences.push_back(std::move(sequence));
  }
  if (cpu_only) return sequences;
  std::vector<std::vector<uint32_t>> by_stream(trace.tracks().size());
  for (const DeviceWorkEvent& work : device_work) by_stream[events.track[work.event]].push_back(work.event);
  for (uint32_t track = 0; track < by_stream.size(); ++track) {
    std::vector<uint32_t>& kernels = by_stream[track];
    if (kernels.empty()) continue;
    std::sort(kernels.begin(), kernels.end(),
              [&](uint32_t a, uint32_t b) { return events.ts_ns[a] < events.ts_ns[b]; });
    OpSequence sequence{SequenceLevel::kKernels, track, {}, {}, {}};
    for (uint32_t event : kernels) {
      sequence.letters.push_back(letters.Of(events.name[event]));
      sequence.events.push_back(event);
      sequence.time_ns.push_back(std::max<int64_t>(events.dur_ns[event], 0));
    }
    sequences.push_back(std::move(sequence));
  }
  return sequences;
}

const std::vector<int64_t>& SharedOpSequences::DeviceTime(const Trace& trace, const HostOpTree& tree, bool cpu_only,
                                                          SharedDeviceWork* device_work) {
  std::call_once(device_time_once_, [&] {
    if (!cpu_only) device_time_ = DeviceTimeByHostOp(trace, tree, device_work->List(trace));
  });
  return device_time_;
}

const std::vector<OpSequence>& SharedOpSequences::Sequences(const Trace& trace, const HostOpTree& tree, bool cpu_only,
                                                            SharedDeviceWork* device_work) {
  std::call_once(sequences_once_, [&] {
    const std::vector<int64_t>& device_time = DeviceTime(trace, tree, cpu_only, device_work);
    sequences_ = cpu_only ? BuildOpSequences(trace, tree, cpu_only, device_time, {})
                          : BuildOpSequences(trace, tree, cpu_only, device_time, device_work->List(trace));
  });
  return sequences_;
}

}  // namespace tuneprof

#pragma once
// Operator sequences in program order, the input of fusion-pattern matching: on each host thread the
// outermost aten operators (what the model's Python code calls), and on each device stream its kernels.
// Each item carries its class letter (op_classes.h) and its time: for kernels their duration; for host
// operators the device time of the kernels they launched, or on a CPU-only trace their own duration.
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "analysis/core/device_work.h"
#include "analysis/core/host_op_tree.h"
#include "model/trace.h"

namespace tuneprof {

enum class SequenceLevel : uint8_t { kHostOps, kKernels };

struct OpSequence {
  SequenceLevel level = SequenceLevel::kHostOps;
  uint32_t track = 0;
  std::string letters;           // one per item
  std::vector<uint32_t> events;  // parallel to letters
  std::vector<int64_t> time_ns;  // parallel to letters
};

// Device time launched by each host event, summed up to its outermost enclosing operator (so that an
// aten::linear owns its addmm's kernels); syncs and waits are not work and count for none. Indexed by
// event; 0 where nothing was launched.
// `device_work`: the trace's ListDeviceWork.
std::vector<int64_t> DeviceTimeByHostOp(const Trace& trace, const HostOpTree& tree,
                                        std::span<const DeviceWorkEvent> device_work);

// `cpu_only`: time host operators by their own duration (the host is the device).
std::vector<OpSequence> BuildOpSequences(const Trace& trace, const HostOpTree& tree, bool cpu_only);
// With DeviceTimeByHostOp's result and the trace's ListDeviceWork already at hand (both unread when
// `cpu_only`).
std::vector<OpSequence> BuildOpSequences(const Trace& trace, const HostOpTree& tree, bool cpu_only,
                                         const std::vector<int64_t>& device_time,
                                         std::span<const DeviceWorkEvent> device_work);

// One rank's device time by host operator and operator sequences, built by the first rule that asks
// (rules run on two threads; a second asker waits) and then shared: several rules read them, and each
// building its own cost a pass over every event. Every call must pass the same rank's arguments, its
// device work (read only when not `cpu_only`) included.
class SharedOpSequences {
 public:
  // Empty when `cpu_only`.
  const std::vector<int64_t>& DeviceTime(const Trace& trace, const HostOpTree& tree, bool cpu_only,
                                         SharedDeviceWork* device_work);
  const std::vector<OpSequence>& Sequences(const Trace& trace, const HostOpTree& tree, bool cpu_only,
                                           SharedDeviceWork* device_work);

 private:
  std::once_flag device_time_once_, sequences_once_;
  std::vector<int64_t> device_time_;
  std::vector<OpSequence> sequences_;
};

}  // namespace tuneprof

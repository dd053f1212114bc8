#pragma once
// What each piece of device work is: compute, communication, fused compute + communication, memory traffic
// or other (syncs, waits). Communication kernels are named by the table in comm_kernel_rules.h, copies by
// the one in device_work.cc; every analysis that splits device time asks here.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "analysis/core/intervals.h"
#include "model/trace.h"

namespace tuneprof {

enum class WorkClass : uint8_t {
  kCompute,        // kernels and device tasks that compute
  kCommunication,  // collectives and p2p: NCCL/RCCL, gloo, HCCL, hcom_* tasks
  kMemory,         // memcpy (H2D, D2H, D2D, P2P) and memset
  kOther,          // syncs and waits: the stream is occupied but does no work
  kFusedComm,      // one kernel that computes and communicates (Ascend MC2, all-reduce fused with a norm):
                   // counted once, as compute, in the time split, and listed among the collectives too
  kCount
};

std::string_view WorkClassName(WorkClass work);

// Whether work of this class occupies the compute units (compute and fused comm) or communicates
// (communication and fused comm): a fused kernel is in both views, and counted once in the split.
constexpr bool Computes(WorkClass work) { return work == WorkClass::kCompute || work == WorkClass::kFusedComm; }
constexpr bool Communicates(WorkClass work) {
  return work == WorkClass::kCommunication || work == WorkClass::kFusedComm;
}

// Whether a device task named so waits (an HCCL notify wait, an event wait) rather than works. On a
// collective's own track the wait stays that collective's time (ClassifyDeviceWork keeps it
// communication); kernel tables and rankings leave every wait out (IsDeviceWait).
bool IsDeviceWaitName(std::string_view name);

// Whether a piece of device work of this kind, class and name is a wait or sync and not work: a sync
// record (kOther) or a wait task by name, wherever it was drawn.
bool IsDeviceWait(EventKind kind, WorkClass work, std::string_view name);

// nullopt for events that are not device work: host events, and gpu_user_annotation ranges (a host
// range drawn on a stream, which would otherwise double-count the kernels under it).
std::optional<WorkClass> ClassifyDeviceWork(EventKind kind, std::string_view name);

struct DeviceWorkEvent {
  uint32_t event = 0;
  WorkClass work = WorkClass::kCompute;
};

// Every device-work event of `trace`, in event order; names are classified once each.
std::vector<DeviceWorkEvent> ListDeviceWork(const Trace& trace);

// One rank's device work and the union of its times, built by the first analysis that asks (they may ask
// from two threads; a second asker waits) and then shared: several analyses of a rank read them, and
// each listing its own cost a pass over every event. Every call must pass the same trace.
class SharedDeviceWork {
 public:
  const std::vector<DeviceWorkEvent>& List(const Trace& trace);
  // When the device was busy: ListDeviceWork's events, each from its start to its end, united.
  const IntervalSet& Busy(const Trace& trace);

 private:
  std::once_flag list_once_, busy_once_;
  std::vector<DeviceWorkEvent> list_;
  IntervalSet busy_;
};

}  // namespace tuneprof

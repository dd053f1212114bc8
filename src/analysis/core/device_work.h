#pragma once
// What each piece of device work is: compute, communication, memory traffic or other (syncs, waits).
// The rules live in one table in device_work.cc; every analysis that splits device time asks here.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

enum class WorkClass : uint8_t {
  kCompute,        // kernels and device tasks that compute
  kCommunication,  // collectives and p2p: NCCL/RCCL, gloo, HCCL, hcom_* tasks
  kMemory,         // memcpy (H2D, D2H, D2D, P2P) and memset
  kOther,          // syncs and waits: the stream is occupied but does no work
  kCount
};

std::string_view WorkClassName(WorkClass work);

// nullopt for events that are not device work: host events, and gpu_user_annotation ranges (a host
// range drawn on a stream, which would otherwise double-count the kernels under it).
std::optional<WorkClass> ClassifyDeviceWork(EventKind kind, std::string_view name);

struct DeviceWorkEvent {
  uint32_t event = 0;
  WorkClass work = WorkClass::kCompute;
};

// Every device-work event of `trace`, in event order; names are classified once each.
std::vector<DeviceWorkEvent> ListDeviceWork(const Trace& trace);

}  // namespace tuneprof

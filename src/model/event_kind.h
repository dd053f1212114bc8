#pragma once
// What an event is, independent of which profiler wrote it. Importers map their producer's categories
// onto these (see importers/*/conventions); analyses only ever look at these.
#include <cstdint>
#include <string_view>

namespace tuneprof {

enum class EventKind : uint8_t {
  kOther,   // an interval whose category no convention knows
  kKernel,  // device kernel (GPU) or device task (Ascend Hardware)
  kMemcpy,  // device copy: H2D, D2H, D2D, P2P, SDMA
  kMemset,
  kSync,            // device-side synchronisation: cuda_sync, event waits
  kCollective,      // device-side communication op that is not a kernel (Ascend HCCL tracks)
  kGpuAnnotation,   // gpu_user_annotation: a host range projected on a stream
  kHostOp,          // cpu_op / aten operator
  kUserAnnotation,  // record_function ranges, ProfilerStep#N
  kPythonFunction,
  kRuntime,         // runtime API call (cudaLaunchKernel, AscendCL@...)
  kDriver,          // driver API call (cuLaunchKernel)
  kOverlapSummary,  // a profiler's own derived track (Ascend "Overlap Analysis"); never a source of truth
  kInstant,         // instant marker without a duration
  kMemoryEvent,     // allocator event ([memory]); details in Trace::memory_events()
  kCount
};

std::string_view EventKindName(EventKind kind);

// Work that runs on the accelerator (as opposed to host threads).
inline bool IsDeviceKind(EventKind kind) {
  switch (kind) {
    case EventKind::kKernel:
    case EventKind::kMemcpy:
    case EventKind::kMemset:
    case EventKind::kSync:
    case EventKind::kCollective:
    case EventKind::kGpuAnnotation:
      return true;
    default:
      return false;
  }
}

enum class DeviceType : uint8_t { kCpu, kGpu, kNpu };
std::string_view DeviceTypeName(DeviceType type);

enum class CopyDirection : uint8_t {
  kUnknown,
  kHostToDevice,
  kDeviceToHost,
  kDeviceToDevice,
  kPeerToPeer,
  kHostToHost
};

// Where copied bytes live; "pageable" host memory is what makes async copies synchronous.
enum class MemoryKind : uint8_t { kUnknown, kPageable, kPinned, kDevice, kArray, kManaged };

enum class TraceFormat : uint8_t { kUnknown, kKineto, kPytorchLegacy, kTorchNpuTraceView, kChromeTrace, kNsysSqlite };
std::string_view TraceFormatName(TraceFormat format);

// What a trace's producer implies that its events alone do not say. Analyses ask these rather than
// compare formats, so that each format states its facts once, here.
struct FormatFacts {
  // The Ascend profiler (torch_npu, msprof): its devices are NPUs (also where only the host was
  // captured, so that no device shows), its steps are those step_trace_time defines, and its HCCL tasks
  // are drawn on two tracks.
  bool ascend_profiler = false;
  // Steps may be marked by repeating NVTX ranges rather than ProfilerStep#N (Nsight Systems).
  bool nvtx_steps = false;
};
FormatFacts FactsOf(TraceFormat format);

}  // namespace tuneprof

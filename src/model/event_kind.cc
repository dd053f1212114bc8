#include "model/event_kind.h"

namespace tuneprof {

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kOther:
      return "other";
    case EventKind::kKernel:
      return "kernel";
    case EventKind::kMemcpy:
      return "memcpy";
    case EventKind::kMemset:
      return "memset";
    case EventKind::kSync:
      return "sync";
    case EventKind::kCollective:
      return "collective";
    case EventKind::kGpuAnnotation:
      return "gpu_annotation";
    case EventKind::kHostOp:
      return "host_op";
    case EventKind::kUserAnnotation:
      return "user_annotation";
    case EventKind::kPythonFunction:
      return "python_function";
    case EventKind::kRuntime:
      return "runtime";
    case EventKind::kDriver:
      return "driver";
    case EventKind::kOverlapSummary:
      return "overlap_summary";
    case EventKind::kInstant:
      return "instant";
    case EventKind::kMemoryEvent:
      return "memory_event";
    case EventKind::kCount:
      break;
  }
  return "unknown";
}

std::string_view DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kGpu:
      return "gpu";
    case DeviceType::kNpu:
      return "npu";
  }
  return "unknown";
}

std::string_view TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kUnknown:
      return "unknown";
    case TraceFormat::kKineto:
      return "kineto";
    case TraceFormat::kPytorchLegacy:
      return "pytorch_legacy";
    case TraceFormat::kTorchNpuTraceView:
      return "torch_npu_trace_view";
    case TraceFormat::kChromeTrace:
      return "chrome_trace";
    case TraceFormat::kNsysSqlite:
      return "nsys_sqlite";
  }
  return "unknown";
}

FormatFacts FactsOf(TraceFormat format) {
  FormatFacts facts;
  facts.ascend_profiler = format == TraceFormat::kTorchNpuTraceView;
  facts.nvtx_steps = format == TraceFormat::kNsysSqlite;
  return facts;
}

}  // namespace tuneprof

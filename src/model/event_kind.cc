#include "model/event_kind.h"

#include <array>

#include "base/enum_names.h"

namespace tuneprof {

std::string_view EventKindName(EventKind kind) {
  static constexpr std::array<std::string_view, 15> kNames = {
      "other",      "kernel",         "memcpy",          "memset",          "sync",
      "collective", "gpu_annotation", "host_op",         "user_annotation", "python_function",
      "runtime",    "driver",         "overlap_summary", "instant",         "memory_event"};
  static_assert(kNames.size() == static_cast<size_t>(EventKind::kCount));
  return EnumName(kind, kNames, "unknown");
}

std::string_view DeviceTypeName(DeviceType type) {
  static constexpr std::array<std::string_view, 3> kNames = {"cpu", "gpu", "npu"};
  return EnumName(type, kNames, "unknown");
}

std::string_view TraceFormatName(TraceFormat format) {
  static constexpr std::array<std::string_view, 6> kNames = {
      "unknown", "kineto", "pytorch_legacy", "torch_npu_trace_view", "chrome_trace", "nsys_sqlite"};
  return EnumName(format, kNames, "unknown");
}

FormatFacts FactsOf(TraceFormat format) {
  FormatFacts facts;
  facts.ascend_profiler = format == TraceFormat::kTorchNpuTraceView;
  facts.nvtx_steps = format == TraceFormat::kNsysSqlite;
  return facts;
}

}  // namespace tuneprof

#pragma once
// What Kineto, the legacy autograd profiler and torch_npu mean by their categories, names and process
// names, in one place. The parser asks these; nothing else hard-codes them.
#include <cstdint>
#include <string_view>

#include "model/event_kind.h"

namespace tuneprof::chrome_json {

// Kind of an interval event from its `cat`; kOther when the category alone does not say.
EventKind KindFromCategory(std::string_view category);

// torch_npu writes Ascend device and CANN events without `cat`; their process name says what they are.
// Returns kOther when the process is not one of torch_npu's.
EventKind KindFromNpuProcess(std::string_view process_name, std::string_view task_type);

// True for process names only torch_npu writes ("Ascend Hardware", "CANN", "HCCL", ...).
bool IsTorchNpuProcess(std::string_view process_name);

// Parses Kineto memcpy/memset names: "Memcpy HtoD (Pageable -> Device)", "Memset (Device)".
struct CopyName {
  CopyDirection direction = CopyDirection::kUnknown;
  MemoryKind src = MemoryKind::kUnknown;
  MemoryKind dst = MemoryKind::kUnknown;
};
CopyName ParseCopyName(std::string_view name);

// Flow categories whose id is the CUPTI correlation id of a launch (Kineto "ac2g", old "async_cpu_to_gpu").
bool IsCorrelationFlow(std::string_view category);

// Bytes per element of a collective's dtype as Kineto names it ("Float", "BFloat16", "Long"); 0 if unknown.
int64_t DtypeBytes(std::string_view dtype);

// The legacy (torch < 2 without Kineto) export puts every event in pid "CPU functions".
constexpr std::string_view kLegacyCpuPid = "CPU functions";

}  // namespace tuneprof::chrome_json

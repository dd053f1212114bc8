#include "importers/chrome_json/conventions.h"

#include <array>
#include <utility>

#include "base/enum_names.h"

namespace tuneprof::chrome_json {
namespace {

struct CategoryRule {
  std::string_view category;
  EventKind kind;
};

// Kineto ActivityType names (current and old spellings), and torch_npu's host categories.
constexpr std::array kCategoryRules = {
    CategoryRule{"kernel", EventKind::kKernel},
    CategoryRule{"Kernel", EventKind::kKernel},
    CategoryRule{"gpu_memcpy", EventKind::kMemcpy},
    CategoryRule{"Memcpy", EventKind::kMemcpy},
    CategoryRule{"gpu_memset", EventKind::kMemset},
    CategoryRule{"Memset", EventKind::kMemset},
    CategoryRule{"cuda_sync", EventKind::kSync},
    CategoryRule{"gpu_user_annotation", EventKind::kGpuAnnotation},
    CategoryRule{"mtia_ccp_events", EventKind::kKernel},
    CategoryRule{"cpu_op", EventKind::kHostOp},
    CategoryRule{"Operator", EventKind::kHostOp},
    CategoryRule{"user_annotation", EventKind::kUserAnnotation},
    CategoryRule{"python_function", EventKind::kPythonFunction},
    CategoryRule{"cuda_runtime", EventKind::kRuntime},
    CategoryRule{"Runtime", EventKind::kRuntime},
    CategoryRule{"privateuse1_runtime", EventKind::kRuntime},
    CategoryRule{"mtia_runtime", EventKind::kRuntime},
    CategoryRule{"xpu_runtime", EventKind::kRuntime},
    CategoryRule{"cuda_driver", EventKind::kDriver},
    CategoryRule{"privateuse1_driver", EventKind::kDriver},
    CategoryRule{"enqueue", EventKind::kHostOp},   // torch_npu task-queue producer side
    CategoryRule{"dequeue", EventKind::kRuntime},  // torch_npu task-queue consumer: calls into CANN
};

bool Contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

MemoryKind MemoryKindFromWord(std::string_view word) {
  static constexpr std::array<std::string_view, 6> kWords = {"Unknown", "Pageable", "Pinned",
                                                             "Device",  "Array",    "Managed"};
  return EnumFromName(word, kWords, MemoryKind::kUnknown);
}

}  // namespace

EventKind KindFromCategory(std::string_view category) {
  for (const CategoryRule& rule : kCategoryRules) {
    if (rule.category == category) return rule.kind;
  }
  return EventKind::kOther;
}

bool IsTorchNpuProcess(std::string_view name) {
  return name == "Ascend Hardware" || name == "CANN" || name == "HCCL" || name == "Overlap Analysis" ||
         name == "AI Core Freq" || name == "NPU MEM" || name == "Stars Soc Info" || name == "Acc PMU";
}

EventKind KindFromNpuProcess(std::string_view process_name, std::string_view task_type) {
  if (process_name == "Ascend Hardware") {
    // Copies, synchronisation and bookkeeping are named; every other task type computes ("Other" is
    // what torch_npu writes for aclnn kernels, and msprof counts those as Computing).
    if (Contains(task_type, "SDMA") || Contains(task_type, "DMA_SQE") || task_type == "MEMCPY_ASYNC") {
      return EventKind::kMemcpy;
    }
    if (Contains(task_type, "Notify") || Contains(task_type, "EVENT") || Contains(task_type, "Write Value")) {
      return EventKind::kSync;
    }
    if (Contains(task_type, "PLACE_HOLDER")) return EventKind::kOther;
    return EventKind::kKernel;
  }
  if (process_name == "HCCL") return EventKind::kCollective;
  if (process_name == "CANN") return EventKind::kRuntime;
  if (process_name == "Overlap Analysis") return EventKind::kOverlapSummary;
  return EventKind::kOther;
}

bool IsCorrelationFlow(std::string_view category) { return category == "ac2g" || category == "async_cpu_to_gpu"; }

CopyName ParseCopyName(std::string_view name) {
  CopyName out;
  constexpr std::pair<std::string_view, CopyDirection> kDirections[] = {{"HtoD", CopyDirection::kHostToDevice},
                                                                        {"DtoH", CopyDirection::kDeviceToHost},
                                                                        {"DtoD", CopyDirection::kDeviceToDevice},
                                                                        {"PtoP", CopyDirection::kPeerToPeer},
                                                                        {"HtoH", CopyDirection::kHostToHost}};
  for (auto [word, direction] : kDirections) {
    if (Contains(name, word)) out.direction = direction;
  }
  // "(Pageable -> Device)"; memsets carry a single "(Device)".
  size_t open = name.find('(');
  size_t close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return out;
  std::string_view inside = name.substr(open + 1, close - open - 1);
  size_t arrow = inside.find(" -> ");
  if (arrow == std::string_view::npos) {
    out.dst = MemoryKindFromWord(inside);
  } else {
    out.src = MemoryKindFromWord(inside.substr(0, arrow));
    out.dst = MemoryKindFromWord(inside.substr(arrow + 4));
  }
  return out;
}

int64_t DtypeBytes(std::string_view dtype) {
  constexpr std::pair<std::string_view, int64_t> kSizes[] = {
      {"Float", 4},       {"float", 4}, {"Double", 8},       {"double", 8},         {"Half", 2},
      {"BFloat16", 2},    {"Long", 8},  {"Int", 4},          {"Short", 2},          {"Char", 1},
      {"Byte", 1},        {"Bool", 1},  {"ComplexFloat", 8}, {"ComplexDouble", 16}, {"Float8_e4m3fn", 1},
      {"Float8_e5m2", 1}, {"INT32", 4}, {"INT8", 1},         {"FP32", 4},           {"FP16", 2},
      {"BFP16", 2},       {"INT64", 8}};
  for (auto [name, bytes] : kSizes) {
    if (name == dtype) return bytes;
  }
  return 0;
}

}  // namespace tuneprof::chrome_json

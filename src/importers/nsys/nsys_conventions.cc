#include "importers/nsys/nsys_conventions.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace tuneprof::nsys {
namespace {

constexpr int64_t kNoKind = -1;

struct CopyKind {
  std::string_view word;
  CopyDirection direction;
};

// Index = ENUM_CUDA_MEMCPY_OPER id. Arrays are device memory; unified-memory copies move between
// host and device like their plain counterparts.
constexpr std::array kCopyKinds = {
    CopyKind{"Unknown", CopyDirection::kUnknown},     CopyKind{"HtoD", CopyDirection::kHostToDevice},
    CopyKind{"DtoH", CopyDirection::kDeviceToHost},   CopyKind{"HtoA", CopyDirection::kHostToDevice},
    CopyKind{"AtoH", CopyDirection::kDeviceToHost},   CopyKind{"AtoA", CopyDirection::kDeviceToDevice},
    CopyKind{"AtoD", CopyDirection::kDeviceToDevice}, CopyKind{"DtoA", CopyDirection::kDeviceToDevice},
    CopyKind{"DtoD", CopyDirection::kDeviceToDevice}, CopyKind{"HtoH", CopyDirection::kHostToHost},
    CopyKind{"PtoP", CopyDirection::kPeerToPeer},     CopyKind{"HtoD", CopyDirection::kHostToDevice},
    CopyKind{"DtoH", CopyDirection::kDeviceToHost},   CopyKind{"DtoD", CopyDirection::kDeviceToDevice},
};

struct MemKind {
  std::string_view word;
  MemoryKind kind;
};

// Index = ENUM_CUDA_MEM_KIND id.
constexpr std::array kMemKinds = {
    MemKind{"Pageable", MemoryKind::kPageable},      MemKind{"Pinned", MemoryKind::kPinned},
    MemKind{"Device", MemoryKind::kDevice},          MemKind{"Array", MemoryKind::kArray},
    MemKind{"Managed", MemoryKind::kManaged},        MemKind{"Device Static", MemoryKind::kDevice},
    MemKind{"Managed Static", MemoryKind::kManaged}, MemKind{"Unknown", MemoryKind::kUnknown},
};

bool InRange(int64_t value, size_t size) { return value >= 0 && static_cast<uint64_t>(value) < size; }

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

bool IsKnownSchemaVersion(std::string_view version) {
  return version.starts_with("3.24.") || version.starts_with("3.25.");
}

std::string_view StripVersionSuffix(std::string_view name) {
  const size_t at = name.rfind("_v");
  if (at == std::string_view::npos || at == 0 || !AllDigits(name.substr(at + 2))) return name;
  return name.substr(0, at);
}

CopyDirection DirectionOfCopyKind(int64_t copy_kind) {
  return InRange(copy_kind, kCopyKinds.size()) ? kCopyKinds[copy_kind].direction : CopyDirection::kUnknown;
}

std::string_view CopyKindWord(int64_t copy_kind) {
  return InRange(copy_kind, kCopyKinds.size()) ? kCopyKinds[copy_kind].word : "Unknown";
}

MemoryKind MemoryKindOf(int64_t mem_kind) {
  return InRange(mem_kind, kMemKinds.size()) ? kMemKinds[mem_kind].kind : MemoryKind::kUnknown;
}

std::string_view MemoryKindWord(int64_t mem_kind) {
  return InRange(mem_kind, kMemKinds.size()) ? kMemKinds[mem_kind].word : "Unknown";
}

std::string MemcpyName(int64_t copy_kind, int64_t src_kind, int64_t dst_kind) {
  std::string name = "Memcpy " + std::string(CopyKindWord(copy_kind));
  if (src_kind != kNoKind && dst_kind != kNoKind) {
    name += " (" + std::string(MemoryKindWord(src_kind)) + " -> " + std::string(MemoryKindWord(dst_kind)) + ")";
  }
  return name;
}

std::string MemsetName(int64_t mem_kind) {
  return mem_kind == kNoKind ? std::string("Memset") : "Memset (" + std::string(MemoryKindWord(mem_kind)) + ")";
}

std::string_view SyncTypeName(int64_t sync_type) {
  switch (sync_type) {
    case 1:
      return "Event Sync";
    case 2:
      return "Stream Wait Event";
    case 3:
      return "Stream Sync";
    case 4:
      return "Context Sync";
    default:
      return "Unknown Sync";
  }
}

std::optional<std::string_view> PytorchOpName(std::string_view nvtx_text) {
  constexpr std::array<std::string_view, 4> kFields = {", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "};
  size_t first = std::string_view::npos;
  for (std::string_view field : kFields) first = std::min(first, nvtx_text.find(field));
  if (first == std::string_view::npos || first == 0) return std::nullopt;
  return nvtx_text.substr(0, first);
}

int64_t RankInNvtxText(std::string_view nvtx_text) {
  std::string_view text = nvtx_text;
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  constexpr std::string_view kRank = "rank";
  if (text.size() <= kRank.size()) return -1;
  for (size_t i = 0; i < kRank.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != kRank[i]) return -1;
  }
  text.remove_prefix(kRank.size());
  while (!text.empty() && (text.front() == ' ' || text.front() == '=' || text.front() == ':' || text.front() == '_' ||
                           text.front() == '#')) {
    text.remove_prefix(1);
  }
  constexpr size_t kMaxDigits = 9;
  if (text.size() > kMaxDigits || !AllDigits(text)) return -1;
  int64_t rank = 0;
  for (char c : text) rank = rank * 10 + (c - '0');
  return rank;
}

bool IsDriverCall(int64_t event_class, std::string_view name) {
  if (event_class >= 0) return event_class == 1;
  return name.starts_with("cu") && !name.starts_with("cuda");
}

bool IsReadGpuMetric(std::string_view metric_name) {
  for (std::string_view prefix :
       {"SMs Active", "SM Active", "Tensor Active", "DRAM Read Bandwidth", "DRAM Write Bandwidth"}) {
    if (metric_name.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace tuneprof::nsys

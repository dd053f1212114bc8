#include "importers/nsys/nsys_conventions.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <string>

#include <simdjson.h>

namespace tuneprof::nsys {
namespace {

constexpr int64_t kNoKind = -1;

// An id of one of the export's ENUM_* tables: its word and what it means to tuneprof.
template <class Kind>
struct KindEntry {
  std::string_view word;
  Kind kind;
};

using CopyKind = KindEntry<CopyDirection>;
using MemKind = KindEntry<MemoryKind>;

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

// Index = ENUM_CUDA_MEM_KIND id.
constexpr std::array kMemKinds = {
    MemKind{"Pageable", MemoryKind::kPageable},      MemKind{"Pinned", MemoryKind::kPinned},
    MemKind{"Device", MemoryKind::kDevice},          MemKind{"Array", MemoryKind::kArray},
    MemKind{"Managed", MemoryKind::kManaged},        MemKind{"Device Static", MemoryKind::kDevice},
    MemKind{"Managed Static", MemoryKind::kManaged}, MemKind{"Unknown", MemoryKind::kUnknown},
};

// The entry of `id` in `table`; ids the table does not list are "Unknown".
template <class Kind, size_t N>
KindEntry<Kind> EntryOf(const std::array<KindEntry<Kind>, N>& table, int64_t id) {
  const bool listed = id >= 0 && static_cast<uint64_t>(id) < N;
  return listed ? table[static_cast<size_t>(id)] : KindEntry<Kind>{"Unknown", Kind::kUnknown};
}

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

CopyDirection DirectionOfCopyKind(int64_t copy_kind) { return EntryOf(kCopyKinds, copy_kind).kind; }

std::string_view CopyKindWord(int64_t copy_kind) { return EntryOf(kCopyKinds, copy_kind).word; }

MemoryKind MemoryKindOf(int64_t mem_kind) { return EntryOf(kMemKinds, mem_kind).kind; }

std::string_view MemoryKindWord(int64_t mem_kind) { return EntryOf(kMemKinds, mem_kind).word; }

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

namespace {

constexpr size_t kBlobHeaderBytes = 32;

uint64_t LittleEndian64(std::string_view bytes, size_t at) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}

// "4,194,304", "4194304", " 12 " -> the integer; -1 for anything else (inner blanks, signs, fractions,
// more than int64 holds). Digit separators may only stand between digits.
int64_t DigitsOf(std::string_view text) {
  const size_t first = text.find_first_not_of(' ');
  if (first == std::string_view::npos) return -1;
  text = text.substr(first, text.find_last_not_of(' ') - first + 1);
  int64_t value = 0;
  char previous = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      if (value > (std::numeric_limits<int64_t>::max() - 9) / 10) return -1;
      value = value * 10 + (c - '0');
    } else if ((c != ',' && c != '_' && c != '\'') || !(previous >= '0' && previous <= '9')) {
      return -1;
    }
    previous = c;
  }
  return previous >= '0' && previous <= '9' ? value : -1;
}

bool IsSizeField(std::string_view name) { return name == "Message size [bytes]" || name == "Bytes"; }

void SetField(std::string_view name, std::string_view digits, NcclPayload* out) {
  if (IsSizeField(name)) {
    out->bytes = DigitsOf(digits);
  } else if (name == "No. of ranks") {
    out->ranks = DigitsOf(digits);
  } else if (name == "Rank") {
    out->rank = DigitsOf(digits);
  } else if (name == "Peer rank") {
    out->peer = DigitsOf(digits);
  } else if (name == "NCCL communicator ID") {
    // Ids are uint64 hashes, half of them past int64: kept as their digits, separators dropped.
    std::string id;
    for (char c : digits) {
      if (c >= '0' && c <= '9') id.push_back(c);
    }
    out->comm = id;
  }
}

// Bytes of the NVTX payload entry types NCCL's schemas use (nvToolsExtPayload.h).
size_t PayloadTypeBytes(int64_t type) {
  switch (type) {
    case 5:  // int
    case 6:  // unsigned int
      return 4;
    case 7:   // long
    case 8:   // unsigned long
    case 9:   // long long
    case 10:  // unsigned long long
    case 17:  // int64_t
    case 18:  // uint64_t
    case 22:  // size_t
      return 8;
    default:
      return 0;
  }
}

}  // namespace

std::optional<NcclPayload> NcclPayloadFromJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(simdjson::padded_string(json)).get(object) != simdjson::SUCCESS) return std::nullopt;
  NcclPayload out;
  for (const simdjson::dom::key_value_pair field : object) {
    const simdjson::dom::element value = field.value;
    std::string text;
    uint64_t number = 0;
    std::string_view string;
    if (value.get_uint64().get(number) == simdjson::SUCCESS) {
      text = std::to_string(number);
    } else if (value.get_string().get(string) == simdjson::SUCCESS) {
      text = std::string(string);
    } else {
      continue;  // negative, fractional, nested: no field NCCL writes
    }
    SetField(field.key, text, &out);
  }
  return out;
}

int64_t PayloadSchemaOfBlob(std::string_view blob) {
  if (blob.size() < kBlobHeaderBytes) return -1;
  return static_cast<int64_t>(LittleEndian64(blob, 8));
}

std::optional<NcclPayload> NcclPayloadFromBinary(std::string_view blob, const std::vector<PayloadField>& fields) {
  if (blob.size() < kBlobHeaderBytes) return std::nullopt;
  const uint64_t size = LittleEndian64(blob, 16);
  if (size > blob.size() - kBlobHeaderBytes) return std::nullopt;
  const std::string_view payload = blob.substr(kBlobHeaderBytes, size);
  NcclPayload out;
  for (const PayloadField& field : fields) {
    const size_t bytes = PayloadTypeBytes(field.type);
    if (bytes == 0 || field.offset < 0 || static_cast<uint64_t>(field.offset) + bytes > payload.size()) continue;
    uint64_t value = 0;
    for (size_t b = 0; b < bytes; ++b) {
      value |= static_cast<uint64_t>(static_cast<unsigned char>(payload[field.offset + b])) << (8 * b);
    }
    // int is signed (a negative one is no size or count: SetField reads it as unknown); the rest unsigned.
    const std::string text = field.type == 5 ? std::to_string(static_cast<int32_t>(value)) : std::to_string(value);
    SetField(field.name, text, &out);
  }
  return out;
}

}  // namespace tuneprof::nsys

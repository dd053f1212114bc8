#pragma once
// What the Nsight Systems SQLite export means by its ids, enums and names, in one place.
// The importer asks these; nothing else hard-codes nsys values. Names are normalized to Kineto's
// spelling so that the analyses written for Kineto traces read nsys input unchanged.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/event_kind.h"

namespace tuneprof::nsys {

// Schema versions (META_DATA_EXPORT EXPORT_SCHEMA_VERSION) whose tables this importer was checked
// against: 3.24.x and 3.25.x (real exports in traces/nsys). Other 3.x versions are read with a warning:
// a minor bump may rename or retype a column; unknown columns simply read as absent.
bool IsKnownSchemaVersion(std::string_view version);
constexpr std::string_view kKnownSchemaVersions = "3.24.x, 3.25.x";

// Serialized GlobalIds (globalPid / globalTid): PID = bits 24..47, TID = bits 0..23.
inline int64_t ProcessOf(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
inline int64_t ThreadOf(int64_t global_id) { return global_id & 0xFFFFFF; }

// correlationId is unique per process only; ranks in one report reuse ids. The model joins on one
// number, so the process goes into the high bits (CUPTI ids are 32-bit).
inline int64_t ProcessCorrelation(int64_t pid, int64_t correlation) { return (pid << 32) | (correlation & 0xFFFFFFFF); }

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; driver names ("cuLaunchKernelEx") have no suffix.
// "cudaStreamGetCaptureInfo_v2_v11030" -> "cudaStreamGetCaptureInfo_v2" (only the last one goes).
std::string_view StripVersionSuffix(std::string_view name);

// ENUM_CUDA_MEMCPY_OPER (copyKind) and ENUM_CUDA_MEM_KIND (srcKind, dstKind, memKind). nsys numbers
// memory kinds from 0 = Pageable, unlike CUPTI's own enum (0 = Unknown).
CopyDirection DirectionOfCopyKind(int64_t copy_kind);
std::string_view CopyKindWord(int64_t copy_kind);  // "HtoD", as Kineto names CUPTI's kinds
MemoryKind MemoryKindOf(int64_t mem_kind);
std::string_view MemoryKindWord(int64_t mem_kind);  // "Pageable", "Device", ...

// Kineto's names: "Memcpy HtoD (Pageable -> Device)", "Memset (Device)". A kind the file does not
// give (column absent or NULL, passed as -1) is left out: "Memcpy HtoD", "Memset".
std::string MemcpyName(int64_t copy_kind, int64_t src_kind, int64_t dst_kind);
std::string MemsetName(int64_t mem_kind);

// ENUM_CUPTI_SYNC_TYPE as Kineto names cuda_sync events.
std::string_view SyncTypeName(int64_t sync_type);

// ENUM_NSYS_EVENT_TYPE values of NVTX_EVENTS that are ranges on a host thread.
inline bool IsNvtxRange(int64_t event_type) { return event_type == 59 || event_type == 60; }  // PushPop, StartEnd
inline bool IsNvtxMark(int64_t event_type) { return event_type == 34; }

// torch.autograd.profiler.emit_nvtx writes every operator as an NVTX range "NAME[, seq = N][, op_id = N]
// [, sizes = [...]][, input_op_ids = [...]]": the operator's name is what precedes the first of these
// fields. nullopt for text without them (a user's own range, NCCL's "ncclSend").
std::optional<std::string_view> PytorchOpName(std::string_view nvtx_text);

// The rank an NVTX text names when the whole text is a rank label: "rank 3", "RANK=3", "rank: 3",
// "[rank3]"; -1 otherwise ("ranking loss", "rank 3 done").
int64_t RankInNvtxText(std::string_view nvtx_text);

// ENUM_NSYS_EVENT_CLASS of CUPTI_ACTIVITY_KIND_RUNTIME: 1 = driver API. Without the column, driver
// calls are told apart by name ("cuLaunchKernelEx" vs "cudaLaunchKernel").
bool IsDriverCall(int64_t event_class, std::string_view name);

// The sampled GPU metrics (TARGET_INFO_GPU_METRICS metricName) the utilizations read: SM activity,
// tensor activity and DRAM read / write throughput, under the names nsys versions give them
// ("SMs Active [Throughput %]", older "SM Active"; "DRAM Read Bandwidth [Throughput %]").
bool IsReadGpuMetric(std::string_view metric_name);

// NCCL's NVTX payloads (NCCL >= 2.19): each API range ("ncclAllReduce", "ncclSend", "ncclCommInitRank")
// carries a struct registered as a payload schema (NVTX_PAYLOAD_SCHEMAS / _ENTRIES in the export).
// Nsight Systems writes the payload as JSON (NVTX_EVENTS.jsonText) and, exported with
// --include-blobs=true, as binary (binaryData); the schemas are exported either way.
struct NcclPayload {
  int64_t bytes = -1;  // "Message size [bytes]" (NCCL 2.25 on) or "Bytes" (2.19-2.24): count x type size
  int64_t ranks = -1;  // "No. of ranks" (communicator ranges, NCCL 2.25 on)
  int64_t rank = -1;   // "Rank": the caller's rank in the communicator (communicator ranges)
  int64_t peer = -1;   // "Peer rank": the other side of a Send / Recv, in the communicator's numbering
  std::string comm;    // "NCCL communicator ID" as written (digits), "" when absent
};

// An entry of a payload schema (NVTX_PAYLOAD_SCHEMA_ENTRIES): field name, NVTX payload type, byte offset.
struct PayloadField {
  std::string name;
  int64_t type = 0;
  int64_t offset = 0;
};

// The payload as jsonText renders it ({"NCCL communicator ID": 123, "Message size [bytes]": 4096});
// numbers may be written as strings with digit separators. nullopt when it is not a JSON object.
std::optional<NcclPayload> NcclPayloadFromJson(std::string_view json);

// The payload of one binaryData blob: a 32-byte header (domain id, schema id, payload size, each a
// little-endian uint64, then 8 reserved bytes) and the payload, read with `fields` (its schema's
// entries). nullopt when the blob is shorter than its header says.
std::optional<NcclPayload> NcclPayloadFromBinary(std::string_view blob, const std::vector<PayloadField>& fields);

// The schema id a binaryData blob's header names, or -1 when the blob has no header.
int64_t PayloadSchemaOfBlob(std::string_view blob);

// NCCL's API ranges: "ncclAllReduce", "ncclGroupEnd" (not PyTorch's "nccl:all_reduce").
inline bool IsNcclApiRange(std::string_view text) {
  return text.size() > 4 && text.starts_with("nccl") && text[4] >= 'A' && text[4] <= 'Z';
}

}  // namespace tuneprof::nsys

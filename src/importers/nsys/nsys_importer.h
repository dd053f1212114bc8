#pragma once
// Nsight Systems SQLite exports (`nsys export --type sqlite`, schema 3.x) into the same
// model the Kineto importer fills, so that every analysis reads them unchanged:
//   CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET -> device events on process = deviceId, track =
//     streamId (as Kineto numbers GPU processes), with KernelInfo / CopyInfo; names in Kineto's spelling
//   CUPTI_ACTIVITY_KIND_RUNTIME -> cuda_runtime / cuda_driver calls on the host thread (globalTid),
//     version suffixes stripped; correlation ids made unique per process
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> host waits: runtime-kind events (category cuda_sync) on the
//     thread of the synchronizing call they happened in, never device work
//   NVTX_EVENTS ranges -> host operators when PyTorch's emit_nvtx wrote them ("aten::mm, op_id = 12"
//     -> aten::mm), else user annotations (ProfilerStep#N ranges become steps; without any, repeating
//     top-level ranges do, nsys_steps.h); marks -> instants
//   TARGET_INFO_GPU -> Device properties; CUDA_GPU_MEMORY_USAGE_EVENTS -> memory events
// Ranks: an export of several processes that ran device work (torchrun's workers) is one rank per
// process, as a directory of Kineto files is one rank per file; host rows of other processes are then
// counted, not read. Each rank's number is the one its NVTX text names ("rank 3") when every process
// names its own, else the pid order, said in the metadata entry nsys.rank_source (not a warning: the
// export has nothing better). An export of one such process (or none) is one rank holding everything.
// correlationId is unique per process only, so launches join within a process. Tables are created lazily
// by nsys, so a missing table (or column) means "not captured": the metadata's `inventory.*` entries
// say which tables were present (with row counts) and which were missing. Nothing is written to the
// file (SqliteFile opens it immutable); the joins run on in-memory hash maps.
#include <string>
#include <vector>

#include "base/status.h"
#include "io/sqlite_file.h"
#include "model/trace.h"

namespace tuneprof {

// True when `file` looks like an nsys export: StringIds plus at least one CUPTI_ACTIVITY_KIND_* or
// NVTX_EVENTS table. Ascend .db files have neither.
bool IsNsysExport(const SqliteFile& file);

// Nsight Systems' own .nsys-rep is a binary format tuneprof does not read; its SQLite export is. The
// error for such a `file` given, or met in a directory without its export beside it (the same name, .sqlite);
// OK for any other file (importers/registry.h hands this to the directory listing).
Status RefuseUnexportedNsysReport(const std::string& file, bool given);

// Imports an opened export: one trace per rank, in rank order. `file_bytes` is the file's size, for `info`.
Result<std::vector<Trace>> ImportNsysSqlite(const SqliteFile& file, uint64_t file_bytes);

}  // namespace tuneprof

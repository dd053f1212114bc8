#pragma once
// Nsight Systems SQLite exports (`nsys export --type sqlite`, schema 3.x; formats.md C) into the same
// model the Kineto importer fills, so that every analysis reads them unchanged:
//   CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET -> device events on process = deviceId, track =
//     streamId (as Kineto numbers GPU processes), with KernelInfo / CopyInfo; names in Kineto's spelling
//   CUPTI_ACTIVITY_KIND_RUNTIME -> cuda_runtime / cuda_driver calls on the host thread (globalTid),
//     version suffixes stripped; correlation ids made unique per process
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> cuda_sync events on the stream's device
//   NVTX_EVENTS ranges -> user annotations (ProfilerStep#N ranges become steps); marks -> instants
//   TARGET_INFO_GPU -> Device properties; CUDA_GPU_MEMORY_USAGE_EVENTS -> memory events
// One file is one rank; its processes and devices are kept apart inside it. Tables are created lazily
// by nsys, so a missing table (or column) means "not captured": the metadata's `inventory.*` entries
// say which tables were present (with row counts) and which were missing. Nothing is written to the
// file (SqliteFile opens it immutable); the joins run on in-memory hash maps.
#include <string>

#include "base/status.h"
#include "io/sqlite_file.h"
#include "model/trace.h"

namespace tuneprof {

// True when `file` looks like an nsys export: StringIds plus at least one CUPTI_ACTIVITY_KIND_* or
// NVTX_EVENTS table. Ascend .db files have neither.
bool IsNsysExport(const SqliteFile& file);

// Imports an opened export. `file_bytes` is the file's size, for `info`.
Result<Trace> ImportNsysSqlite(const SqliteFile& file, uint64_t file_bytes);

}  // namespace tuneprof

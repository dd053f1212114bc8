#pragma once
// PyTorch allocator snapshots (torch.cuda.memory._dump_snapshot, torch_npu.npu.memory._dump_snapshot)
// read through the plain-data pickle reader (io/pickle_reader.h): nothing in the file runs.
#include <string>
#include <string_view>

#include "base/status.h"
#include "model/memory_snapshot.h"

namespace tuneprof {

// The largest snapshot read: its bytes are held whole while it is read.
inline constexpr size_t kMaxSnapshotBytes = size_t{2} << 30;

// True where the file's content opens as a binary pickle (a snapshot is told by content, whatever its name).
bool IsPickleFile(const std::string& path);

// Reads the snapshot at `path`; one error line naming the file where it is no snapshot or is damaged.
Result<MemorySnapshot> ReadMemorySnapshot(const std::string& path);

// The same from bytes already read (tests, the fuzzer); `name` opens every error.
Result<MemorySnapshot> MemorySnapshotFromBytes(std::string bytes, std::string_view name);

}  // namespace tuneprof

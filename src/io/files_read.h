#pragma once
// Every file this process opened for reading, by device and inode, so that no output is ever written over
// one. A run reads files no command line names (the tables inside a profiler's rank directory, the
// databases beside them), and a link names one file twice: only the file's identity says what was read.
// Thread-safe: the ranks of a run are read on all cores.
#include <cstdint>
#include <string>

namespace tuneprof {

// Records the file open on `fd` as read, shown as `path`. A descriptor that cannot be looked at is left out.
void RecordFileRead(int fd, const std::string& path);

// The same, for a file a library opens by name (SQLite).
void RecordFileRead(const std::string& path);

// The name of the file this process read at `device` and `inode` (the first name it was read by), or ""
// where it read none there.
std::string FileReadAt(uint64_t device, uint64_t inode);

// Forgets every file read: for tests, which read and write many files in one process.
void ForgetFilesRead();

}  // namespace tuneprof

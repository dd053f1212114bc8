#pragma once
// Output files written whole or not at all, and never over an input. The bytes go to a temporary file
// beside the target (same directory, so same file system) that is renamed over the target only once
// every byte is written and flushed: a full disk or a killed process leaves the previous file (or none),
// never half a report.
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tuneprof {

// kUsage naming `output` when it is the same file as one of `inputs` (device and inode, so a symlink or
// a hard link to an input counts too); kIoError when it is a directory. An output that does not exist
// yet clashes with nothing.
Status CheckOutputIsNotInput(const std::string& output, const std::vector<std::string>& inputs);

// Writes `bytes` to `path` through a temporary file and a rename. A symlink at `path` is followed, so
// the link stays and its target is replaced. kIoError naming `path` and the cause.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

// The same, gzip-compressed (level 6).
Status WriteGzipFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace tuneprof

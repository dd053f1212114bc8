#pragma once
// The directories every input must lie in, for a process that reads paths chosen by someone else
// (`tuneprof mcp DIR...`, where an agent names the files). Checked where files are opened for reading
// (byte sources, SQLite), so that a file a run reaches on its own (a rank directory's tables, a symlink
// inside an allowed directory) obeys the same rule as the path given. Process-wide; set once before any
// read. Without roots every path is allowed, as for the command line.
#include <string>
#include <vector>

#include "base/status.h"

namespace tuneprof {

// Resolves each directory (symlinks included); an error names the one that does not resolve to a
// directory.
Status RestrictReadsTo(const std::vector<std::string>& directories);

// The roots in force, resolved (empty when reads are not restricted).
const std::vector<std::string>& ReadRoots();

// `path` resolved as far as it exists (symlinks included, `..` folded), the rest appended as written.
std::string ResolvePath(const std::string& path);

// Ok when reads are not restricted or `path` resolves to a root or below one; else
// "path X is outside the allowed directories: D1, D2".
Status CheckReadAllowed(const std::string& path);

// The same for a file already open on `fd`, by the file the descriptor holds (Linux's /proc/self/fd): a
// symlink swapped in between CheckReadAllowed and the open is caught here. Ok where /proc is not mounted.
Status CheckOpenedAllowed(int fd, const std::string& path);

}  // namespace tuneprof

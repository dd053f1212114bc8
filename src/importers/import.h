#pragma once
// Entry point of the import layer: user paths in, one Trace per rank out. Sniffs each file's content
// to pick the importer and settles which rank a file is.
#include <string>
#include <vector>

#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

// Imports one file, whatever its supported format, or one Ascend profiler rank directory.
Result<Trace> ImportFile(const std::string& path);

// Expands files and directories (every trace inside, one rank each) and imports them in path order.
Result<std::vector<Trace>> ImportPaths(const std::vector<std::string>& paths);

}  // namespace tuneprof

#pragma once
// Expands user paths (files or directories) into the trace files to import.
#include <string>
#include <vector>

#include "base/status.h"

namespace tuneprof {

// A file is returned as is. A directory yields every file below it whose name looks like a trace
// (*.json, *.json.gz, *.pt.trace.json*), sorted by path so that output is deterministic. A directory
// without any is an error naming it.
Result<std::vector<std::string>> ListTraceFiles(const std::string& path);

}  // namespace tuneprof

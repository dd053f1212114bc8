#pragma once
// Entry point of the import layer: user paths in, one Trace per rank out. Picks the importer by content
// through the registry of formats (importers/registry.h).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

// The files of a run that could not be read. A few are named with their reason; past that, warnings
// would drown the output (a directory of thousands of empty files), so the rest are counted by reason.
class UnreadableFiles {
 public:
  static constexpr size_t kNamed = 5;
  static constexpr size_t kReasons = 3;

  bool empty() const { return count_ == 0; }
  void Add(const std::string& file, const Status& status);
  // One error for a run of which nothing could be read: the first file's when it is the only one.
  Status NothingLeft(const std::vector<std::string>& paths) const;
  // "FILE: reason; skipped" for the first few, then one line counting the rest by reason.
  void AppendWarnings(std::vector<std::string>* out) const;

 private:
  uint64_t count_ = 0;
  Status first_;
  std::vector<std::string> named_;
  std::map<std::string, uint64_t> by_reason_;
};

// Imports one file, whatever its supported format, or one Ascend profiler rank directory, into the
// ranks it holds: one trace, or one per process for an Nsight Systems export of several processes
// that ran device work.
Result<std::vector<Trace>> ImportFileRanks(const std::string& path);

// ImportFileRanks for a caller that takes one rank per file: a file of several ranks is an error.
Result<Trace> ImportFile(const std::string& path);

// io/trace_files.h's ListTraceFiles with what the registry says of a directory's files (importers/registry.h):
// what every command lists its inputs with.
Result<std::vector<std::string>> ListInputFiles(const std::string& path, std::vector<std::string>* notes = nullptr);

// Expands files and directories (every trace inside) and imports them in path order, a file's ranks
// in rank order.
// A path that names nothing, or a directory without traces, is an error. With `warnings`, a file or
// rank directory that cannot be read is skipped with a warning naming it and the reason (a few named,
// the rest counted by reason), and the run is an error only when no trace is left; without, the first
// such file is the error.
Result<std::vector<Trace>> ImportPaths(const std::vector<std::string>& paths,
                                       std::vector<std::string>* warnings = nullptr);

}  // namespace tuneprof

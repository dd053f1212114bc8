#pragma once
// The communication analysis of a run with bounded memory, as `comm` reads it and `annotate --merge`
// aligns clocks with it: files are read on all cores, each reduced to its ranks' communication
// summaries and dropped before the worker takes the next, so memory holds one file's traces per worker
// whatever the number of ranks; the ranks are then matched across the run.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/comm/comm_cross_rank.h"
#include "base/status.h"

namespace tuneprof {

struct CommRunOptions {
  std::string hardware;       // --hardware NAME
  std::string hardware_file;  // --hardware-file FILE
  double utilization_threshold = 0.5;
  // Summary files (summary_file.h) taken in place of traces: `comm`, not `annotate --merge`, which
  // writes every event and so needs the traces themselves.
  bool summaries = false;
  std::string command = "comm";  // named when summaries are refused
};

// Where each rank of the analysis came from, in the order of analysis.ranks.
struct CommRankSource {
  size_t file = 0;           // index into CommRun::files
  size_t within_file = 0;    // an nsys export of several processes holds several ranks
  int64_t start_ns = kNoId;  // the rank's first event, on its own clock
};

struct CommRun {
  std::vector<std::string> files;  // the trace files behind the paths, as listed
  CommAnalysis analysis;
  std::vector<CommRankSource> sources;
  std::vector<std::string> warnings;  // as written to stderr
};

// Errors: the flags', a path that cannot be listed, or no file readable (unreadable files are skipped
// with a warning otherwise).
Result<CommRun> AnalyzeRunCommunication(const std::vector<std::string>& paths, const CommRunOptions& options);

}  // namespace tuneprof

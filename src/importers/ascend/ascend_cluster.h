#pragma once
// msprof-analyze's cluster output (cluster_analysis_output/): what a large Ascend run often keeps when
// its rank directories are gone. cluster_step_trace_time.csv holds every rank's step split (Computing,
// Communication(Not Overlapped), Overlapped, Free, Stage, Bubble, in µs); it becomes one trace per rank
// holding only those reported step times, as a rank directory with nothing but step_trace_time.csv
// does, so that every command reads the cluster the way it reads such ranks. The other files
// (cluster_communication*.json, cluster_analysis.db) are not read yet: the inventory says so.
#include <string>
#include <vector>

#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

// One trace per rank of cluster_step_trace_time.csv, in rank order; a rank listed twice keeps its
// rows in one trace, with a warning.
Result<std::vector<Trace>> ImportClusterAnalysis(const std::string& dir);

}  // namespace tuneprof

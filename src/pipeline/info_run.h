#pragma once
// `info`'s map -> reduce: each rank reduced to what its trace holds (TraceSummary), on all cores with its
// trace dropped at once (rank_map.h). A summary file keeps none of it: `info` refuses them.
#include <string>
#include <vector>

#include "analysis/breakdown/trace_summary.h"
#include "base/status.h"

namespace tuneprof {

// The ranks of the run `paths`, in its order. The map's warnings are said on stderr and appended to
// `warnings`. Errors: a path that cannot be listed, a summary file among the files, or no file readable.
Result<std::vector<TraceSummary>> SummarizeRunTraces(const std::vector<std::string>& paths,
                                                     std::vector<std::string>* warnings);

}  // namespace tuneprof

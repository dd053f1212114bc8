#pragma once
// A torch_npu profiler directory, text export: one rank.
//   {worker}_{ts}_ascend_pt/                   (the rank directory; any name holding the output folder)
//     profiler_info_{rank}.json  profiler_metadata.json
//     ASCEND_PROFILER_OUTPUT/ trace_view.json kernel_details.csv step_trace_time.csv ...
// Either the rank directory or its ASCEND_PROFILER_OUTPUT/ alone may be given. The timeline comes
// from trace_view.json through the Chrome-trace importer; the CSVs fill the model's side tables.
#include <string>
#include <vector>

#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

// Imports one rank directory (ascend_layout.h's IsAscendProfilerDirectory says which are). The rank comes from profiler_info_{rank}.json (its name, else its
// rank_id), else profiler_metadata.json's distributed_args.rank, else the path. A missing or
// unreadable summary file is a warning naming it; a directory with no trace_view.json and no
// kernel_details.csv is read as the Db export (importers/ascend/ascend_db.h) when it holds
// ascend_pytorch_profiler*.db, else it is an error. A trace_view.json cut off before the end of the steps
// step_trace_time.csv reports is set aside with a warning: the rank is then read exactly as one without
// trace_view.json (still marked cut off). Metadata entries "inventory.<file>[:TABLE]" list
// every file (and database table) with its rows, and the expected files that were absent.
// msprof's PROF_* (or its mindstudio_profiler_output/) is handed to importers/ascend/ascend_msprof.h.
Result<Trace> ImportAscendDirectory(const std::string& dir);

// ImportAscendDirectory, and one trace per device where the directory holds no timeline and its step split
// has rows of several devices (msprof's multi-device Db export: one StepTraceTime row per deviceId in one
// analysis database); each such trace is the rank of its device id, said in a warning.
Result<std::vector<Trace>> ImportAscendDirectoryRanks(const std::string& dir);

}  // namespace tuneprof

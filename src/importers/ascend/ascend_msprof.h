#pragma once
// msprof's own output directory, one rank:
//   PROF_{num}_{ts}_{str}/
//     device_{N}/info.json               DeviceInfo (ai_core_num, aiv_num, aic_frequency), the chip, rank_id
//     mindstudio_profiler_output/        msprof_{ts}.json (timeline, the tracks trace_view draws),
//                                        op_summary_{ts}.csv (kernel_details under CANN's names),
//                                        op_statistic_*, api_statistic_*, task_time_*, ... (counted only)
//     analyze/                           communication.json, communication_matrix.json, communication_analyzer.db
//     msprof_{ts}.db                     the Db export (same CANN tables as torch_npu's .db)
// Either PROF_* or its mindstudio_profiler_output/ alone may be given. The timeline goes through the
// Chrome-trace importer, op_summary through the kernel_details reader, the .db through the torch_npu
// .db importer, so every analysis works on this layout as on ASCEND_PROFILER_OUTPUT/.
#include <string>

#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

// True when `dir` is a PROF_* directory or a mindstudio_profiler_output/ folder.
bool IsMsprofDirectory(const std::string& dir);

// Imports one PROF_* directory. The rank comes from the .db's RANK_DEVICE_MAP, else info.json's rank_id,
// else the path; the chip from info.json's platform_version (or the .db's NPU_INFO). Metadata entries
// "inventory.<file>" (relative to PROF_*) list every file with its rows and the expected files that were
// absent; "msprof_info.device_<N>.<key>" the DeviceInfo block. A missing or malformed file is a warning;
// a PROF_* with no timeline, no op_summary and no msprof_*.db is an error naming it.
Result<Trace> ImportMsprofDirectory(const std::string& dir);

}  // namespace tuneprof

#pragma once
// What the Ascend layouts share: a rank directory holds its exported files in one output folder
// (torch_npu's ASCEND_PROFILER_OUTPUT/, msprof's mindstudio_profiler_output/), and the user may name
// either the rank directory or that folder. Also the inventory's CSV row count, and which directories
// are Ascend output at all (a rank directory, or msprof-analyze's cluster output).
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "importers/ascend/ascend_db.h"
#include "model/trace.h"

namespace tuneprof {

// Follows the timeline file's path, and comes before the rank directory, in the warning of a rank whose
// timeline is missing.
inline constexpr std::string_view kMissingTimelineWarning = ": missing; no timeline for ";

struct RankLayout {
  std::filesystem::path root;    // the rank directory
  std::filesystem::path output;  // its output folder
};

// "dir/" and "dir" name the same directory; filename() of the first is empty.
std::filesystem::path NormalDir(const std::string& dir);

// `dir` is the rank directory or its `output_dir` folder.
RankLayout ResolveLayout(const std::string& dir, std::string_view output_dir);

bool IsRegularFile(const std::filesystem::path& p);

// The rank's timeline read from `timeline`, or an empty torch_npu timeline with a warning when it is
// missing (an empty path; the warning is `missing`) or does not read (the warning says why), so that the
// rank's summaries still load.
Trace ImportTimelineOrEmpty(const std::filesystem::path& timeline, const std::string& dir, const std::string& missing);

// Producer settings (profiler_info, profiler_metadata.json) as flat metadata entries under `key`:
// objects are walked ("key.field.subfield"), strings kept unquoted, anything else as its JSON text.
void AddFlattenedMetadata(simdjson::dom::element element, const std::string& key, SideTableBuilder* out);

// Data records of a CSV (the header excluded) as an inventory entry, or why it could not be read.
void CountCsvRows(const std::filesystem::path& path, const std::string& name, SourceState state, TraceMetadata* meta);

// True when `dir` is an Ascend profiler rank directory: named *_ascend_pt, holding
// ASCEND_PROFILER_OUTPUT/, or that ASCEND_PROFILER_OUTPUT/ folder itself; msprof's PROF_*/, or holding
// or being its mindstudio_profiler_output/.
bool IsAscendProfilerDirectory(const std::string& dir);

// msprof-analyze's cluster output: a directory holding this file (cluster_analysis_output/) is the step
// split of a whole run, listed whole like a rank directory and imported as one trace per rank.
inline constexpr std::string_view kClusterStepTraceTime = "cluster_step_trace_time.csv";
// Beside it, when msprof-analyze's communication analysis ran: every rank's HCCL ops, by group.
inline constexpr std::string_view kClusterCommunication = "cluster_communication.json";
bool IsClusterAnalysisDirectory(const std::string& dir);

}  // namespace tuneprof

#pragma once
// What the Ascend layouts share: a rank directory holds its exported files in one output folder
// (torch_npu's ASCEND_PROFILER_OUTPUT/, msprof's mindstudio_profiler_output/), and the user may name
// either the rank directory or that folder. Also the inventory's CSV row count.
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

// Data records of a CSV (the header excluded) as an inventory entry, or why it could not be read.
void CountCsvRows(const std::filesystem::path& path, const std::string& name, SourceState state, TraceMetadata* meta);

}  // namespace tuneprof

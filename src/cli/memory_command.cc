#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <optional>

#include "analysis/core/hardware_profile.h"
#include "analysis/hta/memory_hta_bw.h"
#include "analysis/memory/memory_timeline.h"
#include "cli/command_outputs.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/json_output.h"
#include "analysis/memory/category_timeline.h"
#include "importers/import.h"
#include "importers/memory_export/memory_timeline_export_reader.h"
#include "importers/pickle/memory_snapshot_reader.h"
#include "importers/registry.h"
#include "io/trace_files.h"
#include "pipeline/hardware_options.h"
#include "pipeline/job_chips.h"
#include "pipeline/memory_reducer.h"
#include "pipeline/run_analyses.h"
#include "report/console/category_report.h"
#include "report/console/memory_report.h"
#include "report/console/snapshot_report.h"
#include "report/console/warnings_json.h"

namespace tuneprof::cli {

Result<std::string> MemoryOutput(const std::vector<Trace>& traces, const MemoryOptions& options,
                                 const std::vector<std::string>& warnings) {
  TP_ASSIGN_OR_RETURN(HardwareProfiles profiles, LoadHardwareProfiles(options.hardware_file));
  TP_ASSIGN_OR_RETURN(const HardwareProfile* forced, ForcedHardware(profiles, options.hardware));
  JobChips chips(profiles, forced);
  std::vector<std::string> paths;
  for (const Trace& trace : traces) {
    chips.Select(trace);
    paths.push_back(trace.metadata().path);
  }
  chips.Share(paths);
  std::vector<MemoryAnalysis> ranks;
  for (const Trace& trace : traces) ranks.push_back(AnalyzeMemory(trace, chips.Select(trace)));
  return options.json ? WithWarnings(RenderMemoryJson(ranks, ComputeHtaMemoryBw(traces)), warnings)
                      : RenderMemoryText(ranks);
}

Result<std::string> MemorySnapshotOutput(const std::string& path, bool json) {
  TP_ASSIGN_OR_RETURN(const MemorySnapshot snapshot, ReadMemorySnapshot(path));
  const SnapshotAnalysis analysis = AnalyzeSnapshot(snapshot);
  return json ? RenderSnapshotJson(analysis) : RenderSnapshotText(analysis);
}

namespace {

// The run map -> summary -> reduce, in bounded memory (AnalyzeRunMemory), rendered.
Result<std::string> MemoryInBoundedMemory(const MemoryOptions& options, const HardwareProfiles& profiles,
                                          const HardwareProfile* forced) {
  std::vector<std::string> warnings;
  TP_ASSIGN_OR_RETURN(const MemoryRun run, AnalyzeRunMemory(options.paths, options.hardware, options.hardware_file,
                                                            profiles, forced, options.json, &warnings));
  if (!options.json) return RenderMemoryText(run.ranks);
  return WithWarnings(RenderMemoryJson(run.ranks, run.hta_bw), warnings);
}

// The memory snapshots a directory holds: files named *.pickle or *.pkl (as torch's examples name them)
// whose content opens as a pickle, in name order. Other files are not opened: a run directory holds
// thousands of them.
std::vector<std::string> SnapshotsIn(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string ext = it->path().extension().string();
    if ((ext == ".pickle" || ext == ".pkl") && it->is_regular_file(ec) && IsPickleFile(it->path().string())) {
      found.push_back(it->path().string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// A directory given alone that holds one snapshot and no traces stands for that snapshot. One that holds
// traces too is read as a run, and says on stderr that its snapshots are left out; one that holds several
// snapshots and no traces names them.
Result<std::optional<std::string>> SnapshotInDirectory(const std::vector<std::string>& paths) {
  std::error_code ec;
  for (const std::string& dir : paths) {
    if (!std::filesystem::is_directory(dir, ec)) continue;
    const std::vector<std::string> snapshots = SnapshotsIn(dir);
    if (snapshots.empty()) continue;
    if (ListInputFiles(dir).ok()) {
      fmt::print(stderr,
                 "tuneprof: {}: memory snapshot {}{} not read with the traces; give it alone: tuneprof memory {}\n",
                 dir, snapshots.front(), snapshots.size() > 1 ? fmt::format(" and {} more", snapshots.size() - 1) : "",
                 snapshots.front());
      continue;
    }
    if (paths.size() > 1 || snapshots.size() > 1) {
      const std::string held = snapshots.size() == 1
                                   ? fmt::format("memory snapshot {}", snapshots.front())
                                   : fmt::format("{} memory snapshots ({}, ...)", snapshots.size(), snapshots.front());
      return Status(StatusCode::kUsage,
                    fmt::format("{}: holds {} and no traces; a snapshot is read alone: give one snapshot", dir, held));
    }
    return std::optional<std::string>(snapshots.front());
  }
  return std::optional<std::string>();
}

// A PyTorch allocator snapshot, told by its content (a pickle), is read alone: it is one process's
// allocator, not a rank of a run.
Result<std::optional<std::string>> SnapshotOutput(const MemoryOptions& options) {
  auto snapshot = std::find_if(options.paths.begin(), options.paths.end(),
                               [](const std::string& path) { return IsPickleFile(path); });
  if (snapshot != options.paths.end() && options.paths.size() > 1) {
    return Status(StatusCode::kUsage, *snapshot + ": a memory snapshot is read alone; give one snapshot and no traces");
  }
  std::string path;
  if (snapshot != options.paths.end()) {
    path = *snapshot;
  } else {
    TP_ASSIGN_OR_RETURN(const std::optional<std::string> in_directory, SnapshotInDirectory(options.paths));
    if (!in_directory) return std::optional<std::string>();
    path = *in_directory;
  }
  TP_ASSIGN_OR_RETURN(std::string text, MemorySnapshotOutput(path, options.json));
  return std::optional<std::string>(std::move(text));
}

// A directory given alone that holds no traces and one export_memory_timeline file stands for that file;
// one that holds several names them.
Result<std::optional<std::string>> TimelineExportInDirectory(const std::vector<std::string>& paths) {
  std::error_code ec;
  if (paths.size() != 1 || !std::filesystem::is_directory(paths.front(), ec) || ListInputFiles(paths.front()).ok()) {
    return std::optional<std::string>();
  }
  const std::vector<std::string> timelines = MemoryTimelineExportsIn(paths.front(), DirectoryFileKinds());
  if (timelines.size() > 1) {
    return Status(StatusCode::kUsage,
                  fmt::format("{}: holds {} memory timelines ({}, ...) and no traces; a memory timeline is read "
                              "alone: give one",
                              paths.front(), timelines.size(), timelines.front()));
  }
  if (timelines.empty()) return std::optional<std::string>();
  return std::optional<std::string>(timelines.front());
}

// torch's export_memory_timeline file, told by its content, is read alone as a snapshot is: it is one
// device's timeline, not a rank of a run.
Result<std::optional<std::string>> TimelineExportOutput(const MemoryOptions& options) {
  TP_ASSIGN_OR_RETURN(std::optional<std::string> path, TimelineExportInDirectory(options.paths));
  if (!path) {
    auto file = std::find_if(options.paths.begin(), options.paths.end(),
                             [](const std::string& given) { return IsMemoryTimelineExportFile(given); });
    if (file == options.paths.end()) return std::optional<std::string>();
    if (options.paths.size() > 1) {
      return Status(StatusCode::kUsage, *file +
                                            ": a memory timeline (torch export_memory_timeline) is read alone; give "
                                            "it and no other path");
    }
    path = *file;
  }
  TP_ASSIGN_OR_RETURN(const MemoryTimelineExport timeline, ReadMemoryTimelineExport(*path));
  const CategoryTimeline analysis = AnalyzeCategoryTimeline(timeline);
  return std::optional<std::string>(options.json ? RenderCategoryTimelineJson(analysis)
                                                 : RenderCategoryTimelineText(analysis));
}

}  // namespace

int RunMemory(const MemoryOptions& options) {
  auto timeline = TimelineExportOutput(options);
  if (!timeline.ok()) return ReportError(timeline.status());
  if (timeline->has_value()) {
    PrintOutput(**timeline);
    return kExitOk;
  }
  auto snapshot = SnapshotOutput(options);
  if (!snapshot.ok()) return ReportError(snapshot.status());
  if (snapshot->has_value()) {
    PrintOutput(**snapshot);
    return kExitOk;
  }
  // Flags are checked before the (long) import.
  auto profiles = LoadHardwareProfiles(options.hardware_file);
  if (!profiles.ok()) return ReportError(profiles.status());
  auto forced = ForcedHardware(*profiles, options.hardware);
  if (!forced.ok()) return ReportError(forced.status());
  auto text = MemoryInBoundedMemory(options, *profiles, *forced);
  if (!text.ok()) return ReportError(text.status());
  PrintOutput(*text);
  return kExitOk;
}

}  // namespace tuneprof::cli

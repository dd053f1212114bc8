#pragma once
// The per-rank summary file (.tps, docs/summary-format.md): what `tuneprof summarize` writes where a
// rank's profile lives, so that the run is put together elsewhere from summaries alone. It holds each
// rank's communication, its advice before the run's ranks are combined and (from version 2) what the
// report, `memory` and `profile` read of it: what `analyze`, `advise`, `comm`, `memory`, `profile` and
// `report` read of a rank, with the warnings its import gave and the flags it was made with.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "io/trace_files.h"
#include "pipeline/analysis_flags.h"
#include "pipeline/rank_summary.h"

namespace tuneprof {

// Version 2 added what the report reads of each rank; version 1 summaries are still read by the commands
// that need no more (analyze, advise, comm). Version 3 added each rank's expert-parallel steps, MoE expert
// load, pipeline bubble and collectives' lead-ins (why ranks wait); read as none from older summaries.
// Version 4 added the module view. Version 5 added each collective's p2p direction and the unclassified
// part of the step split (device work of unknown kind) the modules each finding names and each memory device's categories; older summaries read with directions unknown and
// no unclassified part, findings naming no module, devices without categories, their compute- and memory-bound parts as written.
// Version 6 added which warnings of the file and of each rank's breakdown have an id (model/warning.h);
// older summaries' warnings are told by their words, as the builds that wrote them told them.
// Version 7 added the sum of each rank's steps comm's exposed share is of (RankCommunication::steps_ns);
// older summaries take it from their report's breakdown.
// Version 8 added what each rank ran over its steps (RankCommunication::step_work: host APIs and device
// operators), which the slowest-vs-fastest rank comparison reads; older summaries read as none.
// Version 9 added which HCCL ops took their transit from the bandwidth info.
// Version 10 added the fused compute + communication part of the step split (TimePart::kFusedComm) and its
// share; older summaries hold that work in the unclassified part and read so.
inline constexpr uint32_t kSummaryFormatVersion = 10;
inline constexpr uint32_t kOldestSummaryFormatVersion = 1;

// The flags a summary depends on: a summary made under others would give other findings.
struct SummarySettings {
  std::string hardware;            // --hardware NAME
  std::string hardware_file_text;  // the contents of --hardware-file ("" without)
  std::string config_text;         // the contents of --config ("" without)
  bool operator==(const SummarySettings&) const = default;
};

// One trace file, summarized.
struct SummaryFile {
  // The chips the ranks' report parts point into, kept alive with them (set by whoever made the ranks).
  std::shared_ptr<const HardwareProfiles> profiles;
  std::string source;  // the trace file or rank directory it was made from
  SummarySettings settings;
  std::vector<std::string> warnings;           // files skipped and the traces' own warnings, each naming its file
  std::vector<IdentifiedWarning> warning_ids;  // those of `warnings` that have an id (version 6)
  std::vector<int64_t> starts;                 // each rank's first event, on its own clock
  std::vector<RankSummary> ranks;              // `comm`, `advice`, `breakdown_warnings` and (version 2) `report` set
  uint64_t version = kSummaryFormatVersion;    // as read
  std::string unknown_chip;                    // as read: a rank's chip that the reader's profiles lack ("" when none)
};

std::string EncodeSummaryFile(const SummaryFile& file);

// Errors name `path`: not a summary, a version this build does not read, cut off or corrupt. The ranks'
// chips are looked up by name in `profiles` (the run's; a chip it lacks is named in `unknown_chip`).
Result<SummaryFile> DecodeSummaryFile(std::string_view bytes, const std::string& path,
                                      const HardwareProfiles* profiles = nullptr);

// One file of a run as the process that mapped it hands it to the one that reduces (an MPI run,
// rank_map.h MapSharing): the same fields as a summary file plus the file's place and import status.
struct MappedFileRecord {
  uint64_t file = 0;  // index in the run's file list
  StatusCode status_code = StatusCode::kOk;
  std::string status_message;
  std::vector<std::string> warnings;
  std::vector<IdentifiedWarning> warning_ids;
  std::vector<RankLines> breakdown_warnings;
  std::vector<int64_t> starts;
  std::vector<RankSummary> ranks;  // `comm` and `advice`
};

// The records in the summary encoding, with their own magic and the same checksum; a decoding error
// names `origin` (the process they came from).
std::string EncodeMappedFiles(const std::vector<MappedFileRecord>& records);
Result<std::vector<MappedFileRecord>> DecodeMappedFiles(std::string_view bytes, const std::string& origin);

// The layout of a summary file and of the records MapSharing exchanges, in words (summary_codec.h Shape):
// what the declared fields make, which the format test pins to kSummaryFormatVersion.
std::string SummaryLayout();

// Reads and decodes the summary file at `path` (gzipped or not).
Result<SummaryFile> ReadSummaryFile(const std::string& path, const HardwareProfiles* profiles = nullptr);

// The settings `flags` make summaries under (the flag files read whole); an error when one cannot be read.
Result<SummarySettings> SummarySettingsOf(const AnalysisFlags& flags);

}  // namespace tuneprof

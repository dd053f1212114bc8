#include "pipeline/summary_file.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "importers/ascend/ascend_layout.h"
#include "importers/common/rank.h"
#include "io/byte_source.h"
#include "pipeline/hardware_options.h"
#include "pipeline/summary_codec.h"

namespace tuneprof {
namespace {

using namespace summary_format;  // NOLINT: the encoding's own parts, used throughout this file

constexpr std::string_view kMagic = kSummaryMagic;
constexpr std::string_view kRecordsMagic = "TUNEPROF-MAPPED!\n";

// One per memory device of the rank's report detail, in its order; none without a report.
std::vector<DeviceCategories> MemoryCategoriesOf(const RankSummary& rank) {
  std::vector<DeviceCategories> out;
  if (!rank.report) return out;
  for (const DeviceMemory& device : rank.report->memory.devices) {
    out.push_back({device.categories_at_peak, device.timeline_categories, device.category_strategies});
  }
  return out;
}

// False where the counts do not match the devices read before them (corruption).
bool SetMemoryCategories(std::vector<DeviceCategories> categories, RankSummary* rank) {
  if (!rank->report) return categories.empty();
  std::vector<DeviceMemory>& devices = rank->report->memory.devices;
  if (categories.size() != devices.size()) return false;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (categories[i].at_peak && categories[i].timeline.size() != devices[i].timeline.size()) return false;
    devices[i].categories_at_peak = categories[i].at_peak;
    devices[i].timeline_categories = std::move(categories[i].timeline);
    devices[i].category_strategies = std::move(categories[i].strategies);
  }
  return true;
}

// The collectives' p2p directions, in the order of the rank's collectives: written apart (version 5) so that
// older summaries keep their layout.
std::vector<P2pDirection> DirectionsOf(const RankCommunication& comm) {
  std::vector<P2pDirection> out;
  out.reserve(comm.collectives.size());
  for (const Collective& c : comm.collectives) out.push_back(c.direction);
  return out;
}

// The collectives' p2p peers (kNoId where the trace names none), in the same order and for the same reason.
std::vector<int64_t> PeersOf(const RankCommunication& comm) {
  std::vector<int64_t> out;
  out.reserve(comm.collectives.size());
  for (const Collective& c : comm.collectives) out.push_back(c.peer);
  return out;
}

// The HCCL ops whose transit the bandwidth info gave (the time info had 0), by their index in the rank's ops:
// written apart (version 9) so that older summaries keep their layout.
std::vector<uint64_t> TransitFromBandwidthOf(const RankCommunication& comm) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < comm.ascend_ops.size(); ++i) {
    if (comm.ascend_ops[i].transit_from_bandwidth) out.push_back(i);
  }
  return out;
}

// False where an index names no op (damage).
bool SetTransitFromBandwidth(const std::vector<uint64_t>& ops, RankCommunication* comm) {
  for (uint64_t i : ops) {
    if (i >= comm->ascend_ops.size()) return false;
    comm->ascend_ops[i].transit_from_bandwidth = true;
  }
  return true;
}

// The version 9 field of one rank; false where it contradicts the rank read before it.
bool ReadTransitFromBandwidth(Reader* r, RankCommunication* comm) {
  std::vector<uint64_t> estimated;
  (*r)(estimated);
  return !r->ok() || SetTransitFromBandwidth(estimated, comm);
}

bool SetPeers(const std::vector<int64_t>& peers, RankCommunication* comm) {
  if (peers.size() != comm->collectives.size()) return false;
  for (size_t i = 0; i < peers.size(); ++i) comm->collectives[i].peer = peers[i];
  return true;
}

// False when the list does not run parallel to the collectives (damage).
bool SetDirections(const std::vector<P2pDirection>& directions, RankCommunication* comm) {
  if (directions.size() != comm->collectives.size()) return false;
  for (size_t i = 0; i < directions.size(); ++i) comm->collectives[i].direction = directions[i];
  return true;
}

// The version 5 fields of one rank: its collectives' p2p directions and peers, its split's unclassified part and
// share (older summaries left that work in the compute- and memory-bound parts), the modules each of
// its findings names and its memory devices' categories. False where they contradict the rank read before them.
bool ReadVersion5Fields(Reader* r, RankSummary* rank) {
  std::vector<P2pDirection> directions;
  (*r)(directions);
  if (r->ok() && !SetDirections(directions, &rank->comm)) return false;
  std::vector<int64_t> peers;
  (*r)(peers);
  if (r->ok() && !SetPeers(peers, &rank->comm)) return false;
  (*r)(rank->advice.advice.split.part_ns[kUnclassifiedPart], rank->advice.advice.split.unclassified_share);
  uint64_t findings = 0;
  (*r)(findings);
  if (r->ok() && findings != rank->advice.findings.size()) return false;
  for (RuleFinding& f : rank->advice.findings) (*r)(f.finding.modules);
  std::vector<DeviceCategories> categories;
  (*r)(categories);
  if (r->ok() && !SetMemoryCategories(std::move(categories), rank)) return false;
  return true;
}

// Summaries written before computing that no operators class went to the unclassified part hold it in
// the memory-bound part: moved where this build puts it, so old and new summaries read alike.
void MoveUnclassedComputing(TimeSplit* split) {
  const size_t memory = static_cast<size_t>(TimePart::kMemoryBound);
  if (split->compute_classes_known || split->part_ns[kUnclassifiedPart] > 0) return;
  split->part_ns[kUnclassifiedPart] = split->part_ns[memory];
  split->part_ns[memory] = 0;
  split->unclassified_share = 1;
}

// Whether every id names one of the `lines.size()` lines it stands beside (else the file is damaged).
bool IdsWithinLines(const std::vector<IdentifiedWarning>& ids, size_t lines) {
  return std::all_of(ids.begin(), ids.end(), [&](const IdentifiedWarning& w) { return w.line < lines; });
}

// Summaries before version 6 kept no warning ids: their warnings are told by the words every build before
// it wrote them in, so that such a summary reads as it always did.
void IdentifyWarningsOfOldVersions(SummaryFile* file) {
  for (size_t line = 0; line < file->warnings.size(); ++line) {
    const std::string& warning = file->warnings[line];
    if (warning.ends_with(kNoRankWarning)) file->warning_ids.push_back({WarningId::kNoRank, line});
    if (warning.find(kMissingTimelineWarning) != std::string::npos) {
      file->warning_ids.push_back({WarningId::kMissingTimeline, line});
    }
  }
  for (RankSummary& rank : file->ranks) {
    for (size_t line = 0; line < rank.breakdown_warnings.size(); ++line) {
      if (rank.breakdown_warnings[line].find(kNoDeviceTimelineWarning) != std::string::npos) {
        rank.breakdown_warning_ids.push_back({WarningId::kNoDeviceTimeline, line});
      }
    }
  }
}

// A summary file's record after its magic, for the Writer and for the layout it makes (SummaryLayout).
template <class Archive>
void WriteSummary(Archive& w, const SummaryFile& file) {
  w(uint64_t{kSummaryFormatVersion}, file.source, file.settings, file.warnings, file.starts);
  w(uint64_t{file.ranks.size()});
  for (const RankSummary& rank : file.ranks) {
    w(rank.comm, rank.advice, rank.breakdown_warnings, rank.report, rank.comm.expert_parallel, rank.advice.moe,
      rank.advice.advice.split.part_ns[kPartsBeforeBubble], rank.comm.lead_ins);
    // After the version 3 fields, so that older summaries keep their layout.
    w(rank.report ? rank.report->modules : ModuleView());
    w(DirectionsOf(rank.comm));
    w(PeersOf(rank.comm));
    w(rank.advice.advice.split.part_ns[kUnclassifiedPart], rank.advice.advice.split.unclassified_share);
    // Version 5: the modules each finding names, in the findings' order.
    w(uint64_t{rank.advice.findings.size()});
    for (const RuleFinding& f : rank.advice.findings) w(f.finding.modules);
    w(MemoryCategoriesOf(rank));
    w(rank.breakdown_warning_ids);                                                                   // version 6
    w(rank.comm.steps_ns);                                                                           // version 7
    w(rank.comm.step_work);                                                                          // version 8
    w(TransitFromBandwidthOf(rank.comm));                                                            // version 9
    w(rank.advice.advice.split.part_ns[kFusedCommPart], rank.advice.advice.split.fused_comm_share);  // version 10
  }
  w(file.warning_ids);  // version 6
}

}  // namespace

std::string EncodeSummaryFile(const SummaryFile& file) {
  Writer w;
  w.out().append(kMagic);
  WriteSummary(w, file);
  w(Checksum(w.out()));
  return std::move(w.out());
}

std::string SummaryLayout() {
  // One rank with a report and a finding, so that every part of a rank's record is described.
  SummaryFile file;
  RankSummary& rank = file.ranks.emplace_back();
  rank.report = std::make_unique<RankReportDetail>();
  rank.advice.findings.emplace_back();
  Shape shape;
  WriteSummary(shape, file);
  shape(std::vector<MappedFileRecord>());
  return shape.out();
}

Result<SummaryFile> DecodeSummaryFile(std::string_view bytes, const std::string& path,
                                      const HardwareProfiles* profiles) {
  Reader r(bytes, profiles);
  if (!r.Expect(kMagic)) return InvalidInput(path + ": not a tuneprof summary (made by `tuneprof summarize`)");
  // The checksum first (every version ends with it): a damaged version field is damage, not another build.
  const Status corrupt = InvalidInput(path + ": summary is cut off or corrupt; summarize the trace again");
  if (bytes.size() < kMagic.size() + 16) return corrupt;
  Reader tail(bytes.substr(bytes.size() - 8));
  uint64_t checksum = 0;
  tail(checksum);
  if (checksum != Checksum(bytes.substr(0, bytes.size() - 8))) return corrupt;
  uint64_t version = 0;
  r(version);
  if (r.ok() && (version < kOldestSummaryFormatVersion || version > kSummaryFormatVersion)) {
    return InvalidInput(path + ": summary format version " + std::to_string(version) + "; this build reads versions " +
                        std::to_string(kOldestSummaryFormatVersion) + " to " + std::to_string(kSummaryFormatVersion) +
                        " (summarize the trace again with this build)");
  }
  SummaryFile file;
  file.version = version;
  uint64_t ranks = 0;
  r(file.source, file.settings, file.warnings, file.starts, ranks);
  for (uint64_t i = 0; i < ranks && r.ok(); ++i) {
    RankSummary& rank = file.ranks.emplace_back();
    r(rank.comm, rank.advice, rank.breakdown_warnings);
    if (version >= 2) r(rank.report);
    if (version >= 3) {
      r(rank.comm.expert_parallel, rank.advice.moe, rank.advice.advice.split.part_ns[kPartsBeforeBubble],
        rank.comm.lead_ins);
    }
    if (version >= 4) {
      ModuleView modules;
      r(modules);
      if (rank.report) rank.report->modules = std::move(modules);
    }
    if (version >= 5 && !ReadVersion5Fields(&r, &rank)) return corrupt;
    if (version >= 6) r(rank.breakdown_warning_ids);
    MoveUnclassedComputing(&rank.advice.advice.split);
    if (version >= 7) {
      r(rank.comm.steps_ns);
    } else if (r.ok() && rank.report) {
      // Older summaries did not write the steps comm's share is of: they follow from the report's breakdown.
      RestoreReportedSteps(rank.report->breakdown, &rank.comm);
    }
    // The steps' windows are the report's breakdown's: not written twice.
    if (r.ok() && rank.report) SetStepSpans(rank.report->breakdown, &rank.comm);
    if (version >= 8) r(rank.comm.step_work);
    if (version >= 9 && !ReadTransitFromBandwidth(&r, &rank.comm)) return corrupt;
    // Older summaries hold fused compute + communication kernels in the unclassified part, as they read.
    if (version >= 10) r(rank.advice.advice.split.part_ns[kFusedCommPart], rank.advice.advice.split.fused_comm_share);
    if (r.ok() && !IdsWithinLines(rank.breakdown_warning_ids, rank.breakdown_warnings.size())) return corrupt;
  }
  if (version >= 6) r(file.warning_ids);
  if (r.ok() && !IdsWithinLines(file.warning_ids, file.warnings.size())) return corrupt;
  if (version < 6) IdentifyWarningsOfOldVersions(&file);
  uint64_t trailing_checksum = 0;
  r(trailing_checksum);
  if (!r.ok() || !r.at_end() || file.starts.size() != file.ranks.size()) return corrupt;
  file.unknown_chip = r.unknown_chip();
  return file;
}

std::string EncodeMappedFiles(const std::vector<MappedFileRecord>& records) {
  Writer w;
  w.out().append(kRecordsMagic);
  w(uint64_t{kSummaryFormatVersion}, records);
  w(Checksum(w.out()));
  return std::move(w.out());
}

Result<std::vector<MappedFileRecord>> DecodeMappedFiles(std::string_view bytes, const std::string& origin) {
  const Status corrupt = Status(StatusCode::kIoError, origin + ": mapped files arrived cut off or corrupt");
  Reader r(bytes);
  if (bytes.size() < kRecordsMagic.size() + 16 || !r.Expect(kRecordsMagic)) return corrupt;
  Reader tail(bytes.substr(bytes.size() - 8));
  uint64_t checksum = 0;
  tail(checksum);
  if (checksum != Checksum(bytes.substr(0, bytes.size() - 8))) return corrupt;
  uint64_t version = 0;
  std::vector<MappedFileRecord> records;
  r(version, records, checksum);
  if (!r.ok() || !r.at_end() || version != kSummaryFormatVersion) return corrupt;
  for (const MappedFileRecord& record : records) {
    if (record.starts.size() != record.ranks.size()) return corrupt;
  }
  return records;
}

Result<SummaryFile> ReadSummaryFile(const std::string& path, const HardwareProfiles* profiles) {
  TP_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
  std::string bytes;
  for (;;) {
    constexpr size_t kBlock = 1 << 20;
    const size_t size = bytes.size();
    bytes.resize(size + kBlock);
    TP_ASSIGN_OR_RETURN(const size_t n, source->Read(bytes.data() + size, kBlock));
    bytes.resize(size + n);
    if (n == 0) break;
  }
  if (source->truncated()) return InvalidInput(path + ": summary is cut off; summarize the trace again");
  return DecodeSummaryFile(bytes, path, profiles);
}

Result<SummarySettings> SummarySettingsOf(const AnalysisFlags& flags) {
  SummarySettings settings;
  settings.hardware = flags.hardware;
  if (!flags.hardware_file.empty()) {
    TP_ASSIGN_OR_RETURN(settings.hardware_file_text, ReadFlagFile(flags.hardware_file, "--hardware-file"));
  }
  if (!flags.config.empty()) {
    TP_ASSIGN_OR_RETURN(settings.config_text, ReadFlagFile(flags.config, "--config"));
  }
  return settings;
}

}  // namespace tuneprof

#include "pipeline/rank_map.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "base/sanitized_allocator.h"

// glibc's malloc_trim walks glibc's own arenas; under AddressSanitizer, which replaces malloc, they
// may never have been set up, and the call crashed (a SEGV in mtrim on a worker's return).
#if defined(__GLIBC__) && !defined(TUNEPROF_SANITIZED_ALLOCATOR)
#define TUNEPROF_TRIM_MALLOC 1
#include <malloc.h>
#endif

#include "importers/ascend/ascend_layout.h"
#include "importers/import.h"
#include "io/trace_files.h"

namespace tuneprof {

void ForEachOnAllCores(size_t n, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) work(i);
  };
  const size_t workers = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), n);
  std::vector<std::thread> threads;
  for (size_t t = 1; t < workers; ++t) {
    // A thread the system will not start (a process or container limit) leaves its share to the others.
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error&) {
      break;
    }
  }
  worker();
  for (std::thread& thread : threads) thread.join();
}

bool HoldsNothingToMeasure(const Trace& trace) {
  return trace.events().size() == 0 && trace.memory_events().empty() && trace.counter_samples().empty() &&
         trace.reported_step_times().empty() && !trace.kernel_details().present && trace.communication().ops.empty() &&
         trace.npu_memory_records().empty();
}

std::string EmptyTimelineCause(const std::string& file, const Trace& trace) {
  const uint64_t entries = trace.metadata().entry_count;
  return file + ": no events on the timeline: " +
         (entries == 0   ? std::string("the trace holds no entries")
          : entries == 1 ? std::string("its one entry is no event with a time")
                         : "none of its " + std::to_string(entries) +
                               " entries is an event with a time (metadata such as process and thread names)") +
         "; capture a trace while the profiler's schedule is active (`tuneprof info` lists what it holds)";
}

Status RefuseEmptyTimeline(const std::string& file, const std::vector<Trace>& traces) {
  if (traces.empty() || !std::all_of(traces.begin(), traces.end(), HoldsNothingToMeasure)) return Status();
  return Status(StatusCode::kInvalidInput, EmptyTimelineCause(file, traces.front()));
}

void MapFileRanks(const std::string& file, bool with_breakdown, MappedFileStatus* status,
                  const std::function<void(const Trace&, RankBreakdown)>& each) {
  [[maybe_unused]] uint64_t content_bytes = 0, events = 0;  // read only where malloc is trimmed
  {
    auto traces = ImportFileRanks(file);
    if (!traces.ok()) {
      status->status = traces.status();
      return;
    }
    // Only the commands that measure steps refuse it; `info`, an inventory, still describes the file.
    if (with_breakdown) status->status = RefuseEmptyTimeline(file, *traces);
    if (!status->status.ok()) return;
    for (const Trace& trace : *traces) {
      content_bytes += trace.metadata().content_bytes;
      events += trace.events().size();
      std::vector<IdentifiedWarning> ids;
      std::vector<std::string> warnings = TraceWarnings(trace, std::nullopt, &ids);
      AppendWarningIds(ids, status->warnings.size(), &status->warning_ids);
      status->warnings.insert(status->warnings.end(), warnings.begin(), warnings.end());
      RankBreakdown breakdown;
      if (with_breakdown) {
        breakdown = ComputeTimeBreakdown(trace);
        status->breakdown_warnings.push_back(
            RankLines{trace.metadata().path, breakdown.warnings, breakdown.warning_ids});
      }
      status->rank_ids.push_back(trace.metadata().rank);
      each(trace, std::move(breakdown));
    }
  }  // the traces are freed here
#ifdef TUNEPROF_TRIM_MALLOC
  // glibc keeps freed pages of the worker arenas resident; hand them back so that RSS follows live data.
  // Only after a large file (its text, or its events where the text is several files, as in an Ascend
  // rank directory): a trim walks every arena, and after each of 10,000 tiny ranks it tripled the run's
  // time for pages that small traces never held.
  constexpr uint64_t kTrimAfterBytes = 64 << 20;
  constexpr uint64_t kTrimAfterEvents = 250'000;
  if (content_bytes >= kTrimAfterBytes || events >= kTrimAfterEvents) malloc_trim(0);
#endif
}

void ReleaseFreedMemory() {
#ifdef TUNEPROF_TRIM_MALLOC
  malloc_trim(0);
#endif
}

namespace {

// Whether two --hardware values name one chip: as typed, or as the run's profiles resolve them ("h100
// sxm" is "H100 SXM").
bool SameChip(const std::string& made, const SummaryInput& run) {
  if (made == run.settings.hardware) return true;
  if (made.empty() || run.settings.hardware.empty() || run.profiles == nullptr) return false;
  const HardwareProfile* chip = run.profiles->FindByName(made);
  return chip != nullptr && chip == run.profiles->FindByName(run.settings.hardware);
}

// How the flags a summary was made with differ from the run's, in words ("" when they do not).
std::string SettingsDiffer(const SummarySettings& made, const SummaryInput& run) {
  if (!SameChip(made.hardware, run)) {
    const std::string ours = run.settings.hardware.empty() ? "none" : "--hardware \"" + run.settings.hardware + '"';
    return (made.hardware.empty() ? "no --hardware" : "--hardware \"" + made.hardware + '"') + " where this run has " +
           ours;
  }
  if (made.hardware_file_text != run.settings.hardware_file_text) {
    if (made.hardware_file_text.empty()) return "the built-in chips where this run has a --hardware-file";
    return run.settings.hardware_file_text.empty() ? "a --hardware-file where this run has the built-in chips"
                                                   : "a --hardware-file other than this run's";
  }
  if (run.config_matters && made.config_text != run.settings.config_text) {
    if (made.config_text.empty()) return "the default thresholds where this run has a --config";
    return run.settings.config_text.empty() ? "a --config where this run has the default thresholds"
                                            : "a --config other than this run's (compared byte for byte)";
  }
  return "";
}

}  // namespace

Result<SummaryInput> ReadingReportParts(std::string command, const std::string& hardware,
                                        const std::string& hardware_file, const HardwareProfiles* profiles) {
  SummaryInput input;
  input.accepted = true;
  input.command = std::move(command);
  TP_ASSIGN_OR_RETURN(input.settings, SummarySettingsOf(AnalysisFlags{"", hardware, hardware_file}));
  input.config_matters = false;
  input.report_detail = true;
  input.profiles = profiles;
  return input;
}

void MapSummaryFile(const std::string& file, const SummaryInput& input, MappedFileStatus* status,
                    const std::function<void(RankSummary, int64_t)>& each) {
  if (!input.accepted) {
    status->status = SummaryRefused(file, input.command);
    return;
  }
  auto summary = ReadSummaryFile(file, input.profiles);
  if (!summary.ok()) {
    status->status = summary.status();
    return;
  }
  if (input.report_detail && summary->version < 2) {
    status->status = Status(StatusCode::kUsage, file + ": summary format version " + std::to_string(summary->version) +
                                                    " holds nothing " + input.command +
                                                    " reads (from version 2 on); summarize it again");
    return;
  }
  const std::string differs = SettingsDiffer(summary->settings, input);
  if (!differs.empty()) {
    status->status = Status(StatusCode::kUsage,
                            file + ": summarized with " + differs + "; summarize it again with this run's flags");
    return;
  }
  if (input.report_detail && !summary->unknown_chip.empty()) {
    status->status = InvalidInput(file + ": names the chip \"" + summary->unknown_chip +
                                  "\", which this build's hardware profiles lack; summarize it again");
    return;
  }
  if (input.compute_units) {
    for (const RankSummary& rank : summary->ranks) {
      if (rank.report == nullptr || rank.report->compute == nullptr) {
        status->status = InvalidInput(file + ": summary holds no compute units, which " + input.command +
                                      " reads; summarize it again");
        return;
      }
    }
  }
  status->warnings = std::move(summary->warnings);
  status->warning_ids = std::move(summary->warning_ids);
  for (size_t k = 0; k < summary->ranks.size(); ++k) {
    RankSummary& rank = summary->ranks[k];
    status->breakdown_warnings.push_back(
        RankLines{rank.advice.advice.path, std::move(rank.breakdown_warnings), std::move(rank.breakdown_warning_ids)});
    status->rank_ids.push_back(summary->ranks[k].comm.rank);
    if (!input.report_detail) summary->ranks[k].report.reset();
    each(std::move(summary->ranks[k]), summary->starts[k]);
  }
}

namespace {

MapSharing* active_sharing = nullptr;

}  // namespace

void SetMapSharing(MapSharing* sharing) { active_sharing = sharing; }
MapSharing* ActiveMapSharing() { return active_sharing; }

namespace {

// What the last listing on this thread left out or read once (ListRunFiles), said with the map's warnings
// by CollectMapWarnings: a command lists its run and collects its warnings on one thread.
thread_local std::vector<std::string> listing_notes;

}  // namespace

Result<std::vector<std::string>> ListRunFiles(const std::vector<std::string>& paths, const Status& ready) {
  listing_notes.clear();
  std::vector<Result<std::vector<std::string>>> listings;
  for (size_t p = 0; p < paths.size() && ready.ok(); ++p) {
    listings.push_back(ListInputFiles(paths[p], &listing_notes));
    if (active_sharing == nullptr && !listings.back().ok()) return listings.back().status();
  }
  if (active_sharing != nullptr) return active_sharing->ShareFileList(listings, ready);
  TP_RETURN_IF_ERROR(ready);
  std::vector<std::string> files;
  for (Result<std::vector<std::string>>& listed : listings) {
    files.insert(files.end(), listed->begin(), listed->end());
  }
  return KeepEachFileOnce(files, &listing_notes);
}

Status ExchangeMappedFiles(MapSharing* sharing, std::vector<MappedFileRecord> mine,
                           std::vector<MappedFileRecord>* records) {
  TP_ASSIGN_OR_RETURN(const std::vector<std::string> payloads, sharing->Gather(EncodeMappedFiles(mine)));
  for (size_t p = 0; p < payloads.size(); ++p) {
    TP_ASSIGN_OR_RETURN(std::vector<MappedFileRecord> received,
                        DecodeMappedFiles(payloads[p], "process " + std::to_string(p)));
    std::move(received.begin(), received.end(), std::back_inserter(*records));
  }
  return Status();
}

namespace {

// A trace and the summary made from it (named as `summarize` is shown to name them: the trace's name
// and .tps) in one run are one rank read twice: said, not guessed away (the summary may be stale).
void WarnTracesGivenTwice(const std::vector<std::string>& files, std::vector<std::string>* lines) {
  const std::set<std::string_view> names(files.begin(), files.end());
  for (const std::string& file : files) {
    if (!IsSummaryPath(file)) continue;
    const std::string_view trace = std::string_view(file).substr(0, file.size() - kSummaryExtension.size());
    if (names.contains(trace)) {
      lines->push_back(file + ": the summary of " + std::string(trace) +
                       ", which this run reads too: its ranks are counted twice; keep summaries apart from traces");
    }
  }
}

// A rank number that several files carry: each is analysed as a rank of its own, so the run's figures
// count that rank as often (a file given twice, two runs mixed). Files without a rank number are left out:
// their "no rank" warning already says each is taken as rank 0.
void WarnRanksInSeveralFiles(const std::vector<std::string>& files, const std::vector<MappedFileStatus*>& statuses,
                             std::vector<std::string>* lines) {
  std::map<int64_t, std::vector<size_t>> files_of;  // rank -> files, in the run's order
  for (size_t i = 0; i < statuses.size(); ++i) {
    const MappedFileStatus& file = *statuses[i];
    if (!file.status.ok() || HasWarning(file.warning_ids, WarningId::kNoRank)) continue;
    for (const int64_t rank : file.rank_ids) {
      std::vector<size_t>& holders = files_of[rank];
      if (holders.empty() || holders.back() != i) holders.push_back(i);
    }
  }
  constexpr size_t kNamed = 5;  // a run of thousands of repeated ranks says so in a few lines
  size_t repeated = 0;
  for (const auto& [rank, holders] : files_of) {
    if (holders.size() < 2) continue;
    const std::string& first = files[holders[0]];
    const std::string& again = files[holders[1]];
    if (holders.size() == 2 && again == first + std::string(kSummaryExtension)) continue;  // said above
    if (++repeated > kNamed) continue;
    lines->push_back(again + ": rank " + std::to_string(rank) + " again (also in " + first +
                     "): each file is analysed as a rank of its own; give each rank once");
  }
  if (repeated > kNamed) {
    lines->push_back(std::to_string(repeated - kNamed) + " more rank numbers are carried by several files");
  }
}

// A file found inside a directory that names no rank, beside files of one run whose ranks each have a
// number (a collection of test data, a heat map or a metadata export kept with the ranks): taken as "rank 0"
// it would add a second rank 0. It is left out with a warning; one named on the command line stays, and so
// does every file where the numbered ranks repeat (several runs side by side: which is which is unknown).
void LeaveOutUnnumberedBesideNumbered(const std::vector<std::string>& paths, const std::vector<std::string>& files,
                                      const std::vector<MappedFileStatus*>& statuses, std::vector<std::string>* lines) {
  const auto unnumbered = [](const MappedFileStatus& file) { return HasWarning(file.warning_ids, WarningId::kNoRank); };
  std::set<int64_t> numbered;
  for (const MappedFileStatus* file : statuses) {
    if (!file->status.ok() || unnumbered(*file)) continue;
    for (const int64_t rank : file->rank_ids) {
      if (!numbered.insert(rank).second) return;  // a rank number twice: not one run
    }
  }
  if (numbered.empty()) return;
  constexpr size_t kNamed = 5;
  size_t left_out = 0;
  for (size_t i = 0; i < statuses.size(); ++i) {
    MappedFileStatus& file = *statuses[i];
    if (!file.status.ok() || file.rank_ids.empty() || !unnumbered(file)) continue;
    if (std::find(paths.begin(), paths.end(), files[i]) != paths.end()) continue;
    file.left_out = true;
    file.rank_ids.clear();
    file.warnings.clear();
    file.warning_ids.clear();
    file.breakdown_warnings.clear();
    if (++left_out <= kNamed) {
      lines->push_back(files[i] + ": names no rank (distributedInfo.rank or its path), beside " +
                       std::to_string(numbered.size()) +
                       " ranks that do: not a rank of this run, left out (give it on its own to read it)");
    }
  }
  if (left_out > kNamed) {
    lines->push_back(std::to_string(left_out - kNamed) + " more files that name no rank left out the same way");
  }
}

// A rank without a timeline is said once across ranks by its breakdown, which names what is unknown and
// how to export it: its importer's own line saying the timeline file is missing would repeat it per rank.
void DropTimelineLinesSaidByBreakdown(MappedFileStatus* file) {
  const bool said =
      std::any_of(file->breakdown_warnings.begin(), file->breakdown_warnings.end(),
                  [](const RankLines& rank) { return HasWarning(rank.ids, WarningId::kNoDeviceTimeline); });
  if (said) DropWarningLines(&file->warnings, &file->warning_ids, WarningId::kMissingTimeline);
}

// The rank directory a missing-timeline line names ("TIMELINE: missing; no timeline for DIR (how to
// export it)"), else `file`: a summary file holds the lines of all the ranks it was made from.
std::string MissingTimelineRank(const std::string& line, const std::string& file) {
  const size_t at = line.find(kMissingTimelineWarning);
  if (at == std::string::npos) return file;
  std::string_view dir = std::string_view(line).substr(at + kMissingTimelineWarning.size());
  dir = dir.substr(0, dir.find(" ("));
  return dir.empty() ? file : std::string(dir);
}

// A rank directory's missing timeline as its importer says it (where no breakdown says it instead: info,
// memory) is said in full for the first such rank only; the others are counted into one line after the
// files' warnings, so that a run of a thousand such ranks says it in two lines, as the breakdown's does.
// The ranks are counted line by line: a trace file is one rank, a summary file holds the lines of many.
class MissingTimelineFold {
 public:
  void Take(const std::string& file, MappedFileStatus* status) {
    const std::vector<size_t> lines = WarningLinesWithId(status->warning_ids, WarningId::kMissingTimeline);
    size_t kept = 0;
    for (size_t line : lines) {
      if (line >= status->warnings.size()) continue;
      const std::string rank = MissingTimelineRank(status->warnings[line], file);
      if (first_.empty()) {
        first_ = rank;
        kept = 1;
      } else if (others_++ == 0) {
        second_ = rank;
      }
    }
    if (!lines.empty()) DropWarningLines(&status->warnings, &status->warning_ids, WarningId::kMissingTimeline, kept);
  }
  void Emit(std::vector<std::string>* warnings) const {
    if (others_ == 0) return;
    const std::string more = others_ == 1   ? std::string()
                             : others_ == 2 ? " and 1 more rank"
                                            : " and " + std::to_string(others_ - 1) + " more ranks";
    EmitWarnings({second_ + more + ": no timeline either (its timeline file is missing, as for " + first_ + ")"},
                 warnings);
  }

 private:
  std::string first_, second_;
  uint64_t others_ = 0;
};

}  // namespace

Status CollectMapWarnings(const std::vector<std::string>& paths, const std::vector<std::string>& files,
                          const std::vector<MappedFileStatus*>& statuses, std::vector<std::string>* warnings,
                          WarningLines* file_lines) {
  UnreadableFiles skipped;
  size_t rank_count = 0;
  std::vector<std::string> left_out;
  LeaveOutUnnumberedBesideNumbered(paths, files, statuses, &left_out);
  for (size_t i = 0; i < statuses.size(); ++i) {
    const Status& status = statuses[i]->status;
    if (status.code() == StatusCode::kUsage) return status;
    if (!status.ok()) skipped.Add(files[i], status);
    rank_count += statuses[i]->rank_ids.size();
  }
  if (rank_count == 0 && !skipped.empty()) return skipped.NothingLeft(paths);
  std::vector<std::string> lines = std::exchange(listing_notes, {});
  skipped.AppendWarnings(&lines);
  lines.insert(lines.end(), left_out.begin(), left_out.end());
  WarnTracesGivenTwice(files, &lines);
  WarnRanksInSeveralFiles(files, statuses, &lines);
  if (file_lines != nullptr) {
    // Kept whole: whether a rank number is missing matters only once the summaries of a run meet.
    file_lines->lines = lines;
    for (const MappedFileStatus* file : statuses) {
      if (!file->status.ok()) continue;
      AppendWarningIds(file->warning_ids, file_lines->lines.size(), &file_lines->ids);
      file_lines->lines.insert(file_lines->lines.end(), file->warnings.begin(), file->warnings.end());
    }
  }
  EmitWarnings(lines, warnings);
  RankWarnings breakdown_warnings;
  MissingTimelineFold missing_timelines;
  for (size_t i = 0; i < statuses.size(); ++i) {
    MappedFileStatus* file = statuses[i];
    if (!file->status.ok()) continue;
    // A lone rank needs no rank number: said only when there are ranks to tell apart.
    if (rank_count == 1) {
      DropWarningLines(&file->warnings, &file->warning_ids, WarningId::kNoRank);
    }
    DropTimelineLinesSaidByBreakdown(file);
    missing_timelines.Take(files[i], file);
    EmitWarnings(file->warnings, warnings);
    for (const RankLines& rank : file->breakdown_warnings) breakdown_warnings.Add(rank.path, rank.lines);
  }
  missing_timelines.Emit(warnings);
  breakdown_warnings.Emit(warnings);
  return Status();
}

}  // namespace tuneprof

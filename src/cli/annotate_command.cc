#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/errors.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/memory/memory_timeline.h"
#include "importers/import.h"
#include "pipeline/comm_run.h"
#include "pipeline/hardware_options.h"
#include "pipeline/run_analyses.h"
#include "base/text_escape.h"
#include "importers/chrome_json/chrome_trace_importer.h"
#include "io/byte_source.h"
#include "io/memory_source.h"
#include "io/output_file.h"
#include "report/trace/annotated_trace.h"
#include "report/trace/merged_trace.h"

namespace tuneprof::cli {
namespace {

// The decompressed text the importer read, whole: annotations are spliced into it.
Result<std::string> ReadContent(const std::string& path) {
  TP_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
  std::string text;
  std::string chunk(1 << 20, '\0');
  while (true) {
    TP_ASSIGN_OR_RETURN(size_t n, source->Read(chunk.data(), chunk.size()));
    if (n == 0) break;
    text.append(chunk.data(), n);
  }
  return text;
}

// `.gz` names are written gzip-compressed, anything else as plain JSON; whole or not at all.
Status WriteMaybeGzip(const std::string& path, std::string_view text) {
  return path.ends_with(".gz") ? WriteGzipFileAtomically(path, text) : WriteFileAtomically(path, text);
}

// The trace as imported from `text`, the file's content with any previous diagnosis taken out: the
// analyses must not count tuneprof's own earlier tracks as the workload's.
Result<std::vector<Trace>> ImportText(const std::string& path, const std::string& text) {
  MemorySource source(path, text);
  TP_ASSIGN_OR_RETURN(Trace trace, ImportChromeTrace(&source));
  std::vector<Trace> traces;
  traces.push_back(std::move(trace));
  return traces;
}

}  // namespace

namespace {

// The pipeline's path per step, drawn over the window of the step's longest rank, which the path is as
// long as (aligned: each rank's correction taken out).
MergedRankEvents PipelinePathForMerge(const PipelineAnalysis& pipeline, const std::vector<RankBreakdown>& ranks,
                                      const std::vector<int64_t>& corrections, int64_t pid, int64_t origin) {
  const std::vector<PipelinePathStep> path = PipelineCriticalPath(pipeline, ranks);
  std::vector<PipelineStepWindow> windows;
  for (const PipelinePathStep& step : path) {
    for (size_t r = 0; r < ranks.size() && step.step; ++r) {
      if (ranks[r].rank != step.longest_rank) continue;
      for (const StepBreakdown& s : ranks[r].steps) {
        if (s.step != step.step || s.device_start_ns == kNoId || s.device_end_ns == kNoId) continue;
        windows.push_back(
            PipelineStepWindow{*step.step, s.device_start_ns - corrections[r], s.device_end_ns - corrections[r]});
      }
      break;
    }
  }
  return RenderPipelinePathForMerge(path, windows, pid, origin);
}

// Where each rank goes on the merged timeline: its clock correction, the run's origin on the aligned
// clock, and which ranks each file holds (in the order its import gives them).
struct MergeLayout {
  std::vector<int64_t> corrections;
  int64_t origin = 0;
  std::vector<std::vector<size_t>> ranks_of_file;
};

MergeLayout LayOutMerge(const CommRun& run) {
  const size_t ranks = run.analysis.ranks.size();
  const std::vector<RankClockOffset>& clocks = run.analysis.cross_rank.clocks.ranks;
  MergeLayout layout;
  layout.corrections.assign(ranks, 0);
  layout.ranks_of_file.resize(run.files.size());
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (size_t r = 0; r < ranks; ++r) {
    if (r < clocks.size()) layout.corrections[r] = clocks[r].correction_ns();
    const CommRankSource& source = run.sources[r];
    if (source.start_ns != kNoId) origin = std::min(origin, source.start_ns - layout.corrections[r]);
    layout.ranks_of_file[source.file].push_back(r);
  }
  layout.origin = origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
  return layout;
}

// What the merged file holds so far, and what the pipeline's path needs of the ranks written.
struct MergeProgress {
  int64_t pid = 1;
  int64_t flow = 1;
  uint64_t events = 0;
  uint64_t diagnosis = 0;
  bool first = true;                  // no event written yet: the next one needs no separator
  std::vector<RankBreakdown> staged;  // pipeline runs: each rank's steps, for the pipeline's path
  std::vector<int64_t> staged_corrections;
};

// The hardware the ranks' memory analyses read: the profiles, and the one --hardware forces, if any.
struct MergeHardware {
  HardwareProfiles profiles;
  const HardwareProfile* forced = nullptr;
};

// Writes `elements` (one or more events of the array) after those the file holds, separated from them:
// a rank without a timeline renders nothing, and must leave no separator behind.
Status AppendElements(std::string_view elements, StreamingOutputFile* file, MergeProgress* progress) {
  if (elements.empty()) return Status();
  if (!progress->first) TP_RETURN_IF_ERROR(file->Write(",\n"));
  progress->first = false;
  return file->Write(elements);
}

// Writes rank `r`'s events, streamed as they are made, then its diagnosis.
Status WriteMergedRank(const Trace& trace, size_t r, const CommRun& run, const MergeLayout& layout,
                       const MergeHardware& hardware, StreamingOutputFile* file, MergeProgress* progress) {
  const int64_t rank = run.analysis.ranks[r].rank;
  const int64_t origin = layout.origin + layout.corrections[r];
  // The rank's first piece opens with an event, the later ones with their own separator.
  bool opened = false;
  const MergedTextSink sink = [&](std::string_view piece) {
    if (opened) return file->Write(piece);
    opened = !piece.empty();
    return AppendElements(piece, file, progress);
  };
  TP_ASSIGN_OR_RETURN(
      const MergedRankEvents own,
      RenderRankForMerge(trace, MergedRankPlacement{rank, progress->pid, origin, progress->flow}, sink));
  const AnnotationPlacement where{own.next_pid, origin, fmt::format("rank {}: tuneprof diagnosis", rank)};
  RankBreakdown breakdown = ComputeTimeBreakdown(trace);
  if (run.analysis.cross_rank.pipeline) {
    progress->staged.push_back(breakdown);
    progress->staged.back().rank = rank;
    progress->staged_corrections.push_back(layout.corrections[r]);
    // The step labels tell the step as profile does: the GPU p2p wait is the bubble, not exposed.
    if (const RankPipelineWait* wait = GpuPipelineWaitOf(*run.analysis.cross_rank.pipeline, rank)) {
      AddGpuPipelineBubble(*wait, &breakdown);
    }
  }
  const AnnotationEvents added = BuildAnnotationEvents(
      trace, breakdown, AnalyzeMemory(trace, SelectHardware(trace, hardware.profiles, hardware.forced)),
      AdvisorResult(), &where);
  TP_RETURN_IF_ERROR(AppendElements(added.json, file, progress));
  progress->events += own.events;
  progress->diagnosis += added.total();
  progress->pid = own.next_pid + 1;
  progress->flow = own.next_flow_id;
  return Status();
}

// The second pass: one file at a time, each of its ranks written and its model freed before the next file.
Status WriteMergedRanks(const CommRun& run, const MergeLayout& layout, const MergeHardware& hardware,
                        StreamingOutputFile* file, MergeProgress* progress) {
  for (size_t f = 0; f < run.files.size(); ++f) {
    const std::vector<size_t>& ranks = layout.ranks_of_file[f];
    if (ranks.empty()) continue;  // skipped, with its warning, by the first pass
    TP_ASSIGN_OR_RETURN(const std::vector<Trace> traces, ImportFileRanks(run.files[f]));
    for (size_t k = 0; k < traces.size() && k < ranks.size(); ++k) {
      TP_RETURN_IF_ERROR(WriteMergedRank(traces[k], ranks[k], run, layout, hardware, file, progress));
    }
  }
  return Status();
}

// After the ranks: the run's critical path, the pipeline's path where the run is a pipeline, the tail.
Status WriteMergedPaths(const CommRun& run, const MergeLayout& layout, StreamingOutputFile* file,
                        MergeProgress* progress) {
  const MergedRankEvents path =
      RenderCriticalPathForMerge(run.analysis.cross_rank.critical_links, progress->pid, layout.origin);
  TP_RETURN_IF_ERROR(AppendElements(path.json, file, progress));
  progress->events += path.events;
  if (run.analysis.cross_rank.pipeline) {
    const MergedRankEvents stages = PipelinePathForMerge(*run.analysis.cross_rank.pipeline, progress->staged,
                                                         progress->staged_corrections, path.next_pid, layout.origin);
    TP_RETURN_IF_ERROR(AppendElements(stages.json, file, progress));
    progress->events += stages.events;
  }
  return file->Write(MergedTraceTail(run.analysis.ranks.size(), layout.origin, layout.corrections));
}

// A run none of whose ranks has an event (torch_npu ranks without trace_view.json, msprof-analyze's
// cluster output) has nothing to lay the diagnosis on: a merged file of track names alone would read as
// a timeline that is empty, so it is refused.
Status RequireSomeTimeline(const std::vector<std::string>& paths, const CommRun& run) {
  const bool none = std::all_of(run.sources.begin(), run.sources.end(),
                                [](const CommRankSource& source) { return source.start_ns == kNoId; });
  if (!none) return Status();
  std::string named;
  for (const std::string& path : paths) named += (named.empty() ? "" : ", ") + path;
  return InvalidInput(fmt::format(
      "{}: no rank has a timeline to annotate ({} rank{} read from the profiler's step tables only, no trace "
      "events); keep each rank's trace_view.json (torch_npu ExportType.Text) or its ascend_pytorch_profiler_*.db",
      named, run.sources.size(), run.sources.size() == 1 ? "" : "s"));
}

// The merged timeline of a run (report/trace/merged_trace.h): a first pass reads every rank's
// communication on all cores for the clock offsets (bounded memory, as `comm`), a second writes one
// rank at a time, with its diagnosis, into the output as it goes.
int RunMergedAnnotate(const AnnotateOptions& options) {
  const std::vector<std::string> inputs = InputFiles(options.merge);
  const Status clash = CheckOutputIsNotInput(options.output, inputs);
  if (!clash.ok()) return ReportError(clash);
  if (Status refused = RefuseSummaries(options.merge, inputs, "annotate --merge"); !refused.ok()) {
    return ReportError(refused);
  }
  MergeHardware hardware;
  auto profiles = LoadHardwareProfiles(options.analysis.hardware_file);
  if (!profiles.ok()) return ReportError(profiles.status());
  hardware.profiles = std::move(*profiles);
  auto forced = ForcedHardware(hardware.profiles, options.analysis.hardware);
  if (!forced.ok()) return ReportError(forced.status());
  hardware.forced = *forced;
  CommRunOptions comm_options;
  comm_options.hardware = options.analysis.hardware;
  comm_options.hardware_file = options.analysis.hardware_file;
  comm_options.command = "annotate --merge";
  auto run = AnalyzeRunCommunication(options.merge, comm_options);
  if (!run.ok()) return ReportError(run.status());
  if (Status timeline = RequireSomeTimeline(options.merge, *run); !timeline.ok()) return ReportError(timeline);
  const MergeLayout layout = LayOutMerge(*run);
  auto out = StreamingOutputFile::Open(options.output);
  if (!out.ok()) return ReportError(out.status());
  StreamingOutputFile& file = **out;
  MergeProgress progress;
  Status written = file.Write(MergedTraceHead());
  if (written.ok()) written = WriteMergedRanks(*run, layout, hardware, &file, &progress);
  if (written.ok()) written = WriteMergedPaths(*run, layout, &file, &progress);
  if (written.ok()) written = file.Commit();
  if (!written.ok()) return ReportError(written);
  fmt::print(stderr, "tuneprof: {}: {} ranks on one timeline ({} events, {} diagnosis events; clocks {}), {:.1f} MB\n",
             EscapeText(options.output), run->analysis.ranks.size(), progress.events, progress.diagnosis,
             run->analysis.cross_rank.clocks.applied ? "aligned" : "already agreed",
             static_cast<double>(file.bytes_written()) / 1e6);
  return kExitOk;
}

// The run's paths: those after --merge, or, when --merge came with none (`--merge -o FILE DIR`), the
// positional ones. A path beside --merge's own stays an error: one trace or a run, not both.
AnnotateOptions GatherPaths(const AnnotateOptions& given) {
  AnnotateOptions options = given;
  const auto drop_empty = [](std::vector<std::string>* paths) {
    std::erase_if(*paths, [](const std::string& path) { return path.empty(); });
  };
  drop_empty(&options.merge);
  drop_empty(&options.paths);
  if (options.merge_run && options.merge.empty()) std::swap(options.merge, options.paths);
  if (!options.merge_run && options.paths.size() == 1) options.path = options.paths.front();
  return options;
}

// The pieces the content is read in when it is not held.
constexpr size_t kPieceBytes = 1 << 20;

// Reads `path`'s content piece by piece: true when it holds the opening of a block of diagnosis that an
// earlier annotate wrote. The whole content is read either way, so that a damaged file is reported here,
// before any analysis, as when the content was held.
Result<bool> HoldsAnnotations(const std::string& path) {
  TP_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
  const std::string_view opening = AnnotationBlockOpening();
  const std::boyer_moore_horspool_searcher searcher(opening.begin(), opening.end());
  std::string piece(kPieceBytes, '\0');
  std::string seam;  // the last opening.size() - 1 bytes before the piece, then the piece's first ones
  bool found = false;
  while (true) {
    TP_ASSIGN_OR_RETURN(const size_t n, source->Read(piece.data(), piece.size()));
    if (n == 0) return found;
    if (found) continue;
    const std::string_view read(piece.data(), n);
    seam.append(read.substr(0, opening.size() - 1));
    found = std::search(seam.begin(), seam.end(), searcher) != seam.end() ||
            std::search(read.begin(), read.end(), searcher) != read.end();
    if (read.size() >= opening.size() - 1) seam.assign(read.substr(read.size() - (opening.size() - 1)));
    if (seam.size() > opening.size() - 1) seam.erase(0, seam.size() - (opening.size() - 1));
  }
}

// Copies `source` into `out` with `added` spliced in after its first `end` bytes, which must end with the
// '}' of the trace's last event (else `mismatch`).
Status StreamSplice(ByteSource* source, uint64_t end, std::string_view added, const Status& mismatch,
                    StreamingOutputFile* out) {
  std::string piece(kPieceBytes, '\0');
  uint64_t at = 0;
  while (true) {
    TP_ASSIGN_OR_RETURN(const size_t n, source->Read(piece.data(), piece.size()));
    if (n == 0) break;
    std::string_view read(piece.data(), n);
    if (at < end && at + n >= end) {
      const size_t head = static_cast<size_t>(end - at);
      if (read[head - 1] != '}') return mismatch;
      TP_RETURN_IF_ERROR(out->Write(read.substr(0, head)));
      if (!added.empty()) TP_RETURN_IF_ERROR(out->Write(",\n"));
      if (!added.empty()) TP_RETURN_IF_ERROR(out->Write(added));
      read.remove_prefix(head);
    }
    at += n;
    TP_RETURN_IF_ERROR(out->Write(read));
  }
  return at < end ? mismatch : Status();
}

Status NotOneTrace(const std::string& path) {
  return Status(StatusCode::kUsage, path + ": annotate needs one trace file");
}

void ReportAdded(const std::string& output, const AnnotationEvents& events, uint64_t replaced) {
  const std::string previous =
      replaced == 0 ? "" : fmt::format("; the {} events of the diagnosis already in it were replaced", replaced);
  fmt::print(stderr, "tuneprof: {}: {} events added ({} slices, {} instants, {} counter samples, {} names){}\n",
             EscapeText(output), events.total(), events.slices, events.instants, events.counters, events.metadata,
             previous);
}

// Annotates a trace whose content may hold an earlier diagnosis: the content is held, the diagnosis taken
// out of it, and the trace imported from what is left.
int AnnotateHeldText(const AnnotateOptions& options) {
  auto content = ReadContent(options.path);
  if (!content.ok()) return ReportError(content.status());
  std::string text = std::move(*content);
  const uint64_t replaced = RemoveAnnotations(&text);
  auto run = replaced == 0 ? AnalyzeRun({options.path}, options.analysis)
                           : AnalyzeRun(
                                 [&]() -> Result<LoadedTraces> {
                                   LoadedTraces loaded;
                                   TP_ASSIGN_OR_RETURN(loaded.traces, ImportText(options.path, text));
                                   for (const Trace& trace : loaded.traces)
                                     EmitWarnings(TraceWarnings(trace), &loaded.warnings);
                                   return loaded;
                                 },
                                 options.analysis);
  if (!run.ok()) return ReportError(run.status());
  if (run->traces.size() != 1) return ReportError(NotOneTrace(options.path));
  const AnnotationEvents events =
      BuildAnnotationEvents(run->traces[0], run->breakdowns[0], run->memory[0], run->advice);
  auto annotated = SpliceAnnotations(text, run->traces[0], events);
  if (!annotated.ok()) return ReportError(annotated.status());
  const Status written = WriteMaybeGzip(options.output, *annotated);
  if (!written.ok()) return ReportError(written);
  ReportAdded(options.output, events, replaced);
  return kExitOk;
}

// Annotates a trace with no earlier diagnosis in it without holding its content: the trace is analysed
// as `analyze` does, its analyses freed, and the content read again piece by piece into the output with
// the diagnosis spliced in.
int AnnotateStreamed(const AnnotateOptions& options) {
  auto run = AnalyzeRun({options.path}, options.analysis);
  if (!run.ok()) return ReportError(run.status());
  if (run->traces.size() != 1) return ReportError(NotOneTrace(options.path));
  AnnotationEvents events = BuildAnnotationEvents(run->traces[0], run->breakdowns[0], run->memory[0], run->advice);
  Result<uint64_t> end = AnnotationSpliceOffset(run->traces[0]);
  if (!end.ok()) return ReportError(end.status());
  const Status mismatch = AnnotationSpliceMismatch(run->traces[0]);
  *run = AnalyzedRun();
  auto source = OpenByteSource(options.path);
  if (!source.ok()) return ReportError(source.status());
  auto out = StreamingOutputFile::Open(options.output);
  if (!out.ok()) return ReportError(out.status());
  Status written = StreamSplice(source->get(), *end, events.json, mismatch, out->get());
  if (written.ok()) written = (*out)->Commit();
  if (!written.ok()) return ReportError(written);
  ReportAdded(options.output, events, 0);
  return kExitOk;
}

}  // namespace

int RunAnnotate(const AnnotateOptions& given) {
  const AnnotateOptions options = GatherPaths(given);
  if (options.merge_run ? options.merge.empty() || !options.paths.empty() : options.paths.size() != 1) {
    return ReportError(Status(StatusCode::kUsage, "annotate: give one trace file, or --merge PATH... for a whole run"));
  }
  if (options.merge_run) return RunMergedAnnotate(options);
  std::error_code error;
  if (std::filesystem::is_directory(options.path, error)) {
    return ReportError(Status(StatusCode::kUsage, options.path + ": annotate needs one trace file, not a directory"));
  }
  const Status clash = CheckOutputIsNotInput(options.output, {options.path});
  if (!clash.ok()) return ReportError(clash);
  if (Status refused = RefuseSummaries({options.path}, "annotate"); !refused.ok()) return ReportError(refused);
  Result<bool> holds = HoldsAnnotations(options.path);
  if (!holds.ok()) return ReportError(holds.status());
  return *holds ? AnnotateHeldText(options) : AnnotateStreamed(options);
}

}  // namespace tuneprof::cli

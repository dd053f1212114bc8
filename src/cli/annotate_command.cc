#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/errors.h"
#include "pipeline/run_analyses.h"
#include "base/text_escape.h"
#include "importers/chrome_json/chrome_trace_importer.h"
#include "io/byte_source.h"
#include "io/memory_source.h"
#include "io/output_file.h"
#include "report/trace/annotated_trace.h"

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

void AddAnnotateCommand(CLI::App* app, AnnotateOptions* options) {
  CLI::App* annotate =
      app->add_subcommand("annotate",
                          "Write the trace back with tuneprof's diagnosis as tracks (steps, idle gaps, exposed "
                          "communication, memory, findings) for the Perfetto UI");
  annotate->add_option("path", options->path, "one trace file (.json or .json.gz)")->required();
  annotate->add_option("-o,--output", options->output, "the annotated trace to write (.json.gz: gzip)")->required();
  annotate->add_option("--config", options->analysis.config,
                       "advisor thresholds as JSON (schema tuneprof.advisor_config/1)");
  annotate->add_option("--hardware", options->analysis.hardware,
                       "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  annotate->add_option("--hardware-file", options->analysis.hardware_file,
                       "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
}

int RunAnnotate(const AnnotateOptions& options) {
  std::error_code error;
  if (std::filesystem::is_directory(options.path, error)) {
    return ReportError(Status(StatusCode::kUsage, options.path + ": annotate needs one trace file, not a directory"));
  }
  const Status clash = CheckOutputIsNotInput(options.output, {options.path});
  if (!clash.ok()) return ReportError(clash);
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
  if (run->traces.size() != 1) {
    return ReportError(Status(StatusCode::kUsage, options.path + ": annotate needs one trace file"));
  }
  const AnnotationEvents events =
      BuildAnnotationEvents(run->traces[0], run->breakdowns[0], run->memory[0], run->advice);
  auto annotated = SpliceAnnotations(text, run->traces[0], events);
  if (!annotated.ok()) return ReportError(annotated.status());
  const Status written = WriteMaybeGzip(options.output, *annotated);
  if (!written.ok()) return ReportError(written);
  const std::string previous =
      replaced == 0 ? "" : fmt::format("; the {} events of the diagnosis already in it were replaced", replaced);
  fmt::print(stderr, "tuneprof: {}: {} events added ({} slices, {} instants, {} counter samples, {} names){}\n",
             EscapeText(options.output), events.total(), events.slices, events.instants, events.counters,
             events.metadata, previous);
  return kExitOk;
}

}  // namespace tuneprof::cli

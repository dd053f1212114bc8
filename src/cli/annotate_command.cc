#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/hardware_options.h"
#include "cli/run_analyses.h"
#include "io/byte_source.h"
#include "report/annotated_trace.h"

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

// `.gz` names are written gzip-compressed, anything else as plain JSON.
Status WriteMaybeGzip(const std::string& path, std::string_view text) {
  if (!path.ends_with(".gz")) return WriteOutputFile(path, text);
  gzFile file = gzopen(path.c_str(), "wb6");
  bool ok = file != nullptr;
  for (size_t done = 0; ok && done < text.size();) {
    const unsigned part = static_cast<unsigned>(std::min<size_t>(text.size() - done, 1u << 30));
    ok = gzwrite(file, text.data() + done, part) == static_cast<int>(part);
    done += part;
  }
  if (file != nullptr && gzclose(file) != Z_OK) ok = false;
  if (!ok) return Status(StatusCode::kUsage, fmt::format("{}: cannot write the output file", path));
  return Status::Ok();
}

}  // namespace

void AddAnnotateCommand(CLI::App* app, AnnotateOptions* options) {
  CLI::App* annotate = app->add_subcommand(
      "annotate", "Write the trace back with tuneprof's diagnosis as tracks (steps, idle gaps, exposed "
                  "communication, memory, findings) for the Perfetto UI");
  annotate->add_option("path", options->path, "one trace file (.json or .json.gz)")->required();
  annotate->add_option("-o,--output", options->output, "the annotated trace to write (.json.gz: gzip)")->required();
  annotate->add_option("--config", options->config, "advisor thresholds as JSON (schema tuneprof.advisor_config/1)");
  annotate->add_option("--hardware", options->hardware,
                       "measure against this hardware profile (e.g. \"H100 SXM\") instead of detecting the chip");
  annotate->add_option("--hardware-file", options->hardware_file,
                       "read hardware profiles from this JSON file (schema of data/hardware_profiles.json)");
}

int RunAnnotate(const AnnotateOptions& options) {
  std::error_code error;
  if (std::filesystem::is_directory(options.path, error)) {
    fmt::print(stderr, "tuneprof: error: {}: annotate needs one trace file, not a directory\n", options.path);
    return kExitUsage;
  }
  auto run = AnalyzeRun({options.path}, options.config, options.hardware, options.hardware_file);
  if (!run.ok()) return ReportError(run.status());
  if (run->traces.size() != 1) {
    fmt::print(stderr, "tuneprof: error: {}: annotate needs one trace file\n", options.path);
    return kExitUsage;
  }
  auto text = ReadContent(options.path);
  if (!text.ok()) return ReportError(text.status());
  const AnnotationEvents events =
      BuildAnnotationEvents(run->traces[0], run->breakdowns[0], run->memory[0], run->advice);
  auto annotated = SpliceAnnotations(*text, run->traces[0], events);
  if (!annotated.ok()) return ReportError(annotated.status());
  const Status written = WriteMaybeGzip(options.output, *annotated);
  if (!written.ok()) return ReportError(written);
  fmt::print(stderr, "tuneprof: {}: {} events added ({} slices, {} instants, {} counter samples, {} names)\n",
             options.output, events.total(), events.slices, events.instants, events.counters, events.metadata);
  return kExitOk;
}

}  // namespace tuneprof::cli

#include "importers/ascend/ascend_layout.h"

#include <utility>

#include "importers/chrome_json/chrome_trace_importer.h"
#include "importers/common/rank.h"
#include "importers/csv/csv_reader.h"
#include "io/byte_source.h"
#include "model/trace_builder.h"

namespace tuneprof {

namespace fs = std::filesystem;

fs::path NormalDir(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
  return p;
}

RankLayout ResolveLayout(const std::string& dir, std::string_view output_dir) {
  const fs::path p = NormalDir(dir);
  if (p.filename() == output_dir) return RankLayout{p.parent_path(), p};
  return RankLayout{p, p / output_dir};
}

bool IsRegularFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

Trace ImportTimelineOrEmpty(const fs::path& timeline, const std::string& dir, const std::string& missing) {
  std::string problem = missing;
  if (!timeline.empty()) {
    auto source = OpenByteSource(timeline.string());
    if (source.ok()) {
      auto trace = ImportChromeTrace(source->get());
      if (trace.ok()) return std::move(trace).value();
      problem = trace.status().message() + "; no timeline for " + dir;
    } else {
      problem = source.status().message() + "; no timeline for " + dir;
    }
  }
  TraceBuilder builder(dir);
  builder.mutable_metadata()->format = TraceFormat::kTorchNpuTraceView;
  if (timeline.empty()) {
    builder.Warn(WarningId::kMissingTimeline, problem);
  } else {
    builder.Warn(problem);
  }
  SettleRank(builder.mutable_metadata());
  return builder.Finish();
}

void AddFlattenedMetadata(simdjson::dom::element element, const std::string& key, SideTableBuilder* out) {
  simdjson::dom::object object;
  std::string_view text;
  if (element.get_object().get(object) == simdjson::SUCCESS) {
    for (auto field : object) AddFlattenedMetadata(field.value, key + "." + std::string(field.key), out);
  } else if (element.get_string().get(text) == simdjson::SUCCESS) {
    out->AddMetadataEntry(key, std::string(text));
  } else {
    out->AddMetadataEntry(key, simdjson::minify(element));
  }
}

void CountCsvRows(const fs::path& path, const std::string& name, SourceState state, TraceMetadata* meta) {
  auto csv = CsvReader::Open(path.string());
  if (!csv.ok()) return AddInventoryEntry(meta, name, SourceState::kUnreadable, kNoId, csv.status().message());
  int64_t rows = 0;
  for (;;) {
    auto next = csv->Next();
    if (!next.ok()) return AddInventoryEntry(meta, name, SourceState::kUnreadable, kNoId, next.status().message());
    if (!*next) break;
    ++rows;
  }
  AddInventoryEntry(meta, name, state, rows);
}

// torch_npu writes one directory per rank ({worker}_{ts}_ascend_pt/ holding ASCEND_PROFILER_OUTPUT/);
// it is one trace, imported whole, never the loose .json files inside it (profiler_info_*.json...).
bool IsAscendProfilerDirectory(const std::string& dir) {
  std::error_code ec;
  const fs::path p = NormalDir(dir);
  if (!fs::is_directory(p, ec)) return false;
  const std::string name = p.filename().string();
  // msprof writes PROF_{num}_{ts}_{str}/ holding mindstudio_profiler_output/: one rank too.
  return name == "ASCEND_PROFILER_OUTPUT" || name.ends_with("_ascend_pt") ||
         fs::is_directory(p / "ASCEND_PROFILER_OUTPUT", ec) || name.starts_with("PROF_") ||
         name == "mindstudio_profiler_output" || fs::is_directory(p / "mindstudio_profiler_output", ec);
}

bool IsClusterAnalysisDirectory(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / kClusterStepTraceTime, ec);
}

}  // namespace tuneprof

#include "importers/ascend/ascend_layout.h"

#include "importers/csv/csv_reader.h"

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

}  // namespace tuneprof

#include "importers/ascend/ascend_large_tables.h"

#include <algorithm>
#include <system_error>

#include "base/cores.h"
#include "base/status.h"
#include "importers/ascend/ascend_layout.h"
#include "importers/csv/csv_reader.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

// 16 MB of tables: well beyond the rank directories of a cluster run, and the thread's start is nothing
// next to reading them.
constexpr uint64_t kMinBesideBytes = uint64_t{16} << 20;
// The other CSVs worth counting beside: operator_details.csv holds a million rows on a large rank.
constexpr uint64_t kMinCountedBytes = uint64_t{1} << 20;

// Ranks whose tables are being read beside their timeline's import, in this process.
std::atomic<unsigned> g_imports_beside{0};

uint64_t SizeOf(const fs::path& path) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

}  // namespace

LargeTables::LargeTables(const fs::path& output, const std::array<fs::path, kTables>& paths, ReadFn read)
    : paths_(paths), read_(read) {
  uint64_t bytes = 0;
  for (const fs::path& path : paths_) {
    if (IsRegularFile(path)) bytes += SizeOf(path);
  }
  // Only tables large enough to be worth a thread (small ranks keep one thread and their memory as
  // before), and one such rank for each two cores: a run of many ranks already fills the cores.
  const unsigned cores = UsableCores();
  if (bytes < kMinBesideBytes || cores < 2) return;
  if (g_imports_beside.fetch_add(1) >= cores / 2) {
    g_imports_beside.fetch_sub(1);
    return;
  }
  // A thread the system will not start leaves the tables to be read in turn.
  try {
    beside_ = std::thread([this, output] {
      for (int t = 0; t < kTables; ++t) {
        if (!IsRegularFile(paths_[t])) continue;
        SideTableBuilder out(&parts_[t]);
        read_(static_cast<Table>(t), paths_[t], &out, &counts_[t]);
        read_beside_[t] = true;
      }
      CountOtherTables(output);
    });
  } catch (const std::system_error&) {
    g_imports_beside.fetch_sub(1);
  }
}

void LargeTables::Read(Table t, SideTableBuilder* out, CsvRowCounts* counts) {
  Join();
  if (!read_beside_[t]) return read_(t, paths_[t], out, counts);
  out->TakeTablesOf(&parts_[t]);
  counts->insert(counts->end(), counts_[t].begin(), counts_[t].end());
}

void LargeTables::AddOtherCounts(CsvRowCounts* counts) {
  Join();
  counts->insert(counts->end(), others_.begin(), others_.end());
}

// The rows of each CSV of 1 MiB or more beside the tables, counted as the inventory counts them (records
// read); one that does not read is left to the inventory, so that its entry says why.
void LargeTables::CountOtherTables(const fs::path& output) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(output, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() == ".csv" && std::find(paths_.begin(), paths_.end(), path) == paths_.end() &&
        IsRegularFile(path) && SizeOf(path) >= kMinCountedBytes) {
      files.push_back(path);
    }
  }
  for (const fs::path& path : files) {
    auto csv = CsvReader::Open(path.string());
    if (!csv.ok()) continue;
    int64_t rows = 0;
    Result<bool> next = csv->Next();
    for (; next.ok() && *next; next = csv->Next()) ++rows;
    if (next.ok()) others_.emplace_back(path, rows);
  }
}

void LargeTables::Join() {
  if (!beside_.joinable()) return;
  beside_.join();
  g_imports_beside.fetch_sub(1);
}

}  // namespace tuneprof

#pragma once
// The text export's three large tables (kernel_details, memory_record, operator_memory). Where a core is
// spare they are read on a thread of their own while the timeline is imported (the timeline's import
// leaves a core idle while it binds its flows, and reading the tables leaves one idle throughout): each
// into a trace of its own, taken into the rank's trace afterwards, in the read's usual place and order,
// by SideTableBuilder::TakeTablesOf; the thread then counts the rows of the directory's other large CSVs
// for the inventory. Else each table is read into the rank's trace when its turn comes, and the inventory
// counts the others itself.
#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "model/trace.h"
#include "model/trace_builder.h"

namespace tuneprof {

// Rows of the CSVs read whole, which the inventory reports: a table of millions of rows is not read a
// second time to count them.
using CsvRowCounts = std::vector<std::pair<std::filesystem::path, int64_t>>;

class LargeTables {
 public:
  enum Table { kKernelDetails, kMemoryRecord, kOperatorMemory, kTables };
  // Reads `table` at `path` into `out`, adding its rows to `counts` (a missing or malformed file is a
  // warning). Called on the thread beside the import, or in turn.
  using ReadFn = void (*)(Table table, const std::filesystem::path& path, SideTableBuilder* out, CsvRowCounts* counts);

  // `output` is the directory that holds the tables `paths` (one per Table), whose other large CSVs the
  // inventory counts. Starts the thread where a core is spare and the tables are large.
  LargeTables(const std::filesystem::path& output, const std::array<std::filesystem::path, kTables>& paths,
              ReadFn read);
  LargeTables(const LargeTables&) = delete;
  LargeTables& operator=(const LargeTables&) = delete;
  ~LargeTables() { Join(); }

  // Adds table `t` to `out` (and its row count to `counts`), reading it now unless read beside.
  void Read(Table t, SideTableBuilder* out, CsvRowCounts* counts);
  // Adds to `counts` the rows of the other large CSVs of the directory, where they were counted beside.
  void AddOtherCounts(CsvRowCounts* counts);

 private:
  void CountOtherTables(const std::filesystem::path& output);
  void Join();

  std::array<std::filesystem::path, kTables> paths_;
  ReadFn read_;
  std::array<Trace, kTables> parts_;
  std::array<CsvRowCounts, kTables> counts_;
  CsvRowCounts others_;
  std::array<bool, kTables> read_beside_{};  // written by the thread, read once it is joined
  std::thread beside_;
};

}  // namespace tuneprof

#pragma once

// What the torch_npu database readers share: the row loop, the string table and the column helpers
// every table's reader uses, and the parts ascend_db.cc assembles (the timeline, the analysis.db
// communication tables).

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "io/sqlite_file.h"
#include "model/trace_builder.h"

namespace tuneprof::ascend_db {

// end - start of a row, 0 when the end precedes the start or the difference overflows (a damaged or
// crafted database can hold any int64 in either column).
inline int64_t SpanNs(int64_t start_ns, int64_t end_ns) {
  int64_t span = 0;
  if (__builtin_sub_overflow(end_ns, start_ns, &span) || span < 0) return 0;
  return span;
}

// STRING_IDS: every name in the database is an id into it.
class StringIds {
 public:
  Status Load(const SqliteFile& db);
  // "" for NULL or an id the table lacks.
  std::string_view Get(const SqliteStatement& s, int column) const {
    const std::optional<int64_t> id = s.OptionalInt(column);
    if (!id) return {};
    auto it = values_.find(*id);
    return it == values_.end() ? std::string_view() : std::string_view(it->second);
  }

 private:
  std::unordered_map<int64_t, std::string> values_;
};

// "t.waitNs" when the table has the column, else "NULL": older schemas lack the later additions.
inline std::string Col(const SqliteFile& db, std::string_view table, std::string_view alias, std::string_view column) {
  if (!db.HasColumn(table, column)) return "NULL";
  return std::string(alias) + "." + std::string(column);
}

// Runs `sql` and hands each row to `row_fn`; a failed step is an error naming the file.
template <typename RowFn>
Status ForEachRow(const SqliteFile& db, const std::string& sql, RowFn row_fn) {
  auto statement = db.Prepare(sql);
  if (!statement.ok()) return statement.status();
  for (;;) {
    auto row = statement->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status();
    row_fn(*statement);
  }
}

// NULL, and a value that is not an integer (counted by the statement), read as `fallback`.
inline int64_t IntOr(const SqliteStatement& s, int column, int64_t fallback = kNoId) {
  return s.OptionalInt(column).value_or(fallback);
}

// The index of `name` in a `SELECT *`'s columns, -1 when the table lacks it.
inline int ColumnIndex(const std::vector<std::string>& columns, std::string_view name) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// NaN for a column the table lacks, NULL, or a value that is not a number.
inline double DoubleAt(const SqliteStatement& s, int column) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return column < 0 ? nan : s.OptionalDouble(column).value_or(nan);
}

// The timeline trace_view.json draws, from the host APIs, the tasks, the HCCL ops and the counters.
Status BuildTimeline(const SqliteFile& db, const StringIds& strings, TraceBuilder* b);

// The call stacks PYTORCH_CALLCHAINS records for `operators` (event, callchainId; events ascending), as
// the events' CallStackInfo; nothing without the table.
Status AddCallStacks(const SqliteFile& db, const StringIds& strings,
                     const std::vector<std::pair<uint32_t, int64_t>>& operators, TraceBuilder* b);

// analysis.db's CommAnalyzerTime and CommAnalyzerBandwidth: communication.json's ops, traffic and totals.
Status ReadCommAnalyzer(const SqliteFile& db, SideTableBuilder* out);

// CommAnalyzerMatrix: communication_matrix.json's cells.
Status ReadCommMatrix(const SqliteFile& db, SideTableBuilder* out);

}  // namespace tuneprof::ascend_db

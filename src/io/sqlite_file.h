#pragma once
// Read-only access to SQLite files that profilers write (Nsight Systems exports, torch_npu / msprof
// .db files). Opened as `file:PATH?immutable=1`: several of these databases are in WAL mode, and a
// plain read-only open would create -wal/-shm files beside the user's file. Nothing is ever written.
//
// A database is a program as much as data: a view, a virtual table or a generated column runs code the
// file chose every time it is read (a view over an endless recursive CTE never ends). So only stored
// tables are read: HasTable() is false for anything else of that name, and the refusal is kept, naming
// the object, for the importer to say (Diagnostics()). Every query also runs under a work budget (VM
// steps, scaled with the file's size), past which it ends with `FILE: query over budget: TABLE`.
// Integer and number columns are read by their stored type: a TEXT or BLOB where an integer belongs is
// never read as 0; the importer skips the row or leaves the value unknown, and the count is said.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tuneprof {

class SqliteStatement;

// What a name in the schema is. Only kTable is read.
enum class SqliteObject : uint8_t { kMissing, kTable, kView, kVirtualTable, kGeneratedColumns };
// "a view", "a virtual table", ... for messages and inventories.
std::string_view SqliteObjectWhat(SqliteObject kind);

class SqliteFile {
 public:
  // VM steps one query may take on a file of `file_bytes`: a constant for the schema and the small
  // tables, plus a per-byte allowance for scans, sorts and joins over the rows (docs/reliability.md).
  static int64_t DefaultQueryBudget(uint64_t file_bytes);

  // Fails with a one-line message naming the path when the file is missing or not a SQLite database.
  // The query budget is DefaultQueryBudget of the file's size.
  static Result<std::unique_ptr<SqliteFile>> Open(const std::string& path);
  // The same with the budget given (tests make it tiny).
  static Result<std::unique_ptr<SqliteFile>> Open(const std::string& path, int64_t query_budget_steps);
  ~SqliteFile();
  SqliteFile(const SqliteFile&) = delete;
  SqliteFile& operator=(const SqliteFile&) = delete;

  const std::string& path() const { return path_; }
  // Profilers create tables lazily: a missing table means "not captured", not an error. A view, virtual
  // table or table with generated columns of that name is not a table either; asking records its refusal.
  bool HasTable(std::string_view table) const;
  SqliteObject Kind(std::string_view name) const;
  // The stored tables, by name.
  std::vector<std::string> TableNames() const;
  // The views, virtual tables and tables with generated columns, by name (their refusals recorded).
  std::vector<std::string> RefusedNames() const;
  // Column names of `table` in declaration order (empty when it is not a stored table).
  std::vector<std::string> Columns(std::string_view table) const;
  bool HasColumn(std::string_view table, std::string_view column) const;
  // Row count of `table`; an error names the file and the table.
  Result<int64_t> CountRows(std::string_view table) const;
  // Compiles `sql`; an error message names the file and carries SQLite's own reason. The table a
  // budget error names is the first one after FROM.
  Result<SqliteStatement> Prepare(std::string_view sql) const;

  // What the importer must say about this file, one line each, in a stable order: the objects it asked
  // for that are not stored tables, then the counts of ill-typed values per table, column and outcome.
  std::vector<std::string> Diagnostics() const;
  // The most VM steps one query took so far (to measure the budget's margin on real exports).
  int64_t max_query_steps() const { return max_query_steps_; }

 private:
  friend class SqliteStatement;
  SqliteFile(std::string path, sqlite3* db, int64_t budget);
  std::string RefusalOf(std::string_view name, SqliteObject kind) const;
  SqliteObject Classify(std::string_view name) const;
  void Refuse(std::string_view name, SqliteObject kind) const;
  // Arms the progress handler with `steps_left` for one step of a statement.
  void Arm(int64_t steps_left) const;

  std::string path_;
  sqlite3* db_;
  int64_t budget_;
  int period_;  // VM steps between two calls of the progress handler
  mutable int64_t steps_left_ = 0;
  mutable int64_t max_query_steps_ = 0;
  mutable std::unordered_map<std::string, SqliteObject> kinds_;
  mutable std::set<std::string> refused_;
  mutable std::vector<std::string> refusals_;
  // (table, column, what the importer did) -> rows
  mutable std::map<std::tuple<std::string, std::string, std::string>, int64_t> ill_typed_;
};

// One compiled query. Step() until it returns false; a failed step is an error naming the file.
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();  // hands the ill-typed counts to the file (SqliteFile::Diagnostics)

  Status BindInt(int index, int64_t value);  // index from 1, as SQLite counts
  Status BindText(int index, std::string_view value);
  // True when a row is ready, false at the end; past the budget, `FILE: query over budget: TABLE`.
  Result<bool> Step();
  // Row count so far, for messages ("row 1234").
  int64_t row() const { return row_; }

  bool IsNull(int column) const;
  // Integer columns hold INTEGER values, a REAL with an integral value, or text that is a whole decimal
  // integer (torch_npu writes PYTORCH_API's times as TEXT); anything else there (TEXT 'abc' or '236 ms', a
  // BLOB, 1.5) is ill-typed.
  bool IllTyped(int column) const;
  // True (and counted as "row skipped", once per row) when one of `columns` is ill-typed: the caller
  // skips the row. NULL is not ill-typed; it keeps the meaning the importer gives it.
  bool SkipIllTyped(std::initializer_list<int> columns) const;
  // The stored integer; NULL reads as 0. Only for columns SkipIllTyped vetted or that a query computes
  // (count(*)): an ill-typed value reads as SQLite converts it (0 for 'abc') here.
  int64_t Int(int column) const;
  // The integer, std::nullopt for NULL and for an ill-typed value (counted as "read as unknown").
  std::optional<int64_t> OptionalInt(int column) const;
  // An INTEGER or REAL as a double, std::nullopt for NULL and for TEXT or BLOB (counted as a
  // non-number "read as unknown").
  std::optional<double> OptionalDouble(int column) const;
  double Double(int column) const;  // NULL reads as 0; prefer OptionalDouble
  // Valid until the next Step(); NULL reads as "".
  std::string_view Text(int column) const;

 private:
  friend class SqliteFile;
  SqliteStatement(const SqliteFile* file, sqlite3_stmt* statement, std::string table);
  void Count(int column, std::string_view outcome) const;
  // The integer of an integer column as IllTyped reads it; std::nullopt for NULL and for an ill-typed value.
  std::optional<int64_t> IntegerValue(int column) const;
  // Hands the ill-typed counts to the file and frees the statement.
  void Finalize();

  const SqliteFile* file_;
  sqlite3_stmt* statement_;
  std::string table_;  // the first table after FROM, for messages
  int64_t row_ = 0;
  int64_t steps_left_ = 0;
  int64_t steps_taken_ = 0;
  // (column, outcome) -> rows, and the last row counted per column (a column read twice counts once)
  mutable std::map<std::pair<int, std::string>, int64_t> ill_typed_;
  mutable std::unordered_map<int, int64_t> counted_row_;
};

}  // namespace tuneprof

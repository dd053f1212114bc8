#pragma once
// Read-only access to SQLite files that profilers write (Nsight Systems exports, torch_npu / msprof
// .db files). Opened as `file:PATH?immutable=1`: several of these databases are in WAL mode, and a
// plain read-only open would create -wal/-shm files beside the user's file. Nothing is ever written.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tuneprof {

class SqliteStatement;

class SqliteFile {
 public:
  // Fails with a one-line message naming the path when the file is missing or not a SQLite database.
  static Result<std::unique_ptr<SqliteFile>> Open(const std::string& path);
  ~SqliteFile();
  SqliteFile(const SqliteFile&) = delete;
  SqliteFile& operator=(const SqliteFile&) = delete;

  const std::string& path() const { return path_; }
  // Profilers create tables lazily: a missing table means "not captured", not an error.
  bool HasTable(std::string_view table) const;
  std::vector<std::string> TableNames() const;
  // Column names of `table` in declaration order (empty when the table is missing).
  std::vector<std::string> Columns(std::string_view table) const;
  bool HasColumn(std::string_view table, std::string_view column) const;
  // Row count of `table`; an error names the file and the table.
  Result<int64_t> CountRows(std::string_view table) const;
  // Compiles `sql`; an error message names the file and carries SQLite's own reason.
  Result<SqliteStatement> Prepare(std::string_view sql) const;

 private:
  SqliteFile(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_;
};

// One compiled query. Step() until it returns false; a failed step is an error naming the file.
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  Status BindInt(int index, int64_t value);  // index from 1, as SQLite counts
  Status BindText(int index, std::string_view value);
  // True when a row is ready, false at the end.
  Result<bool> Step();
  // Row count so far, for messages ("row 1234").
  int64_t row() const { return row_; }

  int ColumnCount() const;
  bool IsNull(int column) const;
  int64_t Int(int column) const;  // NULL reads as 0; check IsNull when that matters
  std::optional<int64_t> OptionalInt(int column) const;
  double Double(int column) const;
  std::optional<double> OptionalDouble(int column) const;
  // Valid until the next Step(); NULL reads as "".
  std::string_view Text(int column) const;

 private:
  friend class SqliteFile;
  SqliteStatement(const std::string* path, sqlite3_stmt* statement) : path_(path), statement_(statement) {}
  const std::string* path_;
  sqlite3_stmt* statement_;
  int64_t row_ = 0;
};

}  // namespace tuneprof

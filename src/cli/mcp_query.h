#pragma once
// The `query` tool of `tuneprof mcp`: one read-only SQL statement over a database `export --sqlite` wrote,
// its rows as JSON (schema tuneprof.query/1). The statement may only read: an authorizer refuses every
// action but SELECT, reading columns and calling functions (no PRAGMA, ATTACH, writes or schema changes),
// on a connection opened read-only. Rows, bytes of output, SQLite VM steps and wall time are bounded.
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

struct sqlite3;

namespace tuneprof::cli {

struct QueryLimits {
  int64_t max_rows = 1000;
  size_t max_output_bytes = size_t{8} << 20;
  int64_t max_steps = 500'000'000;  // SQLite VM steps
  int64_t max_milliseconds = 10'000;
};

// A database `export --sqlite` wrote, open for queries. Once Open returns, the file may be removed: the
// connection keeps it, so a server that is killed leaves no database behind.
class QueryDatabase {
 public:
  static Result<std::unique_ptr<QueryDatabase>> Open(const std::string& path);
  ~QueryDatabase();
  QueryDatabase(const QueryDatabase&) = delete;
  QueryDatabase& operator=(const QueryDatabase&) = delete;

  // The result document, or one line saying the cause (a syntax error, a refused action, more than one
  // statement, over budget).
  Result<std::string> Run(const std::string& sql, const QueryLimits& limits) const;

 private:
  explicit QueryDatabase(sqlite3* db) : db_(db) {}

  sqlite3* db_;
};

}  // namespace tuneprof::cli

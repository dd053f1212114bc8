#pragma once
// The `query` tool of `tuneprof mcp`: one read-only SQL statement over a database `export --sqlite` wrote,
// its rows as JSON (schema tuneprof.query/1). The statement may only read: an authorizer refuses every
// action but SELECT, reading columns and calling functions (no PRAGMA, ATTACH, writes or schema changes),
// on a connection opened read-only. Rows, bytes of output, SQLite VM steps and wall time are bounded.
#include <cstdint>
#include <string>

#include "base/status.h"

namespace tuneprof::cli {

struct QueryLimits {
  int64_t max_rows = 1000;
  size_t max_output_bytes = size_t{8} << 20;
  int64_t max_steps = 500'000'000;  // SQLite VM steps
  int64_t max_milliseconds = 10'000;
};

// The result document, or one line naming the database and the cause (a syntax error, a refused action,
// more than one statement, over budget).
Result<std::string> RunReadOnlyQuery(const std::string& database, const std::string& sql, const QueryLimits& limits);

}  // namespace tuneprof::cli

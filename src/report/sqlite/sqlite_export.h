#pragma once
// `tuneprof export --sqlite` and the Python module's Run.to_sqlite: the run's tables (report/tables) as
// one SQLite database, one SQL table per table, plus `tuneprof_meta` (schema version, inputs). Readable by
// pandas read_sql, DuckDB's sqlite scanner and any SQLite consumer; docs/sqlite-schema.md is the contract.
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "report/tables/run_tables.h"

namespace tuneprof {

inline constexpr const char* kSqliteSchema = "tuneprof.sqlite/1";

// Writes `tables` to a new database at `path`, whole or not at all: built in a temporary file beside it
// and renamed over it only once committed. kIoError naming `path` and SQLite's message.
// `option` names the output in a refusal's advice (io/output_file.h): --sqlite, or a Python argument.
Status WriteSqlite(const std::string& path, const std::vector<DataTable>& tables,
                   const std::vector<std::string>& inputs, std::string_view option = "--sqlite");

}  // namespace tuneprof

#include "cli/mcp_query.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "base/json_writer.h"

namespace tuneprof::cli {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Only what a SELECT does: read columns, call functions, recurse in a WITH.
int ReadOnlyAuthorizer(void*, int action, const char*, const char*, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    default:
      return SQLITE_DENY;
  }
}

struct Budget {
  int64_t steps_left = 0;
  std::chrono::steady_clock::time_point deadline;
  bool exceeded = false;
};

constexpr int kStepsPerCheck = 1000;

int CheckBudget(void* data) {
  auto* budget = static_cast<Budget*>(data);
  budget->steps_left -= kStepsPerCheck;
  if (budget->steps_left <= 0 || std::chrono::steady_clock::now() > budget->deadline) budget->exceeded = true;
  return budget->exceeded ? 1 : 0;
}

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct FinalizeStatement {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};

void WriteValue(sqlite3_stmt* statement, int column, JsonWriter* w) {
  switch (sqlite3_column_type(statement, column)) {
    case SQLITE_INTEGER:
      w->Int(sqlite3_column_int64(statement, column));
      return;
    case SQLITE_FLOAT:
      w->Double(sqlite3_column_double(statement, column));
      return;
    case SQLITE_TEXT: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
      w->String(std::string_view(text, static_cast<size_t>(sqlite3_column_bytes(statement, column))));
      return;
    }
    case SQLITE_BLOB: {
      // As SQLite writes a blob literal, so that it stays one JSON string.
      const auto* bytes = static_cast<const unsigned char*>(sqlite3_column_blob(statement, column));
      const int size = sqlite3_column_bytes(statement, column);
      std::string hex = "x'";
      for (int i = 0; i < size; ++i) {
        hex += kHexDigits[bytes[i] >> 4];
        hex += kHexDigits[bytes[i] & 15];
      }
      w->String(hex + "'");
      return;
    }
    default:
      w->Null();
  }
}

}  // namespace

Result<std::unique_ptr<QueryDatabase>> QueryDatabase::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<sqlite3, CloseDb> db(raw);
  if (opened != SQLITE_OK) {
    return InvalidInput("query: cannot open the run's database: " +
                        std::string(raw ? sqlite3_errmsg(raw) : "no memory"));
  }
  // Reading the schema now opens the file for good, before the caller removes it.
  if (sqlite3_exec(db.get(), "PRAGMA query_only = 1; SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    return InvalidInput("query: cannot read the run's database: " + std::string(sqlite3_errmsg(db.get())));
  }
  sqlite3_set_authorizer(db.get(), ReadOnlyAuthorizer, nullptr);
  return std::unique_ptr<QueryDatabase>(new QueryDatabase(db.release()));
}

QueryDatabase::~QueryDatabase() { sqlite3_close(db_); }

Result<std::string> QueryDatabase::Run(const std::string& sql, const QueryLimits& limits) const {
  const auto failure = [&](std::string_view cause) { return InvalidInput("query: " + std::string(cause)); };
  // One value may not grow past the output's own bound (randomblob(1e9), a long replace()).
  sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, static_cast<int>(std::min<size_t>(limits.max_output_bytes, INT32_MAX)));
  Budget budget{limits.max_steps,
                std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.max_milliseconds)};
  sqlite3_progress_handler(db_, kStepsPerCheck, CheckBudget, &budget);
  struct Disarm {
    sqlite3* db;
    ~Disarm() { sqlite3_progress_handler(db, 0, nullptr, nullptr); }
  } disarm{db_};

  sqlite3_stmt* raw_statement = nullptr;
  const char* tail = nullptr;
  const int prepared = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &raw_statement, &tail);
  std::unique_ptr<sqlite3_stmt, FinalizeStatement> statement(raw_statement);
  if (prepared == SQLITE_AUTH) return failure("only statements that read the tables are allowed (SELECT, WITH)");
  if (prepared != SQLITE_OK) return failure(sqlite3_errmsg(db_));
  if (!statement) return failure("no statement given");
  if (std::string_view(tail).find_first_not_of(" \t\r\n;") != std::string_view::npos) {
    return failure("one statement at a time");
  }
  if (!sqlite3_stmt_readonly(statement.get())) return failure("only statements that read are allowed");

  std::string out;
  JsonWriter w(&out);
  const int columns = sqlite3_column_count(statement.get());
  w.BeginObject().Key("schema").String("tuneprof.query/1").Key("columns").BeginArray();
  for (int c = 0; c < columns; ++c) w.String(sqlite3_column_name(statement.get(), c));
  w.EndArray().Key("rows").BeginArray();
  int64_t rows = 0;
  bool truncated = false;
  for (;;) {
    const int stepped = sqlite3_step(statement.get());
    if (stepped == SQLITE_DONE) break;
    if (stepped != SQLITE_ROW) {
      if (budget.exceeded) return failure("over budget (SQLite steps or time); narrow the query or add a LIMIT");
      return failure(sqlite3_errmsg(db_));
    }
    if (rows == limits.max_rows || out.size() > limits.max_output_bytes) {
      truncated = true;
      break;
    }
    w.BeginArray();
    for (int c = 0; c < columns; ++c) WriteValue(statement.get(), c, &w);
    w.EndArray();
    ++rows;
  }
  w.EndArray().Key("row_count").Int(rows).Key("truncated").Bool(truncated).EndObject();
  out += '\n';
  return out;
}

}  // namespace tuneprof::cli

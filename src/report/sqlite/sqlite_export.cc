#include "report/sqlite/sqlite_export.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string_view>
#include <utility>

#include "base/enum_names.h"
#include "io/output_file.h"

namespace tuneprof {
namespace {

// Owns the connection and the statement of one export; every call's failure names the output file.
class Database {
 public:
  explicit Database(std::string path) : path_(std::move(path)) {}
  ~Database() {
    if (statement_ != nullptr) sqlite3_finalize(statement_);
    if (db_ != nullptr) sqlite3_close(db_);
  }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Status Open(const std::string& file) {
    if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      return Error();
    }
    // A new file written once: no journal to keep, nothing to sync until the end.
    return Execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;");
  }
  // Closed before the file is renamed into place: a close that fails (the last pages not written) fails the
  // export.
  Status Close() {
    if (statement_ != nullptr) sqlite3_finalize(std::exchange(statement_, nullptr));
    if (sqlite3_close(db_) != SQLITE_OK) return Error();
    db_ = nullptr;
    return Status();
  }
  Status Execute(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      const std::string text = message != nullptr ? message : "unknown error";
      sqlite3_free(message);
      return Status(StatusCode::kIoError, fmt::format("{}: cannot write SQLite: {}", path_, text));
    }
    return Status();
  }
  Status Prepare(const std::string& sql) {
    if (statement_ != nullptr) sqlite3_finalize(statement_);
    statement_ = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement_, nullptr) != SQLITE_OK) return Error();
    return Status();
  }
  sqlite3_stmt* statement() { return statement_; }
  Status Step() {
    if (sqlite3_step(statement_) != SQLITE_DONE) return Error();
    sqlite3_reset(statement_);
    return Status();
  }
  Status Error() const {
    return Status(StatusCode::kIoError, fmt::format("{}: cannot write SQLite: {}", path_,
                                                    db_ != nullptr ? sqlite3_errmsg(db_) : "no memory"));
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* statement_ = nullptr;
};

std::string_view SqlType(DataColumnType type) {
  static constexpr std::array<std::string_view, 3> kTypes = {"INTEGER", "REAL", "TEXT"};
  return EnumName(type, kTypes, "TEXT");
}

std::string Quoted(std::string_view name) {
  std::string quoted;
  quoted.reserve(name.size() + 2);
  quoted.append(1, '"').append(name).append(1, '"');
  return quoted;
}

void Bind(sqlite3_stmt* statement, int slot, const DataColumn& column, size_t row) {
  switch (column.type) {
    case DataColumnType::kInt64: {
      const int64_t value = column.ints[row];
      if (column.has_null_value && value == column.null_value) {
        sqlite3_bind_null(statement, slot);
      } else {
        sqlite3_bind_int64(statement, slot, value);
      }
      return;
    }
    case DataColumnType::kFloat64: {
      const double value = column.floats[row];
      if (std::isnan(value)) {
        sqlite3_bind_null(statement, slot);
      } else {
        sqlite3_bind_double(statement, slot, value);
      }
      return;
    }
    case DataColumnType::kString: {
      const std::string& text = column.categories[static_cast<size_t>(column.codes[row])];
      sqlite3_bind_text(statement, slot, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
      return;
    }
  }
}

Status WriteTable(Database* db, const DataTable& table) {
  std::string create = "CREATE TABLE " + Quoted(table.name) + " (";
  std::string insert = "INSERT INTO " + Quoted(table.name) + " VALUES (";
  for (size_t c = 0; c < table.columns.size(); ++c) {
    create += fmt::format("{}{} {}", c == 0 ? "" : ", ", Quoted(table.columns[c].name), SqlType(table.columns[c].type));
    insert += c == 0 ? "?" : ", ?";
  }
  TP_RETURN_IF_ERROR(db->Execute(create + ");"));
  TP_RETURN_IF_ERROR(db->Prepare(insert + ");"));
  for (size_t row = 0; row < table.rows(); ++row) {
    for (size_t c = 0; c < table.columns.size(); ++c)
      Bind(db->statement(), static_cast<int>(c + 1), table.columns[c], row);
    TP_RETURN_IF_ERROR(db->Step());
  }
  return Status();
}

Status WriteMeta(Database* db, const std::vector<std::string>& inputs) {
  TP_RETURN_IF_ERROR(db->Execute("CREATE TABLE tuneprof_meta (key TEXT, value TEXT);"));
  TP_RETURN_IF_ERROR(db->Prepare("INSERT INTO tuneprof_meta VALUES (?, ?);"));
  auto add = [&](std::string_view key, const std::string& value) {
    sqlite3_bind_text(db->statement(), 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
    sqlite3_bind_text(db->statement(), 2, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
    return db->Step();
  };
  TP_RETURN_IF_ERROR(add("schema", kSqliteSchema));
  for (const std::string& input : inputs) TP_RETURN_IF_ERROR(add("input", input));
  return Status();
}

// Indexes for the joins a reader makes: every table by rank, events by their index within the rank.
Status WriteIndexes(Database* db, const std::vector<DataTable>& tables) {
  for (const DataTable& table : tables) {
    if (table.Find("rank") == nullptr) continue;
    const std::string columns = table.Find("index") != nullptr ? "rank, \"index\"" : "rank";
    TP_RETURN_IF_ERROR(db->Execute(
        fmt::format("CREATE INDEX {} ON {} ({});", Quoted(table.name + "_by_rank"), Quoted(table.name), columns)));
  }
  return Status();
}

}  // namespace

Status WriteSqlite(const std::string& path, const std::vector<DataTable>& tables,
                   const std::vector<std::string>& inputs, std::string_view option) {
  // Built in a temporary file beside the target, which follows every output's rules (io/output_file.h):
  // never a device, FIFO or file the run read; renamed over it only once committed.
  TP_ASSIGN_OR_RETURN(std::unique_ptr<PendingOutputFile> output, PendingOutputFile::Create(path, option));
  {
    Database db(path);
    TP_RETURN_IF_ERROR(db.Open(output->temp_path()));
    TP_RETURN_IF_ERROR(WriteMeta(&db, inputs));
    for (const DataTable& table : tables) TP_RETURN_IF_ERROR(WriteTable(&db, table));
    TP_RETURN_IF_ERROR(WriteIndexes(&db, tables));
    TP_RETURN_IF_ERROR(db.Execute("COMMIT;"));
    TP_RETURN_IF_ERROR(db.Close());
  }
  return output->Commit();
}

}  // namespace tuneprof

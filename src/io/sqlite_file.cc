#include "io/sqlite_file.h"

#include <sqlite3.h>

#include <filesystem>

#include <fmt/format.h>

#include "io/files_read.h"

namespace tuneprof {
namespace {

// SQLite URIs need '%', '?' and '#' escaped in the path part.
std::string ImmutableUri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Result<std::unique_ptr<SqliteFile>> SqliteFile::Open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status(StatusCode::kNotFound, fmt::format("{}: no such file", path));
  }
  RecordFileRead(path);  // no output may be written over it (io/output_file.h)
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  if (sqlite3_open_v2(ImmutableUri(path).c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string reason = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return InvalidInput(fmt::format("{}: cannot open as SQLite: {}", path, reason));
  }
  auto file = std::unique_ptr<SqliteFile>(new SqliteFile(path, db));
  // sqlite3_open_v2 is lazy: the header is read by the first query, so a non-database fails here.
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return InvalidInput(fmt::format("{}: not a SQLite database: {}", path, sqlite3_errmsg(db)));
  }
  return file;
}

SqliteFile::~SqliteFile() { sqlite3_close(db_); }

bool SqliteFile::HasTable(std::string_view table) const {
  auto statement = Prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  if (!statement.ok() || !statement->BindText(1, table).ok()) return false;
  auto row = statement->Step();
  return row.ok() && *row;
}

std::vector<std::string> SqliteFile::TableNames() const {
  std::vector<std::string> names;
  auto statement = Prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view') ORDER BY name");
  if (!statement.ok()) return names;
  for (auto row = statement->Step(); row.ok() && *row; row = statement->Step()) {
    names.emplace_back(statement->Text(0));
  }
  return names;
}

std::vector<std::string> SqliteFile::Columns(std::string_view table) const {
  std::vector<std::string> names;
  // pragma_table_info takes the table name as a bound value: no quoting of user-visible names.
  auto statement = Prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid");
  if (!statement.ok() || !statement->BindText(1, table).ok()) return names;
  for (auto row = statement->Step(); row.ok() && *row; row = statement->Step()) {
    names.emplace_back(statement->Text(0));
  }
  return names;
}

bool SqliteFile::HasColumn(std::string_view table, std::string_view column) const {
  for (const std::string& name : Columns(table)) {
    if (name == column) return true;
  }
  return false;
}

Result<int64_t> SqliteFile::CountRows(std::string_view table) const {
  std::string quoted = "\"";
  for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  quoted += '"';
  TP_ASSIGN_OR_RETURN(SqliteStatement statement, Prepare("SELECT count(*) FROM " + quoted));
  TP_ASSIGN_OR_RETURN(bool has_row, statement.Step());
  if (!has_row) return InvalidInput(fmt::format("{}: count of table {} returned nothing", path_, table));
  return statement.Int(0);
}

Result<SqliteStatement> SqliteFile::Prepare(std::string_view sql) const {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr) != SQLITE_OK) {
    return InvalidInput(fmt::format("{}: query failed: {} ({})", path_, sqlite3_errmsg(db_), sql));
  }
  return SqliteStatement(&path_, statement);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : path_(other.path_), statement_(other.statement_), row_(other.row_) {
  other.statement_ = nullptr;
}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(statement_);
    path_ = other.path_;
    statement_ = other.statement_;
    row_ = other.row_;
    other.statement_ = nullptr;
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(statement_); }

Status SqliteStatement::BindInt(int index, int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) {
    return InvalidInput(fmt::format("{}: cannot bind parameter {}", *path_, index));
  }
  return Status::Ok();
}

Status SqliteStatement::BindText(int index, std::string_view value) {
  if (sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) !=
      SQLITE_OK) {
    return InvalidInput(fmt::format("{}: cannot bind parameter {}", *path_, index));
  }
  return Status::Ok();
}

Result<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) {
    ++row_;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(statement_);
  return InvalidInput(fmt::format("{}: read failed after row {}: {}", *path_, row_, sqlite3_errmsg(db)));
}

int SqliteStatement::ColumnCount() const { return sqlite3_column_count(statement_); }

bool SqliteStatement::IsNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

std::optional<int64_t> SqliteStatement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

double SqliteStatement::Double(int column) const { return sqlite3_column_double(statement_, column); }

std::optional<double> SqliteStatement::OptionalDouble(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Double(column);
}

std::string_view SqliteStatement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  if (text == nullptr) return {};
  return {text, static_cast<size_t>(sqlite3_column_bytes(statement_, column))};
}

}  // namespace tuneprof

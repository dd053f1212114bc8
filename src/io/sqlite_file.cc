#include "io/sqlite_file.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "base/enum_names.h"
#include "io/files_read.h"
#include "io/read_roots.h"

namespace tuneprof {
namespace {

// The budget's two parts (DefaultQueryBudget). Measured on the real exports (Nsight Systems, torch_npu
// and msprof databases up to 2.7 MB), the costliest query took 0.2 VM steps per byte of the file
// (210,000 steps: a sorted scan, the torch_npu importer's joins) and a whole table's scan 0.1 to 0.2 per
// byte of its pages. The per-byte part is 100 times that, and the constant alone 100 times the largest
// real query; a small file whose query loops or multiplies rows ends after about 25 M steps, a
// fraction of a second to about a second.
constexpr int64_t kBaseSteps = 25'000'000;
constexpr int64_t kStepsPerByte = 20;

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

// The first table a query reads (the name after its first FROM), for a budget error to name.
std::string TableOfQuery(std::string_view sql) {
  std::string upper(sql);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  size_t at = upper.starts_with("FROM ") ? 0 : upper.find(" FROM ");
  if (at == std::string::npos) return "query";
  at = upper.find_first_not_of(' ', at + (at == 0 ? 5 : 6));
  if (at == std::string::npos) return "query";
  if (sql[at] == '"') {
    const size_t end = sql.find('"', at + 1);
    return std::string(sql.substr(at + 1, end == std::string_view::npos ? std::string_view::npos : end - at - 1));
  }
  const size_t end = sql.find_first_of(" ,;", at);
  return std::string(sql.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
}

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// A REAL that holds an integer exactly, within int64's range.
std::optional<int64_t> IntegralDouble(double value) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!std::isfinite(value) || value != std::trunc(value) || value < -kTwoTo63 || value >= kTwoTo63) {
    return std::nullopt;
  }
  return static_cast<int64_t>(value);
}

// Text that is a whole decimal integer in int64's range: torch_npu's PYTORCH_API stores its times so
// (startNs TEXT, "1698220811391879825"). Anything else in text ("236 ms", "1.5e9", "") is not an integer.
std::optional<int64_t> IntegerText(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [at, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || at != end) return std::nullopt;
  return value;
}

// The first column of each row `statement` gives, as text; the rows up to a failed step.
std::vector<std::string> FirstColumnTexts(SqliteStatement& statement) {
  std::vector<std::string> texts;
  for (auto row = statement.Step(); row.ok() && *row; row = statement.Step()) texts.emplace_back(statement.Text(0));
  return texts;
}

}  // namespace

std::string_view SqliteObjectWhat(SqliteObject kind) {
  static constexpr std::array<std::string_view, 5> kWhat = {"missing", "a table", "a view", "a virtual table",
                                                            "a table with generated columns"};
  return EnumName(kind, kWhat, "unknown");
}

int64_t SqliteFile::DefaultQueryBudget(uint64_t file_bytes) {
  const uint64_t per_byte_limit = static_cast<uint64_t>(INT64_MAX - kBaseSteps) / kStepsPerByte;
  return kBaseSteps + static_cast<int64_t>(std::min(file_bytes, per_byte_limit)) * kStepsPerByte;
}

SqliteFile::SqliteFile(std::string path, sqlite3* db, int64_t budget)
    : path_(std::move(path)),
      db_(db),
      budget_(std::max<int64_t>(budget, 1)),
      period_(static_cast<int>(std::clamp<int64_t>(budget_ / 64, 1, 1000))) {}

Result<std::unique_ptr<SqliteFile>> SqliteFile::Open(const std::string& path) {
  std::error_code ec;
  const uintmax_t bytes = std::filesystem::file_size(path, ec);
  return Open(path, DefaultQueryBudget(ec ? 0 : static_cast<uint64_t>(bytes)));
}

Result<std::unique_ptr<SqliteFile>> SqliteFile::Open(const std::string& path, int64_t query_budget_steps) {
  TP_RETURN_IF_ERROR(CheckReadAllowed(path));
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
  auto file = std::unique_ptr<SqliteFile>(new SqliteFile(path, db, query_budget_steps));
  // Functions with side effects are refused inside the schema (views, triggers, defaults).
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_progress_handler(
      db, file->period_,
      [](void* self) {
        const auto* f = static_cast<const SqliteFile*>(self);
        f->steps_left_ -= f->period_;
        return f->steps_left_ < 0 ? 1 : 0;
      },
      file.get());
  file->Arm(file->budget_);
  // sqlite3_open_v2 is lazy: the header is read by the first query, so a non-database fails here.
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) != SQLITE_OK) {
    if (file->steps_left_ < 0) return InvalidInput(fmt::format("{}: query over budget: sqlite_master", path));
    return InvalidInput(fmt::format("{}: not a SQLite database: {}", path, sqlite3_errmsg(db)));
  }
  return file;
}

SqliteFile::~SqliteFile() { sqlite3_close(db_); }

void SqliteFile::Arm(int64_t steps_left) const { steps_left_ = steps_left; }

SqliteObject SqliteFile::Classify(std::string_view name) const {
  auto statement = Prepare("SELECT type, sql, rootpage FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  if (!statement.ok() || !statement->BindText(1, name).ok()) return SqliteObject::kMissing;
  auto row = statement->Step();
  if (!row.ok() || !*row) return SqliteObject::kMissing;
  if (statement->Text(0) == "view") return SqliteObject::kView;
  // A virtual table is a module's code behind a name; its schema row has no pages of its own.
  if (StartsWithNoCase(statement->Text(1), "CREATE VIRTUAL") || statement->OptionalInt(2).value_or(0) == 0) {
    return SqliteObject::kVirtualTable;
  }
  auto generated = Prepare("SELECT 1 FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3) LIMIT 1");
  if (!generated.ok() || !generated->BindText(1, name).ok()) return SqliteObject::kMissing;
  auto computed = generated->Step();
  if (!computed.ok()) return SqliteObject::kMissing;
  return *computed ? SqliteObject::kGeneratedColumns : SqliteObject::kTable;
}

SqliteObject SqliteFile::Kind(std::string_view name) const {
  auto it = kinds_.find(std::string(name));
  if (it == kinds_.end()) it = kinds_.emplace(std::string(name), Classify(name)).first;
  return it->second;
}

std::string SqliteFile::RefusalOf(std::string_view name, SqliteObject kind) const {
  switch (kind) {
    case SqliteObject::kView:
      return fmt::format("{}: {} is a view, not a table; tuneprof reads tables only", path_, name);
    case SqliteObject::kVirtualTable:
      return fmt::format("{}: {} is a virtual table, not a stored one; tuneprof reads stored tables only", path_, name);
    case SqliteObject::kGeneratedColumns:
      return fmt::format("{}: {} has generated columns, computed as they are read; tuneprof reads stored tables only",
                         path_, name);
    default:
      return {};
  }
}

void SqliteFile::Refuse(std::string_view name, SqliteObject kind) const {
  if (kind == SqliteObject::kTable || kind == SqliteObject::kMissing) return;
  if (refused_.emplace(name).second) refusals_.push_back(RefusalOf(name, kind));
}

bool SqliteFile::HasTable(std::string_view table) const {
  const SqliteObject kind = Kind(table);
  Refuse(table, kind);
  return kind == SqliteObject::kTable;
}

std::vector<std::string> SqliteFile::TableNames() const {
  auto statement = Prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  if (!statement.ok()) return {};
  std::vector<std::string> names = FirstColumnTexts(*statement);
  std::erase_if(names, [&](const std::string& name) { return Kind(name) != SqliteObject::kTable; });
  return names;
}

std::vector<std::string> SqliteFile::RefusedNames() const {
  auto statement = Prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view') ORDER BY name");
  if (!statement.ok()) return {};
  std::vector<std::string> names = FirstColumnTexts(*statement);
  std::erase_if(names, [&](const std::string& name) {
    const SqliteObject kind = Kind(name);
    Refuse(name, kind);
    return kind == SqliteObject::kTable || kind == SqliteObject::kMissing;
  });
  return names;
}

std::vector<std::string> SqliteFile::Columns(std::string_view table) const {
  if (!HasTable(table)) return {};
  // pragma_table_info takes the table name as a bound value: no quoting of user-visible names.
  auto statement = Prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid");
  if (!statement.ok() || !statement->BindText(1, table).ok()) return {};
  return FirstColumnTexts(*statement);
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
  Arm(budget_);  // compiling may load the schema, which runs queries of its own
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr) != SQLITE_OK) {
    if (steps_left_ < 0) return InvalidInput(fmt::format("{}: query over budget: sqlite_master", path_));
    return InvalidInput(fmt::format("{}: query failed: {} ({})", path_, sqlite3_errmsg(db_), sql));
  }
  return SqliteStatement(this, statement, TableOfQuery(sql));
}

std::vector<std::string> SqliteFile::Diagnostics() const {
  std::vector<std::string> lines = refusals_;
  for (const auto& [key, rows] : ill_typed_) {
    const auto& [table, column, outcome] = key;
    const std::string count = fmt::format("{} row{}", rows, rows == 1 ? "" : "s");
    if (outcome == "skipped") {
      lines.push_back(fmt::format("{}: {}: {} with a non-integer {} skipped", path_, table, count, column));
    } else if (outcome == "unknown") {
      lines.push_back(
          fmt::format("{}: {}: {} with a non-integer {}: the value read as unknown", path_, table, count, column));
    } else {
      lines.push_back(
          fmt::format("{}: {}: {} with a non-numeric {}: the value read as unknown", path_, table, count, column));
    }
  }
  return lines;
}

SqliteStatement::SqliteStatement(const SqliteFile* file, sqlite3_stmt* statement, std::string table)
    : file_(file), statement_(statement), table_(std::move(table)), steps_left_(file->budget_) {}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : file_(other.file_),
      statement_(std::exchange(other.statement_, nullptr)),
      table_(std::move(other.table_)),
      row_(other.row_),
      steps_left_(other.steps_left_),
      steps_taken_(other.steps_taken_),
      ill_typed_(std::move(other.ill_typed_)),
      counted_row_(std::move(other.counted_row_)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    Finalize();
    file_ = other.file_;
    statement_ = std::exchange(other.statement_, nullptr);
    table_ = std::move(other.table_);
    row_ = other.row_;
    steps_left_ = other.steps_left_;
    steps_taken_ = other.steps_taken_;
    ill_typed_ = std::move(other.ill_typed_);
    counted_row_ = std::move(other.counted_row_);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { Finalize(); }

void SqliteStatement::Finalize() {
  if (statement_ == nullptr) return;
  for (const auto& [key, rows] : ill_typed_) {
    const char* column = sqlite3_column_name(statement_, key.first);
    file_->ill_typed_[{table_, column == nullptr ? "?" : column, key.second}] += rows;
  }
  ill_typed_.clear();
  sqlite3_finalize(std::exchange(statement_, nullptr));
}

Status SqliteStatement::BindInt(int index, int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) {
    return InvalidInput(fmt::format("{}: cannot bind parameter {}", file_->path_, index));
  }
  return Status::Ok();
}

Status SqliteStatement::BindText(int index, std::string_view value) {
  if (sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) !=
      SQLITE_OK) {
    return InvalidInput(fmt::format("{}: cannot bind parameter {}", file_->path_, index));
  }
  return Status::Ok();
}

Result<bool> SqliteStatement::Step() {
  // One progress handler serves every statement of the connection: each step runs on this one's budget.
  file_->Arm(steps_left_);
  const int rc = sqlite3_step(statement_);
  steps_taken_ += steps_left_ - file_->steps_left_;
  steps_left_ = file_->steps_left_;
  file_->max_query_steps_ = std::max(file_->max_query_steps_, steps_taken_);
  if (rc == SQLITE_ROW) {
    ++row_;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  if (steps_left_ < 0) {
    return InvalidInput(
        fmt::format("{}: query over budget: {} (over {} SQLite steps after row {}; a real export "
                    "of this size needs far fewer)",
                    file_->path_, table_, file_->budget_, row_));
  }
  sqlite3* db = sqlite3_db_handle(statement_);
  return InvalidInput(fmt::format("{}: read failed after row {}: {}", file_->path_, row_, sqlite3_errmsg(db)));
}

bool SqliteStatement::IsNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

std::optional<int64_t> SqliteStatement::IntegerValue(int column) const {
  switch (sqlite3_column_type(statement_, column)) {
    case SQLITE_INTEGER:
      return sqlite3_column_int64(statement_, column);
    case SQLITE_FLOAT:
      return IntegralDouble(sqlite3_column_double(statement_, column));
    case SQLITE_TEXT:
      return IntegerText(Text(column));
    default:
      return std::nullopt;
  }
}

bool SqliteStatement::IllTyped(int column) const { return !IntegerValue(column) && !IsNull(column); }

void SqliteStatement::Count(int column, std::string_view outcome) const {
  auto [it, first] = counted_row_.try_emplace(column, row_);
  if (!first && it->second == row_) return;
  it->second = row_;
  ++ill_typed_[{column, std::string(outcome)}];
}

bool SqliteStatement::SkipIllTyped(std::initializer_list<int> columns) const {
  for (int column : columns) {
    if (!IllTyped(column)) continue;
    Count(column, "skipped");
    return true;
  }
  return false;
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

std::optional<int64_t> SqliteStatement::OptionalInt(int column) const {
  const std::optional<int64_t> value = IntegerValue(column);
  if (!value && !IsNull(column)) Count(column, "unknown");
  return value;
}

double SqliteStatement::Double(int column) const { return sqlite3_column_double(statement_, column); }

std::optional<double> SqliteStatement::OptionalDouble(int column) const {
  switch (sqlite3_column_type(statement_, column)) {
    case SQLITE_NULL:
      return std::nullopt;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
      return sqlite3_column_double(statement_, column);
    default:
      Count(column, "number");
      return std::nullopt;
  }
}

std::string_view SqliteStatement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  if (text == nullptr) return {};
  return {text, static_cast<size_t>(sqlite3_column_bytes(statement_, column))};
}

}  // namespace tuneprof

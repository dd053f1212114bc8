#pragma once
// What the run's tables are built with (TableBuilder, InternedColumn), and the tables that have a file of
// their own: events, collectives, memory events. Private to report/tables; run_tables.h is the interface.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/comm/comm_cross_rank.h"
#include "model/trace.h"
#include "report/tables/run_tables.h"

namespace tuneprof::tables {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kNsPerUs = 1000;

// Builds one table column by column; the string columns intern each distinct value once.
class TableBuilder {
 public:
  explicit TableBuilder(std::string name) { table_.name = std::move(name); }

  size_t Int(std::string name, bool minus_one_is_null = false) {
    DataColumn c;
    c.name = std::move(name);
    c.type = DataColumnType::kInt64;
    c.has_null_value = minus_one_is_null;
    return Add(std::move(c));
  }
  size_t Float(std::string name) {
    DataColumn c;
    c.name = std::move(name);
    c.type = DataColumnType::kFloat64;
    return Add(std::move(c));
  }
  size_t String(std::string name) {
    DataColumn c;
    c.name = std::move(name);
    c.type = DataColumnType::kString;
    return Add(std::move(c));
  }

  void PushInt(size_t column, int64_t value) { table_.columns[column].ints.push_back(value); }
  // kNoId becomes the column's -1 (absent).
  void PushId(size_t column, int64_t value) { PushInt(column, value == kNoId ? -1 : value); }
  void PushFloat(size_t column, double value) { table_.columns[column].floats.push_back(value); }
  void PushOptional(size_t column, const std::optional<double>& value) { PushFloat(column, value.value_or(kNaN)); }
  void PushString(size_t column, std::string_view value) {
    Dictionary& index = dictionaries_[column];
    auto it = index.find(value);  // looked up as a view: no string built per row
    if (it == index.end()) {
      std::vector<std::string>& categories = table_.columns[column].categories;
      it = index.emplace(std::string(value), static_cast<int32_t>(categories.size())).first;
      categories.emplace_back(value);
    }
    table_.columns[column].codes.push_back(it->second);
  }
  void Reserve(size_t rows) {
    for (DataColumn& c : table_.columns) {
      c.ints.reserve(rows);
      c.floats.reserve(rows);
      c.codes.reserve(rows);
    }
  }

  DataTable Finish() { return std::move(table_); }
  DataColumn& column(size_t i) { return table_.columns[i]; }

 private:
  size_t Add(DataColumn column) {
    table_.columns.push_back(std::move(column));
    dictionaries_.emplace_back();
    return table_.columns.size() - 1;
  }

  DataTable table_;
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  using Dictionary = std::unordered_map<std::string, int32_t, ViewHash, std::equal_to<>>;
  std::vector<Dictionary> dictionaries_;
};

// A per-rank cache from the trace's string ids to the column's codes, so that a name column costs one
// hash lookup per distinct name, not per row.
class InternedColumn {
 public:
  InternedColumn(TableBuilder* builder, size_t column) : builder_(builder), column_(column) {}
  void StartRank(const Trace& trace) {
    trace_ = &trace;
    codes_.assign(trace.strings().size(), -1);
  }
  void Push(StringId id) {
    int32_t& code = codes_[id.value];
    if (code < 0) {
      builder_->PushString(column_, trace_->str(id));
      code = builder_->column(column_).codes.back();
    } else {
      builder_->column(column_).codes.push_back(code);
    }
  }

 private:
  TableBuilder* builder_;
  size_t column_;
  const Trace* trace_ = nullptr;
  std::vector<int32_t> codes_;
};

// A process or thread id as a number; -1 for one the trace names by text.
int64_t KeyNumber(const ProcessKey& key);

// Whether the trace has kernels on its timeline (a torch_npu rank read from its summaries has none).
bool HasKernelEvents(const Trace& trace);

// The events of every rank with HTA's columns (run_tables.h).
DataTable EventsTable(const std::vector<Trace>& traces);
// The timeline's collectives and torch_npu's communication.json ops, per rank of `comm`.
DataTable CollectivesTable(const std::vector<Trace>& traces, const CommAnalysis& comm);
// The allocator's records and torch_npu's operator memory.
DataTable MemoryEventsTable(const std::vector<Trace>& traces);

}  // namespace tuneprof::tables

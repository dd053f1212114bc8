#pragma once
// A run as flat tables, one row per thing: the events with Holistic Trace Analysis's column names and
// meanings, steps and their split, kernels, operators, collectives, memory events, ranks, findings and
// utilizations. What the Python module hands to pandas / numpy / Arrow and `export --sqlite` writes; both
// read the same columns, so a notebook and a SQL query see the same numbers. docs/sqlite-schema.md lists
// every column.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/breakdown/kernel_breakdown.h"
#include "analysis/breakdown/time_breakdown.h"
#include "analysis/comm/comm_cross_rank.h"
#include "analysis/core/hardware_profile.h"
#include "model/trace.h"

namespace tuneprof {

enum class DataColumnType : uint8_t { kInt64, kFloat64, kString };

// One column. Strings are dictionary-encoded (a code per row into `categories`, each string once), as
// pandas categoricals and Arrow dictionaries hold them. numpy arrays and Arrow buffers view these vectors
// in place: a table is built once and never copied again.
struct DataColumn {
  std::string name;
  DataColumnType type = DataColumnType::kInt64;
  // An integer equal to this is absent (NULL in SQL); the tables use -1 as HTA does for ids and sizes.
  bool has_null_value = false;
  int64_t null_value = -1;
  std::vector<int64_t> ints;
  std::vector<double> floats;  // NaN is absent
  std::vector<int32_t> codes;
  std::vector<std::string> categories;

  size_t size() const;
};

struct DataTable {
  std::string name;
  std::vector<DataColumn> columns;
  size_t rows() const { return columns.empty() ? 0 : columns.front().size(); }
  const DataColumn* Find(std::string_view column) const;
};

// What the tables are built from: the traces and, for the tables that need them, the analyses (nullptr
// or empty when not run; those tables are then empty).
struct RunTablesInput {
  const std::vector<Trace>* traces = nullptr;
  const std::vector<RankBreakdown>* breakdowns = nullptr;
  const std::vector<KernelBreakdown>* kernels = nullptr;
  const std::vector<HardwareSelection>* hardware = nullptr;
  const AdvisorResult* advice = nullptr;
  const CommAnalysis* comm = nullptr;
};

// The names BuildTable accepts, in the order export --sqlite writes them. "events" first.
const std::vector<std::string>& RunTableNames();
// True when the table reads analyses (steps, operators, collectives, findings, utilizations, ranks' hardware).
bool TableNeedsAnalysis(std::string_view name);

// `name` is one of RunTableNames(); an unknown name gives an empty table of that name.
DataTable BuildTable(std::string_view name, const RunTablesInput& input);

// What the tables cannot hold of these traces, one line per rank, for the writer to warn about: a torch_npu
// rank without a device timeline has its kernel_details rows in `kernels` but no `operators` rows, since
// kernel_details names operator types, not the host operators that launched them.
std::vector<std::string> TableGaps(const std::vector<Trace>& traces);

}  // namespace tuneprof

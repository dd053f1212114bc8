#pragma once
// The CSV summaries of a torch_npu ASCEND_PROFILER_OUTPUT/ directory, read into the model's side
// tables. Columns are found by name: every torch_npu / CANN version writes a
// different header (Step Id and Device_id optional, Block Dim renamed Block Num, PMU sets per run).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "importers/csv/csv_reader.h"
#include "model/trace_builder.h"

namespace tuneprof {

// kernel_details.csv (or msprof op_summary naming) -> Trace::kernel_details(). Columns the model does
// not name are kept as metric columns (the PMU counters). A file that is not a kernel_details table
// is an error; a cell that does not parse is a warning naming the row, and the row is kept.
Status ReadKernelDetails(CsvReader* csv, SideTableBuilder* out);

// The rows still to come in `csv`, estimated from the bytes its first rows took, once, at its
// kRowsBeforeEstimate-th row; 0 at any other row. A table reserved by it grows once instead of doubling.
// Bounded by one row per kMinRowBytes of input, so that a misleading start reserves little address space.
inline constexpr uint64_t kRowsBeforeEstimate = 1024;
size_t RowsStillToCome(const CsvReader& csv);

// One warning for the rows `csv` skipped for their cell count, when it skipped any.
void WarnDroppedRows(const CsvReader& csv, SideTableBuilder* out);

// Calls `row()` with `csv` on each of its records in turn, then warns of the rows it skipped for their
// cell count (WarnDroppedRows); a record that does not read ends the loop and is the error returned.
template <typename RowFn>
Status ForEachRecord(CsvReader* csv, SideTableBuilder* out, RowFn row) {
  for (;;) {
    TP_ASSIGN_OR_RETURN(bool more, csv->Next());
    if (!more) break;
    row();
  }
  WarnDroppedRows(*csv, out);
  return Status::Ok();
}

// As ForEachRecord, first calling `reserve` on `out` with the rows still to come once RowsStillToCome
// estimates them.
template <typename RowFn>
Status ForEachRecord(CsvReader* csv, SideTableBuilder* out, void (SideTableBuilder::*reserve)(size_t), RowFn row) {
  return ForEachRecord(csv, out, [&] {
    if (const size_t expected = RowsStillToCome(*csv)) (out->*reserve)(expected);
    row();
  });
}

// step_trace_time.csv -> Trace::reported_step_times(), exact ns.
Status ReadStepTraceTime(CsvReader* csv, SideTableBuilder* out);

// msprof-analyze's cluster_step_trace_time.csv: the same columns plus Type and Index, one row per rank
// (Type "rank", Index its id) and per pipeline stage (Type "stage", Index its ranks, "(0, 1, 2, 3)").
// Calls `add` for each rank row and `stage` (when set) with each stage row's ranks, in file order; cell
// problems are warnings on `warnings`.
Status ReadClusterStepTraceTime(CsvReader* csv, SideTableBuilder* warnings,
                                const std::function<void(int64_t rank, const ReportedStepTime& row)>& add,
                                const std::function<void(std::vector<int64_t> ranks)>& stage = {});

}  // namespace tuneprof

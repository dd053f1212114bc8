#pragma once
// What the tests of the Ascend CSV tables share: a table given as text, read by its reader into a fresh
// trace's side tables, and the figures of a step_trace_time.csv row compared whole.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "base/status.h"
#include "importers/csv/csv_reader.h"
#include "model/trace_builder.h"

namespace tuneprof::ascend_csv {

// A reader of one Ascend CSV table into the side tables.
using TableReader = Status (*)(CsvReader* csv, SideTableBuilder* out);

// `text`, named `file`, read by `read` into an empty trace; `*status` is the reader's answer. A text the
// CSV reader refuses fails the calling test and leaves the trace empty.
inline Trace ReadTable(std::string_view file, std::string text, TableReader read, Status* status) {
  Trace trace = TraceBuilder("test").Finish();
  SideTableBuilder out(&trace);
  auto csv = CsvReader::FromText(std::string(file), std::move(text));
  EXPECT_TRUE(csv.ok()) << csv.status().message();
  if (!csv.ok()) return trace;
  *status = read(&csv.value(), &out);
  return trace;
}

// As ReadTable, for a text the reader must accept.
inline Trace ReadGoodTable(std::string_view file, std::string text, TableReader read) {
  Status status;
  Trace trace = ReadTable(file, std::move(text), read, &status);
  EXPECT_TRUE(status.ok()) << status.message();
  return trace;
}

// The step_trace_time.csv row of level-1 rank 0 in msinsight's text samples, whose figures the tests
// of that table read inline and from the corpus file; in the file's column order, Device_id (absent) first.
inline ReportedStepTime Level1Rank0StepTime() {
  return ReportedStepTime{kNoId,    50,        8873756, 101963203, 4028675, 105991878,
                          25744050, 136581000, 0,       101963203, 17902500};
}

// Every figure of a step_trace_time.csv row, in the file's column order, to compare rows whole.
inline auto Figures(const ReportedStepTime& s) {
  return std::tuple(s.device_id, s.step, s.computing_ns, s.communication_not_overlapped_ns, s.overlapped_ns,
                    s.communication_ns, s.free_ns, s.stage_ns, s.bubble_ns,
                    s.communication_not_overlapped_exclude_receive_ns, s.preparing_ns);
}

// Expects each figure of `actual` to be that of `expected`.
inline void ExpectStepTime(const ReportedStepTime& actual, const ReportedStepTime& expected) {
  EXPECT_EQ(Figures(actual), Figures(expected));
}

}  // namespace tuneprof::ascend_csv

#pragma once
// What the tests of the Ascend CSV tables share: a table given as text, read by its reader into a fresh
// trace's side tables.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
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

}  // namespace tuneprof::ascend_csv

#pragma once
// torch_npu's memory CSVs in ASCEND_PROFILER_OUTPUT/ (profile_memory=True), read into
// the model's side tables. Columns are found by name (the 2023 memory_record.csv has five).
#include "base/status.h"
#include "importers/csv/csv_reader.h"
#include "model/trace_builder.h"

namespace tuneprof {

// memory_record.csv -> Trace::npu_memory_records(), in file order. Sizes are MB of 2^20 bytes, converted
// exactly (torch_npu writes bytes / 2^20, a binary fraction). A file that is not a memory_record table
// is an error; a cell that does not parse is a warning naming the row, and the row is kept.
Status ReadMemoryRecord(CsvReader* csv, SideTableBuilder* out);

// operator_memory.csv -> Trace::npu_operator_memory(), in file order. Size(KB) is bytes / 2^10, converted
// exactly; an empty Release Time is a block still held when the window closed. A file that is not an
// operator_memory table is an error; a cell that does not parse is a warning naming the row, and the
// row is dropped (a block without its size or allocation time cannot be placed).
Status ReadOperatorMemory(CsvReader* csv, SideTableBuilder* out);

// "2109.6015625" MB -> bytes; false when the text is not a number.
bool ParseMebibytes(std::string_view text, int64_t* bytes);
// "18816.5" KB -> bytes.
bool ParseKibibytes(std::string_view text, int64_t* bytes);

}  // namespace tuneprof

#pragma once
// A table as an Arrow C stream (the Arrow C data and C stream interfaces, ABI-stable C structs), so that
// polars, pyarrow and duckdb take it through __arrow_c_stream__ without pyarrow being installed here and
// without copying the numbers: integer and float columns hand over the table's own buffers; string
// columns are dictionaries (int32 codes into a utf8 array of the distinct values), as pandas categoricals.
#include <cstdint>
#include <memory>

#include "report/tables/run_tables.h"

// The structs of the Arrow C data interface and C stream interface, as the specification defines them
// (they are an ABI: field order and types are fixed).
extern "C" {
struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};
}

namespace tuneprof::python {

// Fills `out` with a stream of one record batch (the whole table); the stream keeps `table` alive until
// its consumer releases it.
void ExportArrowStream(std::shared_ptr<const DataTable> table, ArrowArrayStream* out);

}  // namespace tuneprof::python

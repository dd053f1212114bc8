// libFuzzer target: arbitrary bytes as torch_npu CSV summaries, through the CSV reader and the
// kernel_details / step_trace_time readers that `tuneprof info` runs on an Ascend directory. Byte 0
// picks the table; the rest is the file text. Any outcome is fine except a crash, hang or leak.
#include <cstdint>
#include <string>

#include "importers/ascend/ascend_tables.h"
#include "importers/csv/csv_reader.h"
#include "model/trace.h"
#include "model/trace_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  if (size == 0) return 0;
  const bool kernel_details = (data[0] & 1) == 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto csv = CsvReader::FromText(kernel_details ? "kernel_details.csv" : "step_trace_time.csv", std::move(text));
  if (!csv.ok()) return 0;
  Trace trace;
  SideTableBuilder tables(&trace);
  Status status = kernel_details ? ReadKernelDetails(&*csv, &tables) : ReadStepTraceTime(&*csv, &tables);
  (void)status;
  return 0;
}

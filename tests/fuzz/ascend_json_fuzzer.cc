// libFuzzer target: arbitrary bytes as torch_npu's communication summaries (communication.json and
// communication_matrix.json), through the streaming readers an Ascend rank directory goes through. Byte 0
// picks the file; the rest is its text. Any outcome is fine except a crash, hang or leak.
#include <cstdint>
#include <string_view>

#include "importers/ascend/ascend_communication.h"
#include "model/trace.h"
#include "model/trace_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  if (size == 0) return 0;
  const bool matrix = (data[0] & 1) != 0;
  const std::string_view json(reinterpret_cast<const char*>(data) + 1, size - 1);
  Trace trace;
  SideTableBuilder tables(&trace);
  Status status = matrix ? ReadCommunicationMatrixJson(json, "communication_matrix.json", &tables)
                         : ReadCommunicationJson(json, "communication.json", &tables);
  (void)status;
  return 0;
}

// libFuzzer target: arbitrary bytes as torch_npu's communication summaries (communication.json and
// communication_matrix.json) and msprof-analyze's cluster_communication.json, through the streaming
// readers an Ascend rank directory and a cluster_analysis_output/ go through. Byte 0 picks the file (bit 1:
// the cluster file, its ranks 0-3 read into four traces; else bit 0: the matrix); the rest is its text.
// Any outcome is fine except a crash, hang or leak.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "importers/ascend/ascend_communication.h"
#include "model/trace.h"
#include "model/trace_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  if (size == 0) return 0;
  const bool matrix = (data[0] & 1) != 0;
  const std::string_view json(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 2) != 0) {
    std::array<Trace, 4> ranks;
    std::vector<SideTableBuilder> builders;
    for (Trace& rank : ranks) builders.emplace_back(&rank);
    auto read = ReadClusterCommunicationJson(json, "cluster_communication.json", [&](int64_t rank) {
      return rank >= 0 && rank < 4 ? &builders[static_cast<size_t>(rank)] : nullptr;
    });
    (void)read;
    return 0;
  }
  Trace trace;
  SideTableBuilder tables(&trace);
  Status status = matrix ? ReadCommunicationMatrixJson(json, "communication_matrix.json", &tables)
                         : ReadCommunicationJson(json, "communication.json", &tables);
  (void)status;
  return 0;
}

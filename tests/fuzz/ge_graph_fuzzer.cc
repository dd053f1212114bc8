// libFuzzer target: arbitrary bytes as a GE graph dump (protobuf text, ModelDef or ONNX form), read through
// the path-based streaming reader with small limits (so that deep nesting, long strings and many ops reach
// their errors quickly). Any outcome is fine except a crash, hang or leak; an error keeps no op of the file.
#include <cstdint>
#include <cstdlib>

#include "importers/ascend/ge_graph.h"
#include "model/trace.h"
#include "model/trace_builder.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tuneprof;
  const std::string& path = fuzz::ScratchPath("ge_graph", "_Build.txt");
  if (!fuzz::WriteScratch(path, data, size)) std::abort();
  GeGraphLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_depth = 32;
  limits.max_string_bytes = 4096;
  limits.max_ops = 10'000;
  Trace trace;
  SideTableBuilder out(&trace);
  const Status status = ReadGeGraphDump(path, &out, limits);
  const GeGraphTable& table = trace.ge_graphs();
  if (!status.ok() && !table.ops.empty()) std::abort();  // a failed dump must leave nothing behind
  for (const GeGraphOp& op : table.ops) {
    for (uint32_t input : op.inputs) {
      if (input >= table.ops.size()) std::abort();  // inputs index ops of the table
    }
  }
  return 0;
}

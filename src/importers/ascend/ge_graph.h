#pragma once
// GE's graph dumps (DUMP_GE_GRAPH=1|2|3): the graph the Ascend graph engine compiled, as protobuf text.
//   ge_proto_*_Build.txt  GE's ModelDef: graph { name: ... op { name: ... type: ... input: "op:0"
//                          output_desc { dtype: DT_FLOAT16 shape { dim: 8 dim: 128 } } attr { ... } } }
//   ge_onnx_*.pbtxt        the same graph as an ONNX ModelProto: graph { node { name op_type input output } }
// An extra of a torch_npu rank directory, not a trace of its own: the ops go to the trace's GeGraphTable
// (model/trace.h), where the graph-fusion check reads them.
//
// The reader streams the file through a fixed buffer and keeps only the ops; attributes, weights and nested
// graphs inside attributes are skipped. Hostile input stays bounded: nesting, string, token and op counts
// have limits, and any malformed text is one error naming the file and line.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "model/trace_builder.h"

namespace tuneprof {

// Whether `name` (a file name, no directory) is one of GE's graph dumps that are read.
bool IsGeGraphDumpName(std::string_view name);

// Limits on one dump; GeGraphLimits{} holds the defaults.
struct GeGraphLimits {
  uint64_t max_bytes = uint64_t{4} << 30;  // a Build.txt of a large model with its weights elided
  uint32_t max_depth = 64;                 // nested messages
  uint32_t max_string_bytes = 1 << 20;     // one quoted string or token
  uint32_t max_ops = 4'000'000;            // ops over all of a table's dumps
  uint32_t max_dims = 64;                  // dimensions of one output
  uint32_t max_inputs = 65'536;            // data inputs of one op
};

// Reads the dump at `path` and appends its ops (and the file) to `out`'s GeGraphTable. An error (the file
// unreadable, malformed text, a limit passed) names `path`, the line and the cause; the table then holds
// none of this file's ops.
Status ReadGeGraphDump(const std::string& path, SideTableBuilder* out, const GeGraphLimits& limits = {});

// Reads every GE graph dump directly in `dir`, in name order; a dump that cannot be read is a warning on
// `out`. Returns how many files were found.
uint64_t ReadGeGraphDumps(const std::string& dir, SideTableBuilder* out);

}  // namespace tuneprof

#pragma once
// torch_npu's communication summaries in ASCEND_PROFILER_OUTPUT/, read into
// Trace::communication():
//   communication.json         {step: {"p2p"|"collective": {"<op>@<group>": {Communication Time Info,
//                               Communication Bandwidth Info: {transport: {..., Size Distribution}}}}}}
//   communication_matrix.json  {step: {"p2p"|"collective": {"<type>-<top1|...|total>@<group>":
//                               {"<src>-<dst>": {Transport Type, Transit Size(MB), ...}}}}}
// Both are streamed with simdjson On-Demand, one pass, no document tree. Unknown keys are skipped;
// a value of the wrong type is an error naming the file and the key.
#include <string>
#include <string_view>

#include "base/status.h"
#include "model/trace_builder.h"

namespace tuneprof {

// Parses communication.json text (padded by the caller or not) into `out`; `origin` names it in errors.
Status ReadCommunicationJson(std::string_view json, std::string_view origin, SideTableBuilder* out);

// Parses communication_matrix.json text into `out`.
Status ReadCommunicationMatrixJson(std::string_view json, std::string_view origin, SideTableBuilder* out);

// Reads the file at `path` with the function above that fits; a missing file is not an error.
Status ReadCommunicationFile(const std::string& path, SideTableBuilder* out);
Status ReadCommunicationMatrixFile(const std::string& path, SideTableBuilder* out);

}  // namespace tuneprof

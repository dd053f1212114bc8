#pragma once
// Renders `tuneprof comm`: per rank a table of collectives by type (≤ 100 columns), exposed vs hidden
// communication, the cross-rank wait split and straggler, torch_npu's transit/wait split and link
// matrix, and the verdict; or one JSON document (schema tuneprof.comm/1; `collectives[]` and
// `ranks[]` field names are a contract checked from outside).
#include <string>
#include <vector>

#include "analysis/comm/comm_cross_rank.h"
#include "base/json_writer.h"

namespace tuneprof {

std::string RenderCommText(const CommAnalysis& analysis);
// The JSON document with `warnings` as its last key, to `w`; RenderCommJson returns it whole.
void WriteCommJson(const CommAnalysis& analysis, const std::vector<std::string>& warnings, JsonWriter* w);
std::string RenderCommJson(const CommAnalysis& analysis, const std::vector<std::string>& warnings);

}  // namespace tuneprof

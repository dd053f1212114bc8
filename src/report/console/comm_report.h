#pragma once
// Renders `tuneprof comm`: per rank a table of collectives by type (≤ 100 columns), exposed vs hidden
// communication, the cross-rank wait split and straggler, torch_npu's transit/wait split and link
// matrix, and the verdict; or one JSON document (schema tuneprof.comm/1; `collectives[]` and
// `ranks[]` field names are a contract checked from outside).
#include <string>

#include "analysis/comm/comm_cross_rank.h"

namespace tuneprof {

std::string RenderCommText(const CommAnalysis& analysis);
std::string RenderCommJson(const CommAnalysis& analysis);

}  // namespace tuneprof

#pragma once
// Renders `tuneprof info`: a human summary, or one JSON document (schema tuneprof.info/1).
#include <string>
#include <vector>

#include "analysis/breakdown/trace_summary.h"

namespace tuneprof {

std::string RenderInfoText(const std::vector<TraceSummary>& summaries);
std::string RenderInfoJson(const std::vector<TraceSummary>& summaries);

}  // namespace tuneprof

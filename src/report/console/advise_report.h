#pragma once
// Renders the advisor (analysis/advisor/advisor.h): `tuneprof analyze` prints a one-screen summary (the
// step-time split, the three utilizations against their thresholds, the verdict and the top
// strategies; at most 40 lines of at most 100 columns), `tuneprof advise` every finding with its
// evidence. Both as JSON: schema tuneprof.advise/1 (contract: dominant_bottleneck, findings[] with id,
// category, estimated_gain_us, evidence, strategy) and tuneprof.analyze/1 (the same document).
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "base/json_writer.h"

namespace tuneprof {

std::string RenderAnalyzeText(const AdvisorResult& result);
std::string RenderAdviseText(const AdvisorResult& result);
// `schema`: "tuneprof.advise/1" or "tuneprof.analyze/1".
// The document with `warnings` as its last key, to `w`; RenderAdviseJson returns it whole.
void WriteAdviseJson(const AdvisorResult& result, std::string_view schema, const std::vector<std::string>& warnings,
                     JsonWriter* w);
std::string RenderAdviseJson(const AdvisorResult& result, std::string_view schema,
                             const std::vector<std::string>& warnings);

}  // namespace tuneprof

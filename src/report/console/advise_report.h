#pragma once
// Renders the advisor (analysis/advisor/advisor.h): `tuneprof analyze` prints a one-screen summary (the
// step-time split, the three utilizations against their thresholds, the verdict and the top
// strategies; at most 40 lines of at most 100 columns), `tuneprof advise` every finding with its
// evidence. Both as JSON: schema tuneprof.advise/1 (contract: dominant_bottleneck, findings[] with id,
// category, estimated_gain_us, evidence, strategy) and tuneprof.analyze/1 (the same document).
#include <string>
#include <string_view>

#include "analysis/advisor/advisor.h"

namespace tuneprof {

std::string RenderAnalyzeText(const AdvisorResult& result);
std::string RenderAdviseText(const AdvisorResult& result);
// `schema`: "tuneprof.advise/1" or "tuneprof.analyze/1".
std::string RenderAdviseJson(const AdvisorResult& result, std::string_view schema);

}  // namespace tuneprof

#include "analysis/advisor/rules/finding_specs.h"

#include <cstdlib>

#include "analysis/advisor/platform.h"

namespace tuneprof {
namespace {

void AddApis(std::string_view lines, Finding* f) {
  while (true) {
    const size_t end = lines.find('\n');
    f->apis.emplace_back(lines.substr(0, end));
    if (end == std::string_view::npos) return;
    lines.remove_prefix(end + 1);
  }
}

}  // namespace

const FindingSpec* FindingSpecOf(std::string_view id) {
  for (const FindingSpec& spec : FindingSpecs()) {
    if (spec.id == id) return &spec;
  }
  return nullptr;
}

Finding NewFinding(std::string_view id, const RankEvidence& rank, const AdvisorConfig& config) {
  const FindingSpec* spec = FindingSpecOf(id);
  if (spec == nullptr) std::abort();  // a rule emits an id the table lacks
  Finding f;
  f.id = spec->id;
  f.category = spec->category;
  f.saves_from = spec->saves_from;
  if (!spec->metric.empty()) f.metric = spec->metric;
  f.unit = std::string(spec->unit);
  if (!spec->threshold.empty()) f.threshold = config.Get(spec->threshold);
  f.gain_model = std::string(spec->gain_model);
  f.strategy = std::string(spec->strategy);
  if (spec->apis.any) AddApis(ForPlatform(rank, spec->apis.cuda, spec->apis.npu, spec->apis.cpu), &f);
  return f;
}

}  // namespace tuneprof

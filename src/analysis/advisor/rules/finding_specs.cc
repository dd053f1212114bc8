#include "analysis/advisor/rules/finding_specs.h"

#include <array>
#include <cstdlib>

#include "analysis/advisor/platform.h"
#include "base/enum_names.h"

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

std::string_view GainKindWords(GainKind kind) {
  static constexpr std::array<std::string_view, 5> kWords = {
      "", "upper bound: ", "unknown: ", "partly unknown: ", "none claimed: "};
  return EnumName(kind, kWords, "");
}

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
  f.gain_model = std::string(GainKindWords(spec->gain)) + std::string(spec->gain_model);
  f.strategy = std::string(spec->strategy);
  if (spec->apis.any) AddApis(ForPlatform(rank, spec->apis.cuda, spec->apis.npu, spec->apis.cpu), &f);
  return f;
}

}  // namespace tuneprof

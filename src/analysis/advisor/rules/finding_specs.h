#pragma once
// What a finding says whatever the data, by id: its category, the part of the step it saves time from,
// its metric, unit and threshold key, how its gain is estimated, its strategy and the APIs it names on
// each platform. A rule starts each finding from its row (NewFinding) and sets only what depends on the
// data: title, value, evidence, gain, and any field its row leaves to it.
#include <cstdint>
#include <span>
#include <string_view>

#include "analysis/advisor/advisor.h"

namespace tuneprof {

// The APIs a finding names on each platform, one per line. A platform's "" names one empty API, as a
// rule that had nothing to say there always did, so that outputs keep their shape.
struct PlatformApis {
  bool any = false;  // false: the row leaves the APIs to the rule (or there are none)
  std::string_view cuda;
  std::string_view npu;
  std::string_view cpu;
};

// The same APIs on every platform.
constexpr PlatformApis SameApis(std::string_view all) { return PlatformApis{true, all, all, all}; }
constexpr PlatformApis ApisPerPlatform(std::string_view cuda, std::string_view npu, std::string_view cpu) {
  return PlatformApis{true, cuda, npu, cpu};
}

// What kind of estimate a finding's gain is. Its words open the gain model's ("unknown: ..."), which is
// how the reports and Finding::gain_unknown tell an unknown gain from a measured 0.
enum class GainKind : uint8_t { kEstimated, kUpperBound, kUnknown, kPartlyUnknown, kNoneClaimed };

// The words that open a gain model of `kind`: "" for an estimate, else e.g. "unknown: ".
std::string_view GainKindWords(GainKind kind);

struct FindingSpec {
  std::string_view id;
  FindingCategory category = FindingCategory::kCompute;
  TimePart saves_from = TimePart::kIdle;
  std::string_view metric;
  std::string_view unit;
  // The advisor_config.h key its threshold reads; "" where the rule works its threshold out itself.
  std::string_view threshold;
  GainKind gain = GainKind::kEstimated;
  // How its gain is estimated, after the kind's words; "" where the rule's words depend on the data.
  std::string_view gain_model;
  // What to change; "" where the rule's words depend on the data.
  std::string_view strategy;
  PlatformApis apis;
};

// Every finding with a row (ids are unique), in the rules' order: the finding rows of rules/catalogue.json.
std::span<const FindingSpec> FindingSpecs();

// The row of `id`; nullptr when it has none.
const FindingSpec* FindingSpecOf(std::string_view id);

// A finding `id` with its row's fields filled in for `rank`'s platform, its threshold read from
// `config`. Aborts on an id without a row (a programming error).
Finding NewFinding(std::string_view id, const RankEvidence& rank, const AdvisorConfig& config);

}  // namespace tuneprof

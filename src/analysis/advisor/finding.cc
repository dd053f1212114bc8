#include "analysis/advisor/finding.h"

#include <array>

#include "base/enum_names.h"

namespace tuneprof {

std::string_view FindingCategoryName(FindingCategory category) {
  static constexpr std::array<std::string_view, 7> kNames = {"compute", "memory", "communication", "host",
                                                             "launch",  "data",   "config"};
  return EnumName(category, kNames, "?");
}

std::string_view BottleneckName(Bottleneck bottleneck) {
  static constexpr std::array<std::string_view, 7> kNames = {"compute", "memory", "communication", "host",
                                                             "data",    "idle",   "none"};
  return EnumName(bottleneck, kNames, "?");
}

std::string_view TimePartName(TimePart part) {
  static constexpr std::array<std::string_view, 10> kNames = {
      "compute_bound", "memory_bound", "communication",   "memcpy",       "host",
      "data",          "idle",         "pipeline_bubble", "unclassified", "fused_comm"};
  static_assert(kNames.size() == static_cast<size_t>(TimePart::kCount));
  return EnumName(part, kNames, "?");
}

}  // namespace tuneprof

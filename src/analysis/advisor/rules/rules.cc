#include "analysis/advisor/rules/rules.h"

#include <algorithm>
#include <vector>

// RuleCatalogue(), FindingSpecs() and AllRules() are the tables generated from rules/catalogue.json
// (cmake/advisor_catalogue.cmake); what follows reads them.

namespace tuneprof {

std::vector<std::string_view> SplitWords(std::string_view list) {
  std::vector<std::string_view> words;
  while (!list.empty()) {
    const size_t space = std::min(list.find(' '), list.size());
    if (space > 0) words.push_back(list.substr(0, space));
    list.remove_prefix(std::min(space + 1, list.size()));
  }
  return words;
}

bool RuleReadsOtherRanks(RuleFunction rule) {
  return std::any_of(kRuleCatalogue.begin(), kRuleCatalogue.end(),
                     [&](const RuleSpec& spec) { return spec.run == rule && spec.reads_other_ranks; });
}

RuleFunction RuleEmitting(std::string_view id) {
  for (const RuleSpec& spec : kRuleCatalogue) {
    for (std::string_view emitted : SplitWords(spec.ids)) {
      if (emitted == id) return spec.run;
    }
  }
  return nullptr;
}

}  // namespace tuneprof

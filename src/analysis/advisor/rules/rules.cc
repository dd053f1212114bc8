#include "analysis/advisor/rules/rules.h"

#include <algorithm>
#include <vector>

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

std::span<const RuleFunction> AllRules() {
  static const std::vector<RuleFunction> kRules = [] {
    std::vector<RuleFunction> rules;
    for (const RuleSpec& spec : kRuleCatalogue) rules.push_back(spec.run);
    return rules;
  }();
  return kRules;
}

bool RuleReadsOtherRanks(RuleFunction rule) {
  return std::any_of(kRuleCatalogue.begin(), kRuleCatalogue.end(),
                     [&](const RuleSpec& spec) { return spec.run == rule && spec.reads_other_ranks; });
}

}  // namespace tuneprof

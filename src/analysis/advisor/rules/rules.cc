#include "analysis/advisor/rules/rules.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tuneprof {
namespace {

// The registrations in run order, as the catalogue and the finding table read them.
struct Catalogue {
  std::vector<RuleSpec> rules;
  std::vector<std::string> ids;  // each rule's ids, which its RuleSpec points into
  std::vector<FindingSpec> findings;
};

Catalogue BuildCatalogue() {
  std::vector<const RuleRegistration*> registered(RegisteredRules().begin(), RegisteredRules().end());
  std::stable_sort(registered.begin(), registered.end(),
                   [](const RuleRegistration* a, const RuleRegistration* b) { return a->row.order < b->row.order; });
  Catalogue catalogue;
  catalogue.ids.reserve(registered.size());  // the RuleSpecs' views must not move
  for (const RuleRegistration* rule : registered) {
    std::string& ids = catalogue.ids.emplace_back();
    for (const FindingSpec& finding : rule->findings) {
      if (!ids.empty()) ids += ' ';
      ids += finding.id;
      catalogue.findings.push_back(finding);
    }
    catalogue.rules.push_back({rule->run, ids, rule->row.thresholds, rule->row.reads_other_ranks});
  }
  return catalogue;
}

const Catalogue& TheCatalogue() {
  static const Catalogue kCatalogue = BuildCatalogue();
  return kCatalogue;
}

}  // namespace

std::vector<std::string_view> SplitWords(std::string_view list) {
  std::vector<std::string_view> words;
  while (!list.empty()) {
    const size_t space = std::min(list.find(' '), list.size());
    if (space > 0) words.push_back(list.substr(0, space));
    list.remove_prefix(std::min(space + 1, list.size()));
  }
  return words;
}

std::span<const RuleSpec> RuleCatalogue() { return TheCatalogue().rules; }

std::span<const FindingSpec> FindingSpecs() { return TheCatalogue().findings; }

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

RuleFunction RuleEmitting(std::string_view id) {
  for (const RuleSpec& spec : kRuleCatalogue) {
    for (std::string_view emitted : SplitWords(spec.ids)) {
      if (emitted == id) return spec.run;
    }
  }
  return nullptr;
}

}  // namespace tuneprof

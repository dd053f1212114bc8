// The rule catalogue holds together: every rule once, ids unique, thresholds that exist, the finding rows
// in the rules' order, and the fusion rule's ids those of the fusion library.
#include "analysis/advisor/rules/rules.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "analysis/advisor/advisor_config.h"
#include "analysis/advisor/fusion_patterns.h"

namespace tuneprof {
namespace {

TEST(RuleCatalogue, EveryRuleOnceWithUniqueIds) {
  std::set<RuleFunction> rules;
  std::set<std::string_view> ids;
  for (const RuleSpec& spec : kRuleCatalogue) {
    EXPECT_TRUE(rules.insert(spec.run).second) << spec.ids;
    EXPECT_FALSE(SplitWords(spec.ids).empty());
    for (std::string_view id : SplitWords(spec.ids)) EXPECT_TRUE(ids.insert(id).second) << id << " twice";
  }
  EXPECT_EQ(AllRules().size(), kRuleCatalogue.size());
}

TEST(RuleCatalogue, ThresholdsExist) {
  std::set<std::string_view> keys;
  for (const ThresholdSpec& spec : ThresholdSpecs()) keys.insert(spec.key);
  for (const RuleSpec& spec : kRuleCatalogue) {
    for (std::string_view key : SplitWords(spec.thresholds)) EXPECT_TRUE(keys.contains(key)) << key;
  }
}

TEST(RuleCatalogue, FusionRuleEmitsTheLibrarysIds) {
  std::set<std::string_view> fusion;
  for (const RuleSpec& spec : kRuleCatalogue) {
    if (spec.run != RuleFusionPatterns) continue;
    for (std::string_view id : SplitWords(spec.ids)) fusion.insert(id);
  }
  std::set<std::string_view> library = {kElementwiseChainId};
  for (const FusionPattern& pattern : FusionLibrary()) library.insert(pattern.id);
  EXPECT_EQ(fusion, library);
}

TEST(RuleCatalogue, ReadsOtherRanksFollowsTheRows) {
  EXPECT_TRUE(RuleReadsOtherRanks(RuleCommStraggler));
  EXPECT_TRUE(RuleReadsOtherRanks(RuleMoeExpertBalance));
  EXPECT_FALSE(RuleReadsOtherRanks(RuleDataLoader));
}

TEST(RuleCatalogue, FindingRowsFollowTheRulesOrder) {
  std::vector<std::string_view> listed;
  for (const RuleSpec& spec : kRuleCatalogue) {
    for (std::string_view id : SplitWords(spec.ids)) listed.push_back(id);
  }
  std::vector<std::string_view> rows;
  for (const FindingSpec& spec : FindingSpecs()) rows.push_back(spec.id);
  EXPECT_EQ(rows, listed);
}

TEST(RuleCatalogue, RuleEmittingFindsTheRuleOfAnId) {
  EXPECT_EQ(RuleEmitting("data.slow_dataloader"), RuleDataLoader);
  EXPECT_EQ(RuleEmitting("fusion.rotary"), RuleFusionPatterns);
  EXPECT_EQ(RuleEmitting("no.such_id"), nullptr);
}

TEST(RuleCatalogue, SplitWordsSkipsRepeatedSpaces) {
  EXPECT_EQ(SplitWords(" a  b "), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_TRUE(SplitWords("").empty());
}

}  // namespace
}  // namespace tuneprof

// docs/advisor.md lists every threshold with the default the code uses, and every rule id of the
// catalogue (rules/rules.h RuleCatalogue(), what the rule files register) in its Rules table and nothing
// else there: a threshold or rule added, renamed or removed without the documentation fails here, and so
// does a registration the build's list missed. docs/json/advise.md names only ids the catalogue has.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "analysis/advisor/advisor_config.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

std::string ReadDoc(const std::string& path = "docs/advisor.md") {
  std::ifstream in(std::string(TUNEPROF_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::set<std::string> CatalogueIds() {
  std::set<std::string> ids;
  for (const RuleSpec& spec : kRuleCatalogue) {
    for (std::string_view id : SplitWords(spec.ids)) ids.emplace(id);
  }
  return ids;
}

// The ids in the first column of docs/advisor.md's Rules table: `a.b`, or a family written
// "`fusion.*`: attention, rms_norm" (fusion.attention, fusion.rms_norm).
std::set<std::string> DocumentedRuleIds(const std::string& doc) {
  const size_t begin = doc.find("\n## Rules\n");
  const size_t end = doc.find("\n#", begin + 1);
  std::istringstream table(doc.substr(begin, end - begin));
  static const std::regex kId("`([a-z_]+)\\.([a-z0-9_*]+)`(: ([a-z0-9_, ]+))?");
  std::set<std::string> ids;
  for (std::string line; std::getline(table, line);) {
    if (!line.starts_with("| `")) continue;
    const std::string cell = line.substr(2, line.find(" |", 2) - 2);
    for (std::sregex_iterator it(cell.begin(), cell.end(), kId), stop; it != stop; ++it) {
      const std::string family = (*it)[1];
      if ((*it)[2] != "*") {
        ids.insert(family + "." + std::string((*it)[2]));
        continue;
      }
      std::istringstream members((*it)[4]);
      for (std::string member; std::getline(members, member, ',');) {
        ids.insert(family + "." + member.substr(member.find_first_not_of(' ')));
      }
    }
  }
  return ids;
}

TEST(AdvisorDocs, EveryThresholdIsDocumentedWithItsDefault) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty());
  for (const ThresholdSpec& spec : ThresholdSpecs()) {
    const std::string row = fmt::format("| `{}` | {} | {} |", spec.key, spec.default_value, spec.unit);
    EXPECT_NE(doc.find(row), std::string::npos) << "docs/advisor.md lacks the row " << row;
  }
}

TEST(AdvisorDocs, EveryCatalogueRuleIsDocumented) {
  const std::set<std::string> documented = DocumentedRuleIds(ReadDoc());
  ASSERT_FALSE(documented.empty());
  for (const std::string& id : CatalogueIds()) {
    EXPECT_TRUE(documented.contains(id)) << "docs/advisor.md's Rules table lacks " << id;
  }
}

TEST(AdvisorDocs, EveryDocumentedRuleIsInTheCatalogue) {
  const std::set<std::string> catalogue = CatalogueIds();
  for (const std::string& id : DocumentedRuleIds(ReadDoc())) {
    EXPECT_TRUE(catalogue.contains(id)) << "docs/advisor.md documents " << id << ", which no rule emits";
  }
}

// advise.md has no list of its own (its `id` field points at advisor.md's table); the ids it names must
// exist, and a family ("`fusion.*`") must have members.
TEST(AdvisorDocs, TheJsonDocNamesOnlyCatalogueIds) {
  const std::string doc = ReadDoc("docs/json/advise.md");
  ASSERT_FALSE(doc.empty());
  const std::set<std::string> catalogue = CatalogueIds();
  static const std::regex kId(
      "`((compute|fusion|host|data|memory|communication|pipeline|idle|config|moe)\\.[a-z0-9_*]+)`");
  for (std::sregex_iterator it(doc.begin(), doc.end(), kId), stop; it != stop; ++it) {
    const std::string id = (*it)[1];
    if (id.ends_with(".*")) {
      const std::string family = id.substr(0, id.size() - 1);
      const auto member = catalogue.lower_bound(family);
      EXPECT_TRUE(member != catalogue.end() && member->starts_with(family)) << "advise.md names " << id;
    } else {
      EXPECT_TRUE(catalogue.contains(id)) << "docs/json/advise.md names " << id << ", which no rule emits";
    }
  }
}

TEST(AdvisorDocs, TheGuidesThreeThresholdsKeepTheirDefaults) {
  const AdvisorConfig config;
  EXPECT_EQ(config.Get(threshold::kComputeUnitUtilizationPct), 70);
  EXPECT_EQ(config.Get(threshold::kMemoryBandwidthUtilizationPct), 60);
  EXPECT_EQ(config.Get(threshold::kCommunicationBandwidthUtilizationPct), 50);
}

}  // namespace
}  // namespace tuneprof

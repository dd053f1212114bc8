// docs/advisor.md lists every threshold with the default the code uses, and every rule id of the
// catalogue (rules/rules.h RuleCatalogue(), the rows of rules/catalogue.json) in its Rules table and
// nothing else there: a threshold or rule added, renamed or removed without the documentation fails here.
// The Rules table is written from the catalogue's "doc" fields (scripts/advisor_rules_table.py, `make
// advisor-docs`, whose --check is a ctest of its own); these checks read the table as written, so an id
// added to the catalogue without the table regenerated fails here too. docs/json/advise.md names only ids
// the catalogue has.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/advisor/advisor_config.h"
#include "analysis/advisor/rules/finding_specs.h"
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

// The rows of docs/advisor.md's Rules table.
std::vector<std::string> RuleRows(const std::string& doc) {
  const size_t begin = doc.find("\n## Rules\n");
  const size_t end = doc.find("\n#", begin + 1);
  std::istringstream table(doc.substr(begin, end - begin));
  std::vector<std::string> rows;
  for (std::string line; std::getline(table, line);) {
    if (line.starts_with("| `")) rows.push_back(line);
  }
  return rows;
}

// The ids of one row's first cell: `a.b`, several ("`a.b`, `a.c`"), or a family written
// "`fusion.*`: attention, rms_norm" (fusion.attention, fusion.rms_norm).
std::set<std::string> RowIds(const std::string& row) {
  static const std::regex kId("`([a-z_]+)\\.([a-z0-9_*]+)`(: ([a-z0-9_, ]+))?");
  std::set<std::string> ids;
  const std::string cell = row.substr(2, row.find(" |", 2) - 2);
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
  return ids;
}

std::set<std::string> DocumentedRuleIds(const std::string& doc) {
  std::set<std::string> ids;
  for (const std::string& row : RuleRows(doc)) ids.merge(RowIds(row));
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

// The category column says what advise prints in brackets and `category` holds: one of the row's words
// ("compute / memory" for a row of ids of both) is each id's own.
TEST(AdvisorDocs, EveryRowNamesItsFindingsCategory) {
  std::map<std::string, std::string> category;
  for (const FindingSpec& spec : FindingSpecs()) category[std::string(spec.id)] = FindingCategoryName(spec.category);
  for (const std::string& row : RuleRows(ReadDoc())) {
    const size_t begin = row.find(" | ") + 3;
    const std::string cell = row.substr(begin, row.find(" |", begin) - begin);
    for (const std::string& id : RowIds(row)) {
      if (!category.contains(id)) continue;  // EveryDocumentedRuleIsInTheCatalogue says so
      EXPECT_NE(cell.find(category[id]), std::string::npos)
          << "docs/advisor.md gives " << id << " the category '" << cell << "', advise prints " << category[id];
    }
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

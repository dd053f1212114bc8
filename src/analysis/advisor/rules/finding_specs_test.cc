// The finding table holds together with the rule catalogue: one row per id a rule emits, each threshold
// one its rule lists, and NewFinding fills a finding from its row for the rank's platform.
#include "analysis/advisor/rules/finding_specs.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// Each id the catalogue lists, with the thresholds its rule reads.
std::map<std::string_view, std::set<std::string_view>> CatalogueIds() {
  std::map<std::string_view, std::set<std::string_view>> ids;
  for (const RuleSpec& spec : kRuleCatalogue) {
    for (std::string_view id : SplitWords(spec.ids)) {
      for (std::string_view key : SplitWords(spec.thresholds)) ids[id].insert(key);
      ids.try_emplace(id);
    }
  }
  return ids;
}

TEST(FindingSpecs, OneRowPerIdTheCatalogueLists) {
  const auto ids = CatalogueIds();
  std::set<std::string_view> rows;
  for (const FindingSpec& spec : FindingSpecs()) {
    EXPECT_TRUE(rows.insert(spec.id).second) << spec.id << " twice";
    EXPECT_TRUE(ids.contains(spec.id)) << spec.id << " in no catalogue row";
  }
  for (const auto& [id, thresholds] : ids) EXPECT_TRUE(rows.contains(id)) << id;
}

TEST(FindingSpecs, ThresholdIsOneItsRuleReads) {
  const auto ids = CatalogueIds();
  for (const FindingSpec& spec : FindingSpecs()) {
    if (spec.threshold.empty() || !ids.contains(spec.id)) continue;
    EXPECT_TRUE(ids.at(spec.id).contains(spec.threshold)) << spec.id << ": " << spec.threshold;
  }
}

TEST(FindingSpecs, NewFindingFillsTheRowForThePlatform) {
  RankEvidence rank;
  AdvisorConfig config;
  Finding f = NewFinding("memory.exposed_memcpy", rank, config);
  EXPECT_EQ(std::string_view(f.id), "memory.exposed_memcpy");
  EXPECT_EQ(f.category, FindingCategory::kMemory);
  EXPECT_EQ(f.saves_from, TimePart::kMemcpy);
  EXPECT_EQ(f.unit, "% of step");
  EXPECT_EQ(f.threshold, config.Get(threshold::kExposedMemcpyPct));
  EXPECT_FALSE(f.value.has_value());
  ASSERT_EQ(f.apis.size(), 1u);
  EXPECT_TRUE(std::string_view(f.apis[0]).find("\"cuda\"") != std::string_view::npos);
  rank.on_npu = true;
  f = NewFinding("memory.exposed_memcpy", rank, config);
  ASSERT_EQ(f.apis.size(), 1u);
  EXPECT_TRUE(std::string_view(f.apis[0]).find("\"npu\"") != std::string_view::npos);
  rank.split.cpu_only = true;
  f = NewFinding("memory.exposed_memcpy", rank, config);
  ASSERT_EQ(f.apis.size(), 1u);  // one empty API on CPU, as the rule always named
  EXPECT_TRUE(std::string_view(f.apis[0]).empty());
}

TEST(FindingSpecs, ApisOnePerLine) {
  const Finding f = NewFinding("host.framework_overhead", RankEvidence{}, AdvisorConfig{});
  ASSERT_EQ(f.apis.size(), 2u);
  EXPECT_EQ(std::string_view(f.apis[0]), "torch.compile(model)");
  EXPECT_EQ(std::string_view(f.apis[1]), "torch.inference_mode() for evaluation");
}

TEST(FindingSpecs, GainKindOpensTheGainModel) {
  const Finding unknown = NewFinding("compute.ai_cpu_ops", RankEvidence{}, AdvisorConfig{});
  EXPECT_TRUE(std::string_view(unknown.gain_model).starts_with("unknown: the AI Core time")) << unknown.gain_model;
  EXPECT_TRUE(unknown.gain_unknown());
  const Finding estimated = NewFinding("data.slow_dataloader", RankEvidence{}, AdvisorConfig{});
  EXPECT_EQ(estimated.gain_model, "the DataLoader time not hidden under other work");
  for (const FindingSpec& spec : FindingSpecs()) {
    // The kind is data: a row's words never repeat it.
    EXPECT_FALSE(spec.gain_model.starts_with("unknown") || spec.gain_model.starts_with("upper bound:")) << spec.id;
  }
}

}  // namespace
}  // namespace tuneprof

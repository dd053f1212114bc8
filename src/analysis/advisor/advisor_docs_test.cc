// docs/advisor.md lists every threshold with the default the code uses: a threshold added or changed in
// advisor_config.cc without the documentation fails here.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

#include "analysis/advisor/advisor_config.h"

namespace tuneprof {
namespace {

std::string ReadDoc() {
  std::ifstream in(std::string(TUNEPROF_SOURCE_DIR) + "/docs/advisor.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AdvisorDocs, EveryThresholdIsDocumentedWithItsDefault) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty());
  for (const ThresholdSpec& spec : ThresholdSpecs()) {
    const std::string row = fmt::format("| `{}` | {} | {} |", spec.key, spec.default_value, spec.unit);
    EXPECT_NE(doc.find(row), std::string::npos) << "docs/advisor.md lacks the row " << row;
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

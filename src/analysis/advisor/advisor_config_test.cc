// advisor_config.h: the documented defaults, and --config overrides with one-line errors naming the file.
#include "analysis/advisor/advisor_config.h"

#include <gtest/gtest.h>

#include <string>

namespace tuneprof {
namespace {

constexpr std::string_view kOrigin = "my_thresholds.json";

TEST(AdvisorConfig, DefaultsAreTheTuningGuideThresholds) {
  const AdvisorConfig config;
  EXPECT_EQ(config.Get(threshold::kComputeUnitUtilizationPct), 70);
  EXPECT_EQ(config.Get(threshold::kMemoryBandwidthUtilizationPct), 60);
  EXPECT_EQ(config.Get(threshold::kCommunicationBandwidthUtilizationPct), 50);
  EXPECT_TRUE(config.IsDefault(threshold::kComputeUnitUtilizationPct));
}

TEST(AdvisorConfig, EveryThresholdHasADocumentedDefaultAndUnit) {
  const AdvisorConfig config;
  for (const ThresholdSpec& spec : ThresholdSpecs()) {
    SCOPED_TRACE(std::string(spec.key));
    EXPECT_EQ(config.Get(spec.key), spec.default_value);
    EXPECT_FALSE(spec.unit.empty());
    EXPECT_FALSE(spec.meaning.empty());
    EXPECT_GE(spec.default_value, 0);
  }
}

TEST(AdvisorConfig, OverridesOnlyTheNamedThresholds) {
  auto config = AdvisorConfig::Parse(
      R"({"schema": "tuneprof.advisor_config/1", "thresholds": {"compute_unit_utilization_pct": 65, "gpu_gap_ms": 0.5}})",
      kOrigin);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->Get(threshold::kComputeUnitUtilizationPct), 65);
  EXPECT_FALSE(config->IsDefault(threshold::kComputeUnitUtilizationPct));
  EXPECT_EQ(config->Get(threshold::kGpuGapMs), 0.5);
  EXPECT_EQ(config->Get(threshold::kMemoryBandwidthUtilizationPct), 60);
  EXPECT_TRUE(config->IsDefault(threshold::kMemoryBandwidthUtilizationPct));
  EXPECT_EQ(config->Get(threshold::kCommunicationBandwidthUtilizationPct), 50);
}

TEST(AdvisorConfig, EmptyThresholdsKeepEveryDefault) {
  auto config = AdvisorConfig::Parse(R"({"schema": "tuneprof.advisor_config/1", "thresholds": {}})", kOrigin);
  ASSERT_TRUE(config.ok()) << config.status().message();
  for (const ThresholdSpec& spec : ThresholdSpecs()) EXPECT_TRUE(config->IsDefault(spec.key));
}

// Each bad file: an error, one line, naming the file and what is wrong.
void ExpectOneLineError(std::string_view json, std::string_view what) {
  auto config = AdvisorConfig::Parse(json, kOrigin);
  ASSERT_FALSE(config.ok()) << json;
  const std::string& message = config.status().message();
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(message.starts_with(std::string(kOrigin) + ": ")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
}

TEST(AdvisorConfig, UnknownKeyIsAnErrorNamingTheKey) {
  ExpectOneLineError(R"({"schema": "tuneprof.advisor_config/1", "thresholds": {"compute_util_pct": 65}})",
                     "unknown threshold \"compute_util_pct\"");
}

TEST(AdvisorConfig, BadSchemaIsAnError) {
  ExpectOneLineError(R"({"thresholds": {"gpu_gap_ms": 1}})", "\"schema\"");
  ExpectOneLineError(R"({"schema": "tuneprof.advisor_config/2", "thresholds": {}})", "\"schema\"");
  ExpectOneLineError(R"({"schema": "tuneprof.advisor_config/1"})", "\"thresholds\" must be an object");
  ExpectOneLineError(R"({"schema": "tuneprof.advisor_config/1", "thresholds": [70]})",
                     "\"thresholds\" must be an object");
  ExpectOneLineError(R"({"schema": "tuneprof.advisor_config/1", "thresholds": {"gpu_gap_ms": "1"}})",
                     "\"gpu_gap_ms\" must be a number");
  ExpectOneLineError(R"({"schema": "tuneprof.advisor_config/1", "thresholds": {"gpu_gap_ms": -1}})",
                     "must not be negative");
}

TEST(AdvisorConfig, NotJsonIsAnErrorNamingTheFile) {
  auto config = AdvisorConfig::Parse("{\"schema\": ", kOrigin);
  ASSERT_FALSE(config.ok());
  EXPECT_TRUE(config.status().message().starts_with("my_thresholds.json: ")) << config.status().message();
  EXPECT_EQ(config.status().message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace tuneprof

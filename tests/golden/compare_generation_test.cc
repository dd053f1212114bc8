// Golden tests: TTFT, TPOT and decode throughput (src/analysis/compute/generation_metrics.h) on the shared
// generation traces against the peer-derived figures in
// ../shared/reference/expected/torch-cpu/derived_kineto26_generate_*.txt (one "request#i: ..." line
// per request; milliseconds printed to 3 decimals, tokens/s to 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "analysis/compute/generation_metrics.h"
#include "importers/import.h"
#include "test_corpus.h"

namespace tuneprof {
namespace {

namespace fs = std::filesystem;

const fs::path kGenerationShared = TUNEPROF_SHARED_DIR;

struct ExpectedRequest {
  std::string name;
  double ttft_ms = 0;
  double prefill_ms = 0;
  size_t decode_steps = 0;
  double decode_sum_ms = 0;
  double decode_mean_ms = 0;
  double decode_tokens_per_s = 0;
};

std::vector<ExpectedRequest> ReadExpected(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  const std::regex line_pattern(
      R"(^(request#\d+): dur_ms=\S+ TTFT_ms=(\S+) prefill_ms=(\S+) decode_steps=(\d+) decode_sum_ms=(\S+) )"
      R"(decode_mean_ms=(\S+) tokens/s\(decode only, sum of decode_step\)=(\S+) )");
  std::vector<ExpectedRequest> requests;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, line_pattern)) continue;
    requests.push_back(
        {m[1], std::stod(m[2]), std::stod(m[3]), std::stoul(m[4]), std::stod(m[5]), std::stod(m[6]), std::stod(m[7])});
  }
  return requests;
}

class GenerationGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GenerationGoldenTest, MatchesDerivedReference) {
  TUNEPROF_REQUIRE_CORPUS();
  TUNEPROF_REQUIRE_SHARED("reference");
  const std::string name = GetParam();
  const auto expected =
      ReadExpected(kGenerationShared / "reference" / "expected" / "torch-cpu" / ("derived_kineto26_" + name + ".txt"));
  ASSERT_FALSE(expected.empty());
  auto traces = ImportPaths({(kGenerationShared / "traces" / "torch-cpu" / "kineto26" / (name + ".json.gz")).string()});
  ASSERT_TRUE(traces.ok()) << traces.status().message();
  const GenerationMetrics metrics = ComputeGenerationMetrics(traces->front());
  ASSERT_EQ(metrics.requests.size(), expected.size());
  constexpr double kMsRounding = 0.0005 + 1e-9;
  size_t decode_steps = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const GenerationRequest& ours = metrics.requests[i];
    const ExpectedRequest& want = expected[i];
    EXPECT_EQ(ours.name, want.name);
    ASSERT_TRUE(ours.ttft_ns.has_value()) << want.name;
    EXPECT_NEAR(static_cast<double>(*ours.ttft_ns) / 1e6, want.ttft_ms, kMsRounding) << want.name;
    EXPECT_NEAR(static_cast<double>(ours.prefill_ns) / 1e6, want.prefill_ms, kMsRounding) << want.name;
    EXPECT_EQ(ours.decode_step_ns.size(), want.decode_steps) << want.name;
    EXPECT_NEAR(static_cast<double>(ours.decode_sum_ns) / 1e6, want.decode_sum_ms, kMsRounding) << want.name;
    const double mean_ms = static_cast<double>(ours.decode_sum_ns) / 1e6 / static_cast<double>(want.decode_steps);
    EXPECT_NEAR(mean_ms, want.decode_mean_ms, kMsRounding) << want.name;
    const double tokens_per_s =
        static_cast<double>(want.decode_steps) / (static_cast<double>(ours.decode_sum_ns) / 1e9);
    EXPECT_NEAR(tokens_per_s, want.decode_tokens_per_s, 0.05 + 1e-9) << want.name;
    decode_steps += want.decode_steps;
  }
  EXPECT_EQ(metrics.tpot_ns.size(), decode_steps);
  EXPECT_EQ(metrics.ttft_ns.size(), expected.size());
}

INSTANTIATE_TEST_SUITE_P(Kineto26, GenerationGoldenTest,
                         ::testing::Values("generate_kv", "generate_kv_naive_attn", "generate_nokv"));

}  // namespace
}  // namespace tuneprof

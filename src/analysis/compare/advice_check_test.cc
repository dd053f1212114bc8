#include "analysis/compare/advice_check.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

constexpr std::string_view kAdvice = R"({
  "schema": "tuneprof.advise/1",
  "dominant_bottleneck": "memory",
  "findings": [
    {"id": "fusion.attention", "category": "compute", "estimated_gain_us": 30, "saves_from": "memory_bound",
     "evidence": {"occurrences": 2, "level": "host operators",
                  "example": "aten::matmul -> aten::div -> aten::softmax -> aten::matmul"}},
    {"id": "host.launch_bound", "category": "host", "estimated_gain_us": 5, "saves_from": "host",
     "evidence": {"gap_us": 3}},
    {"id": "odd.rule", "estimated_gain_us": null, "saves_from": "elsewhere", "evidence": {}}
  ]
})";

TEST(AdviceCheckTest, ParsesFindingsAndTheOperatorsTheyName) {
  auto findings = ParseAdviceJson(kAdvice, "before.json");
  ASSERT_TRUE(findings.ok()) << findings.status().message();
  ASSERT_EQ(findings->size(), 3u);
  const PredictedFinding& fusion = (*findings)[0];
  EXPECT_EQ(fusion.id, "fusion.attention");
  EXPECT_EQ(fusion.category, "compute");
  EXPECT_DOUBLE_EQ(*fusion.estimated_gain_us, 30);
  EXPECT_EQ(fusion.saves_from, "memory_bound");
  EXPECT_EQ(fusion.level, "host operators");
  EXPECT_EQ(fusion.named_ops, (std::vector<std::string>{"aten::matmul", "aten::div", "aten::softmax"}));
  EXPECT_TRUE((*findings)[1].named_ops.empty());
  EXPECT_FALSE((*findings)[2].estimated_gain_us.has_value());
}

TEST(AdviceCheckTest, BadFilesAreOneErrorNamingTheFile) {
  for (std::string_view bad : {std::string_view("{not json"), std::string_view(R"({"schema": "tuneprof.compare/1"})"),
                               std::string_view(R"({"schema": "tuneprof.advise/1", "findings": 3})"),
                               std::string_view(R"({"schema": "tuneprof.advise/1", "findings": [{"id": 7}]})"),
                               std::string_view(R"({"schema": "tuneprof.advise/1", "findings": [{"id": "a",
                                  "estimated_gain_us": "big"}]})")}) {
    auto findings = ParseAdviceJson(bad, "advice.json");
    ASSERT_FALSE(findings.ok()) << bad;
    EXPECT_EQ(findings.status().message().rfind("advice.json: ", 0), 0u) << findings.status().message();
    EXPECT_EQ(findings.status().message().find('\n'), std::string::npos);
  }
  EXPECT_TRUE(ParseAdviceJson(R"({"schema": "tuneprof.analyze/1", "findings": []})", "a.json").ok());
}

// A host operator at `at_us` from the start of its step.
struct HostOp {
  const char* name;
  double at_us;
  double dur_us;
};

// Two steps of `step_us`, 1 ms apart, each running `ops`.
Trace TwoCpuSteps(double step_us, std::initializer_list<HostOp> ops) {
  HandBuiltTrace t;
  for (int s = 0; s < 2; ++s) {
    const double base = 1000.0 * s;
    t.Step(s + 1, Us(base), Us(step_us));
    for (const HostOp& op : ops) t.Host(EventKind::kHostOp, op.name, Us(base + op.at_us), Us(op.dur_us));
  }
  return t.Finish();
}

// CPU-only: two steps of hand-written attention before; SDPA (holding its flash kernel op) after. The bmm
// inside the matmul does not count again; the relu is named by no finding.
Trace AttentionBefore() {
  return TwoCpuSteps(500, {{"aten::matmul", 10, 100},
                           {"aten::bmm", 12, 90},
                           {"aten::div", 120, 20},
                           {"aten::softmax", 150, 40},
                           {"aten::matmul", 200, 100},
                           {"aten::relu", 310, 10}});
}

Trace AttentionAfter() {
  return TwoCpuSteps(200, {{"aten::scaled_dot_product_attention", 10, 60},
                           {"aten::_scaled_dot_product_flash_attention_for_cpu", 11, 58},
                           {"aten::relu", 80, 10}});
}

AdvisorResult CpuAdvice(double memory_bound_us, double host_us) {
  AdvisorResult advice;
  RankAdvice rank;
  rank.split.cpu_only = true;
  rank.split.steps = 2;
  rank.split.part_ns[static_cast<size_t>(TimePart::kMemoryBound)] = memory_bound_us * 1e3;
  rank.split.part_ns[static_cast<size_t>(TimePart::kHostWait)] = host_us * 1e3;
  rank.split.step_ns = (memory_bound_us + host_us) * 1e3;
  advice.ranks.push_back(rank);
  return advice;
}

TEST(AdviceCheckTest, MeasuresNamedOperatorsAndStepParts) {
  const Trace before = AttentionBefore();
  const Trace after = AttentionAfter();
  const AdvisorResult before_advice = CpuAdvice(400, 50);
  AdvisorResult after_advice = CpuAdvice(100, 45);
  Finding still;
  still.id = "host.launch_bound";
  still.estimated_gain_ns = 4000;
  after_advice.findings.push_back(still);
  auto findings = ParseAdviceJson(kAdvice, "before.json");
  ASSERT_TRUE(findings.ok());
  const std::vector<AdviceCheck> checks = CheckAdvice(*findings, {&before, &before_advice}, {&after, &after_advice});
  ASSERT_EQ(checks.size(), 3u);

  // fusion.attention: matmul 100 + div 20 + softmax 40 + matmul 100 per step before; after, the SDPA
  // that only the after side has, its flash op inside it not counted again.
  const AdviceCheck& fusion = checks[0];
  EXPECT_DOUBLE_EQ(*fusion.before_us, 260);
  EXPECT_DOUBLE_EQ(*fusion.after_us, 60);
  EXPECT_DOUBLE_EQ(*fusion.change_us(), -200);
  EXPECT_NE(fusion.measured_as.find("after only: aten::_scaled_dot_product_flash_attention_for_cpu, "
                                    "aten::scaled_dot_product_attention"),
            std::string::npos)
      << fusion.measured_as;
  EXPECT_FALSE(fusion.fires_after);

  const AdviceCheck& host = checks[1];
  EXPECT_EQ(host.measured_as, "step part: host");
  EXPECT_DOUBLE_EQ(*host.before_us, 50);
  EXPECT_DOUBLE_EQ(*host.after_us, 45);
  EXPECT_TRUE(host.fires_after);
  EXPECT_DOUBLE_EQ(*host.estimated_gain_after_us, 4);

  const AdviceCheck& odd = checks[2];
  EXPECT_FALSE(odd.change_us().has_value());
  EXPECT_FALSE(odd.unknown_reason.empty());
}

TEST(AdviceCheckTest, KernelEvidenceAgainstACpuOnlyTraceIsUnknown) {
  PredictedFinding finding;
  finding.id = "fusion.elementwise_chain";
  finding.level = "kernels";
  finding.named_ops = {"vectorized_elementwise_kernel"};
  const Trace before = AttentionBefore();
  const Trace after = AttentionAfter();
  const AdvisorResult advice = CpuAdvice(1, 1);
  const std::vector<AdviceCheck> checks = CheckAdvice({finding}, {&before, &advice}, {&after, &advice});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].change_us().has_value());
  EXPECT_EQ(checks[0].unknown_reason, "the before side has no kernels");
}

}  // namespace
}  // namespace tuneprof

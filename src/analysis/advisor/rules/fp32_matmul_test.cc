// compute.fp32_matmul on CPU-only traces with record_shapes: FP32 matmuls above 20 % of the step fire,
// BF16 ones and a small FP32 share do not, and an unnamed CPU leaves the gain unknown.
#include <gtest/gtest.h>

#include <string_view>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

using finding_lookup::AdviseOneRank;

// A CPU-only step of 1000 us holding one aten::mm of `mm_us` whose two inputs are of `dtype`.
Trace CpuStepWithMatmul(double mm_us, std::string_view dtype) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  const uint32_t mm = t.Host(EventKind::kHostOp, "aten::mm", Us(100), Us(mm_us));
  TraceBuilder* b = t.mutable_builder();
  const std::string types = "[\"" + std::string(dtype) + "\", \"" + std::string(dtype) + "\"]";
  b->AddOpShapeInfo(OpShapeInfo{mm, b->Intern("[[256, 512], [512, 256]]"), b->Intern(types), StringId{}});
  return t.Finish();
}

TEST(Fp32Matmul, FloatMatmulsAboveTheThresholdOnAnUnnamedCpu) {
  const AdvisorResult result = AdviseOneRank(CpuStepWithMatmul(400, "float"));
  const Finding* f = Find(result, "compute.fp32_matmul");
  ASSERT_NE(f, nullptr);
  ExpectFinding(*f, 40, {{"fp32_ops", 1}, {"fp32_us_per_step", 400}, {"fp32_share_of_compute_bound_pct", 100}});
  EXPECT_EQ(Text(*f, "example"), "aten::mm");
  EXPECT_TRUE(f->gain_unknown());  // no chip profile: neither peak is known
}

TEST(Fp32Matmul, Bf16MatmulsAreNotFlagged) {
  EXPECT_EQ(Find(AdviseOneRank(CpuStepWithMatmul(400, "c10::BFloat16")), "compute.fp32_matmul"), nullptr);
}

TEST(Fp32Matmul, ASmallShareOfTheStepIsNot) {
  EXPECT_EQ(Find(AdviseOneRank(CpuStepWithMatmul(100, "float")), "compute.fp32_matmul"), nullptr);  // 10 %
}

}  // namespace
}  // namespace tuneprof::rule_test

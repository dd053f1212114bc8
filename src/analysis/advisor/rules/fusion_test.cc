// The fusion-pattern rule (fusion.*) on hand-built conv -> bn -> relu sequences.
#include <gtest/gtest.h>

#include "analysis/advisor/rules/finding_lookup_for_test.h"

namespace tuneprof::rule_test {
namespace {

// `repeats` times conv -> batch norm -> relu kernels back to back (100, 40, 20 us) on one stream.
Trace ConvBnRelu(int repeats) {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  for (int i = 0; i < repeats; ++i) {
    const double at = 160.0 * i;
    t.Kernel("cudnn::conv2d_fprop_kernel", Us(at), Us(100));
    t.Kernel("cudnn::bn_fw_inf_1C11_kernel_NCHW", Us(at + 100), Us(40));
    t.Kernel("at::native::relu_kernel", Us(at + 140), Us(20));
  }
  return t.Finish();
}

TEST(RuleFamilies, UnfusedConvBnReluKernels) {
  const Trace trace = ConvBnRelu(5);
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "fusion.conv_bn_relu");
  ASSERT_NE(f, nullptr);
  ExpectNumbers(*f, {{"occurrences", 5}, {"pattern_us", 800}});
  EXPECT_DOUBLE_EQ(Number(*f, "pattern_pct_of_work"), 80);  // 800 us of a 1000 us step
  EXPECT_EQ(Text(*f, "level"), "kernels");
  EXPECT_EQ(Text(*f, "example"),
            "cudnn::conv2d_fprop_kernel -> cudnn::bn_fw_inf_1C11_kernel_NCHW -> at::native::relu_kernel");
  // Inference (no backward): BatchNorm and ReLU fold into the convolution, 5 x (40 + 20) us.
  EXPECT_DOUBLE_EQ(f->uncapped_gain_ns, Us(300));
  // The memory-bound part is 800 us x (1 - 500/800) = 300 us: the gain fits exactly.
  EXPECT_DOUBLE_EQ(result.ranks[0].split.part(TimePart::kMemoryBound), Us(300));
  EXPECT_DOUBLE_EQ(f->estimated_gain_ns, Us(300));
  EXPECT_TRUE(f->modules.empty());  // no module ranges: nothing to name
}

// ConvBnRelu's five occurrences, each launched from inside a module: the first four from the repeated
// blocks `Net_0.Block_0` .. `Block_3`, the last from `Net_0.Head_0`.
Trace ConvBnReluInModules() {
  HandBuiltTrace t;
  t.Step(1, 0, Us(1000));
  t.Host(EventKind::kPythonFunction, "nn.Module: Net_0", 0, Us(900));
  const char* kernels[] = {"cudnn::conv2d_fprop_kernel", "cudnn::bn_fw_inf_1C11_kernel_NCHW",
                           "at::native::relu_kernel"};
  const double durations[] = {100, 40, 20};
  int64_t correlation = 0;
  for (int i = 0; i < 5; ++i) {
    const double at = 160.0 * i;
    const std::string module = i < 4 ? "nn.Module: Block_" + std::to_string(i) : "nn.Module: Head_0";
    t.Host(EventKind::kPythonFunction, module, Us(at + 1), Us(150));
    double kernel_at = at;
    for (int k = 0; k < 3; ++k) {
      t.Launch(Us(at + 2 + 3 * k), ++correlation);
      t.Kernel(kernels[k], Us(kernel_at), Us(durations[k]), correlation);
      kernel_at += durations[k];
    }
  }
  return t.Finish();
}

TEST(RuleFamilies, FusionNamesTheModulesHoldingItsKernels) {
  const Trace trace = ConvBnReluInModules();
  const AdvisorResult result = AdviseWith(trace);
  const Finding* f = Find(result, "fusion.conv_bn_relu");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(Number(*f, "occurrences"), 5);
  // 4 x 160 us of the 800 us in the blocks, rolled up into one path; 160 us in the head: 20 %, named.
  ExpectModules(*f, {{"Net_0.Block_*", 0.8}, {"Net_0.Head_0", 0.2}});
}

TEST(RuleFamilies, FusionNeedsFiveOccurrences) {
  const Trace trace = ConvBnRelu(4);
  EXPECT_EQ(Find(AdviseWith(trace), "fusion.conv_bn_relu"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

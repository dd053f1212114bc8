#include "analysis/compute/op_flops.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// Cost of `op` with the record_shapes arrays as Kineto writes them.
OpCost CostOf(std::string_view op, std::string_view dims, std::string_view types, std::string_view concrete = "[]") {
  OpShapes shapes;
  EXPECT_TRUE(ParseOpShapes(dims, types, concrete, &shapes)) << dims;
  return EstimateOpCost(op, shapes);
}

double FlopsOf(std::string_view op, std::string_view dims, std::string_view types, std::string_view concrete = "[]") {
  return CostOf(op, dims, types, concrete).flops;
}

TEST(OpFlopsTest, ParsesKinetoArrays) {
  OpShapes s;
  ASSERT_TRUE(ParseOpShapes(R"([[2, 8, 20, 20], [16, 8, 3, 3], [], [[1, 2], [3]], []])",
                            R"(["float", "c10::BFloat16", "", "TensorList", "Scalar"])",
                            R"(["", "", "", "[1, 1]", "1"])", &s));
  ASSERT_EQ(s.dims.size(), 5u);
  EXPECT_EQ(s.dims[0], (std::vector<int64_t>{2, 8, 20, 20}));
  EXPECT_TRUE(s.dims[2].empty());
  EXPECT_TRUE(s.dims[3].empty());  // a list of tensors is not one tensor
  ASSERT_EQ(s.types.size(), 5u);
  EXPECT_EQ(s.types[1], "c10::BFloat16");
  ASSERT_EQ(s.concrete.size(), 5u);
  EXPECT_EQ(s.concrete[3], "[1, 1]");
  EXPECT_FALSE(ParseOpShapes("not json", "[]", "[]", &s));
}

// The ops torch.profiler's with_flops has formulas for, on the shapes of tests/data/flops (its numbers
// are in flops_cpu.torch_flops.json; tests/e2e/flops_check.py checks them through the importer too).
TEST(OpFlopsTest, MatchesTorchProfilerOnItsOps) {
  EXPECT_EQ(FlopsOf("aten::mm", "[[64, 96], [96, 48]]", R"(["float", "float"])"), 589824);
  EXPECT_EQ(FlopsOf("aten::addmm", "[[48], [64, 96], [96, 48], [], []]",
                    R"(["float", "float", "float", "Scalar", "Scalar"])"),
            589824);
  EXPECT_EQ(FlopsOf("aten::bmm", "[[4, 32, 16], [4, 16, 24]]", R"(["float", "float"])"), 98304);
  EXPECT_EQ(FlopsOf("aten::baddbmm", "[[4, 32, 24], [4, 32, 16], [4, 16, 24], [], []]",
                    R"(["float", "float", "float", "Scalar", "Scalar"])"),
            98304);
  const std::string_view conv_types =
      R"(["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"])";
  EXPECT_EQ(FlopsOf("aten::conv2d", "[[2, 8, 20, 20], [16, 8, 3, 3], [16], [], [], [], []]", conv_types,
                    R"(["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "1"])"),
            1492992);
  EXPECT_EQ(FlopsOf("aten::conv2d", "[[2, 8, 20, 20], [16, 8, 3, 3], [], [], [], [], []]", conv_types,
                    R"(["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"])"),
            460800);
  EXPECT_EQ(FlopsOf("aten::conv2d", "[[2, 8, 20, 20], [8, 2, 5, 3], [8], [], [], [], []]", conv_types,
                    R"(["", "", "", "[1, 2]", "[2, 1]", "[1, 2]", "4"])"),
            172800);
  EXPECT_EQ(FlopsOf("aten::add", "[[8, 64], [8, 64], []]", R"(["float", "float", "Scalar"])"), 512);
  EXPECT_EQ(FlopsOf("aten::mul", "[[8, 64], []]", R"(["float", "Scalar"])"), 512);
}

// Ops torch.profiler leaves at 0, by hand.
TEST(OpFlopsTest, OpsTorchLeavesAtZero) {
  // matmul [3,5,32,16] x [16,8]: 2 · 15 · 32 · 16 · 8 (= its inner aten::mm on [480,16] x [16,8]).
  EXPECT_EQ(FlopsOf("aten::matmul", "[[3, 5, 32, 16], [16, 8]]", R"(["float", "float"])"), 122880);
  EXPECT_EQ(FlopsOf("aten::matmul", "[[16], [16]]", R"(["float", "float"])"), 32);  // dot
  EXPECT_EQ(FlopsOf("aten::matmul", "[[2, 1, 4, 8], [3, 8, 5]]", R"(["float", "float"])"), 2 * 6 * 4 * 8 * 5);
  EXPECT_LT(FlopsOf("aten::matmul", "[[4, 8], [7, 5]]", R"(["float", "float"])"), 0);  // K mismatch
  // linear [10,20,96] x weight [40,96]: 2 · 200 · 96 · 40.
  EXPECT_EQ(FlopsOf("aten::linear", "[[10, 20, 96], [40, 96], [40]]", R"(["float", "float", "float"])"), 1536000);
  // conv1d [2,4,30] * [6,4,5], padding 2: out 30; 2 · 2 · 6 · 30 · 4 · 5.
  EXPECT_EQ(FlopsOf("aten::conv1d", "[[2, 4, 30], [6, 4, 5], [], [], [], [], []]", R"(["float", "float", ""])",
                    R"(["", "", "", "[1]", "[2]", "[1]", "1"])"),
            14400);
  // conv3d [1,2,6,6,6] * [4,2,3,3,3]: out 4³; 2 · 4 · 64 · 2 · 27.
  EXPECT_EQ(FlopsOf("aten::conv3d", "[[1, 2, 6, 6, 6], [4, 2, 3, 3, 3], [], [], [], [], []]",
                    R"(["float", "float", ""])", R"(["", "", "", "[1, 1, 1]", "[0, 0, 0]", "[1, 1, 1]", "1"])"),
            27648);
  // padding="same" keeps the size.
  EXPECT_EQ(FlopsOf("aten::conv2d", "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], []]", R"(["float", "float", ""])",
                    R"(["", "", "", "[1, 1]", "same", "[1, 1]", "1"])"),
            2 * 4 * 64 * 3 * 9);
  // aten::convolution, transposed: 2 · N · C_in · Π(in) · C_out/g · Π(k) = 2 · 1 · 4 · 25 · 3 · 9.
  EXPECT_EQ(
      FlopsOf("aten::convolution", "[[1, 4, 5, 5], [4, 3, 3, 3], [], [], [], [], [], [], []]",
              R"(["float", "float", ""])", R"(["", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1"])"),
      5400);
  // A zero stride (malformed input) is no formula, not a crash.
  EXPECT_LT(FlopsOf("aten::conv2d", "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], []]", R"(["float", "float", ""])",
                    R"(["", "", "", "[0, 1]", "[0, 0]", "[1, 1]", "1"])"),
            0);
  // Without Concrete Inputs (torch < 2.1) stride and padding are unknown: no guess.
  EXPECT_LT(FlopsOf("aten::conv2d", "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], []]", R"(["float", "float", ""])"),
            0);
  // SDPA q, k, v [2,4,16,8]: 2 · 8 · 16 · 16 · (8 + 8).
  const std::string_view qkv = "[[2, 4, 16, 8], [2, 4, 16, 8], [2, 4, 16, 8]]";
  const std::string_view f3 = R"(["float", "float", "float"])";
  EXPECT_EQ(FlopsOf("aten::scaled_dot_product_attention", qkv, f3), 65536);
  EXPECT_EQ(FlopsOf("aten::_scaled_dot_product_flash_attention", qkv, f3), 65536);
  // Backward (grad_out first): 2 · 8 · 16 · 16 · (3·8 + 2·8), torch.utils.flop_counter's five bmms.
  EXPECT_EQ(FlopsOf("aten::_scaled_dot_product_flash_attention_backward",
                    "[[2, 4, 16, 8], [2, 4, 16, 8], [2, 4, 16, 8], [2, 4, 16, 8], [2, 4, 16, 8]]",
                    R"(["float", "float", "float", "float", "float"])"),
            163840);
  // flash-attn's own layout [B, L, H, E]; cross attention with S = 32.
  EXPECT_EQ(FlopsOf("aten::_flash_attention_forward", "[[2, 16, 4, 8], [2, 32, 4, 8], [2, 32, 4, 8]]",
                    R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])"),
            2.0 * 8 * 16 * 32 * 16);
  // Norms, softmax, element-wise on [8, 64] (512 elements).
  EXPECT_EQ(FlopsOf("aten::layer_norm", "[[8, 64], [], [64], [64], [], []]", R"(["float", "", "float", "float"])"),
            7 * 512);
  EXPECT_EQ(FlopsOf("aten::layer_norm", "[[8, 64], [], [], [], [], []]", R"(["float", "", "", ""])"), 5 * 512);
  EXPECT_EQ(FlopsOf("aten::rms_norm", "[[8, 64], [], [64], []]", R"(["float", "", "float", ""])"), 4 * 512);
  EXPECT_EQ(FlopsOf("aten::softmax", "[[8, 64], [], []]", R"(["float", "Scalar", ""])"), 5 * 512);
  EXPECT_EQ(FlopsOf("aten::gelu", "[[8, 64], []]", R"(["float", ""])"), 512);
  EXPECT_EQ(FlopsOf("aten::add", "[[8, 64], [64], []]", R"(["float", "float", "Scalar"])"), 512);  // broadcast
  EXPECT_LT(FlopsOf("aten::empty", "[[], [], []]", "[]"), 0);
  EXPECT_LT(FlopsOf("mm", "[[2, 2], [2, 2]]", R"(["float", "float"])"), 0);  // not an aten op
}

TEST(OpFlopsTest, BytesAreInputsAndOutputOnce) {
  // mm float [64,96] x [96,48] -> [64,48]: (6144 + 4608 + 3072) · 4.
  EXPECT_EQ(CostOf("aten::mm", "[[64, 96], [96, 48]]", R"(["float", "float"])").bytes, 55296);
  EXPECT_EQ(CostOf("aten::mm", "[[64, 96], [96, 48]]", R"(["c10::BFloat16", "c10::BFloat16"])").bytes, 27648);
  EXPECT_LT(CostOf("aten::mm", "[[64, 96], [96, 48]]", R"(["weird", "weird"])").bytes, 0);
  EXPECT_EQ(ShapeDtypeBytes("c10::Half"), 2);
  EXPECT_EQ(ShapeDtypeBytes("Scalar"), 0);
}

// The rank's totals count each op once: aten::linear's inner aten::addmm is not added again, and MFU is
// the steps' FLOP/s over the chip's peak for the dtype.
TEST(OpFlopsTest, NestedOpsCountOnceAndMfuUsesThePeak) {
  HandBuiltTrace hand;
  hand.Step(1, Us(0), Us(1000));
  const uint32_t linear = hand.Host(EventKind::kHostOp, "aten::linear", Us(10), Us(500));
  const uint32_t addmm = hand.Host(EventKind::kHostOp, "aten::addmm", Us(20), Us(400));
  const uint32_t relu = hand.Host(EventKind::kHostOp, "aten::relu", Us(600), Us(100));
  TraceBuilder* b = hand.mutable_builder();
  b->AddOpShapeInfo(OpShapeInfo{linear, b->Intern("[[100, 50], [20, 50], [20]]"),
                                b->Intern(R"(["float", "float", "float"])"), StringId{}});
  b->AddOpShapeInfo(OpShapeInfo{addmm, b->Intern("[[20], [100, 50], [50, 20], [], []]"),
                                b->Intern(R"(["float", "float", "float", "Scalar", "Scalar"])"), StringId{}});
  b->AddOpShapeInfo(OpShapeInfo{relu, b->Intern("[[100, 20]]"), b->Intern(R"(["float"])"), StringId{}});
  const Trace trace = hand.Finish();

  HardwareProfile chip;
  chip.peak_fp32_tflops.value = 1e-6;  // 1 MFLOP/s, so that the tiny ops give a visible MFU
  chip.memory_gb_per_s.value = 1e-6;   // 1 kB/s
  const RankOpFlops f = ComputeOpFlops(trace, &chip);
  const double matmul = 2.0 * 100 * 50 * 20;
  EXPECT_EQ(f.ops_costed, 3u);
  EXPECT_DOUBLE_EQ(f.flops, matmul + 2000);  // linear + relu, not addmm
  ASSERT_EQ(f.ops.size(), 3u);
  EXPECT_EQ(f.ops[0].name, "aten::addmm");  // ties broken by name: addmm before linear
  EXPECT_EQ(f.ops[0].outermost, 0u);
  EXPECT_EQ(f.ops[1].name, "aten::linear");
  EXPECT_EQ(f.ops[1].outermost, 1u);
  EXPECT_EQ(f.ops[1].time_ns, Us(500));  // host time: no kernels on this trace
  EXPECT_EQ(f.dtype, "float");
  EXPECT_EQ(f.step_ns, Us(1000));
  ASSERT_TRUE(f.achieved_flops_per_s.has_value());
  EXPECT_DOUBLE_EQ(*f.achieved_flops_per_s, (matmul + 2000) / 1e-3);
  ASSERT_TRUE(f.mfu.has_value());
  EXPECT_DOUBLE_EQ(*f.mfu, (matmul + 2000) / 1e-3 / 1e6);
  // Roofline: ridge = 1e6 FLOP/s / 1e3 B/s = 1000 FLOP/B; linear's intensity is far below it.
  ASSERT_TRUE(f.ops[1].roof.ridge.has_value());
  EXPECT_DOUBLE_EQ(*f.ops[1].roof.ridge, 1000);
  EXPECT_EQ(f.ops[1].roof.compute_bound, std::optional<bool>(false));
  const double bytes = (100 * 50 + 20 * 50 + 20 + 100 * 20) * 4.0;
  EXPECT_DOUBLE_EQ(*f.ops[1].roof.roof_time_ns, std::max(matmul / 1e6, bytes / 1e3) * 1e9);

  const RankOpFlops unknown_chip = ComputeOpFlops(trace, nullptr);
  EXPECT_FALSE(unknown_chip.mfu.has_value());
  EXPECT_FALSE(unknown_chip.ops[0].roof.ridge.has_value());
}

// On torch_npu the MFU divides by the step every command reports (Stage + Bubble), given here; a step time of
// 0 keeps what the trace's step ranges gave.
TEST(OpFlopsTest, RetimedOverTheGivenSteps) {
  RankOpFlops f;
  f.step_flops = 4e9;
  f.step_ns = Us(1000);
  f.peak_flops_per_s = 1e13;
  RetimeOpFlops(0, &f);
  EXPECT_EQ(f.step_ns, Us(1000));
  EXPECT_FALSE(f.achieved_flops_per_s.has_value());
  RetimeOpFlops(Us(2000), &f);
  EXPECT_EQ(f.step_ns, Us(2000));
  ASSERT_TRUE(f.achieved_flops_per_s.has_value());
  EXPECT_DOUBLE_EQ(*f.achieved_flops_per_s, 4e9 / 2e-3);
  ASSERT_TRUE(f.mfu.has_value());
  EXPECT_DOUBLE_EQ(*f.mfu, 4e9 / 2e-3 / 1e13);
  f.step_flops = 0;  // no FLOPs inside the steps: nothing achieved, no MFU
  RetimeOpFlops(Us(2000), &f);
  EXPECT_FALSE(f.achieved_flops_per_s.has_value());
  EXPECT_FALSE(f.mfu.has_value());
}

}  // namespace
}  // namespace tuneprof

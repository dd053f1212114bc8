// fusion.graph_fusion on generated GE graphs (the table the graph-dump reader fills) with kernel_details
// rows named after their ops: which subgraphs count as unfused, their time and the gain of fusing them.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/advisor/rules/finding_lookup_for_test.h"
#include "analysis/advisor/rules/npu_step_for_test.h"

namespace tuneprof::rule_test {
namespace {

using finding_lookup::AdviseOneRank;

// A GE graph built op by op; each op's inputs name ops added before it.
class Graph {
 public:
  explicit Graph(Trace* trace) : side_(trace) {
    side_.StartKernelDetails();
    side_.mutable_ge_graphs()->files.push_back("ge_proto_1_graph_1_Build.txt");
  }
  uint32_t Op(std::string_view name, std::string_view type, std::vector<uint32_t> inputs = {},
              std::string_view shapes = "") {
    GeGraphOp op;
    op.graph = side_.Intern("graph_1");
    op.name = side_.Intern(name);
    op.type = side_.Intern(type);
    op.inputs = std::move(inputs);
    op.output_shapes = side_.Intern(shapes);
    side_.mutable_ge_graphs()->ops.push_back(op);
    return static_cast<uint32_t>(side_.mutable_ge_graphs()->ops.size() - 1);
  }
  // A Data input x (8 x 768) and the op `addend` (its name, type and shape), then MatMul_1 of x with the
  // addend added (Add_1), and Sigmoid_1 of x multiplying x, or the addend where `gate_on_addend` (Mul_1):
  // the matmul_bias and swish patterns where the addend is a Const bias and the gate is on x. Returns x.
  uint32_t MatMulAddAndSigmoidMul(std::string_view addend, std::string_view addend_type, std::string_view addend_shape,
                                  bool gate_on_addend) {
    const uint32_t x = Op("x", "Data", {}, "8,768");
    const uint32_t added = Op(addend, addend_type, {}, addend_shape);
    const uint32_t mm = Op("MatMul_1", "MatMulV2", {x}, "8,768");
    Op("Add_1", "Add", {mm, added}, "8,768");
    const uint32_t sig = Op("Sigmoid_1", "Sigmoid", {x});
    Op("Mul_1", "Mul", {gate_on_addend ? added : x, sig});
    return x;
  }

  // A kernel_details row for op `name`.
  void Ran(std::string_view name, std::string_view type, double dur_us) {
    side_.AddKernelDetail(npu_step::DetailRow(&side_, name, type, "AI_VECTOR_CORE", 100, dur_us));
  }

 private:
  SideTableBuilder side_;
};

// The fusion.graph_fusion finding of the advice on `trace`, expected to count `subgraphs` unfused subgraphs
// of `unfused_us` per step whose fusion saves `gain_us`; nullopt (a failure) where the advisor raised none.
std::optional<Finding> GraphFusionFinding(const Trace& trace, double subgraphs, double unfused_us, double gain_us) {
  std::optional<Finding> f = FindRaised(AdviseOneRank(trace), "fusion.graph_fusion");
  if (!f) return std::nullopt;
  ExpectNumbers(*f, {{"unfused_subgraphs", subgraphs}, {"unfused_us_per_step", unfused_us}});
  EXPECT_NEAR(f->uncapped_gain_ns, gain_us * 1e3, 1);
  return f;
}

TEST(GraphFusion, UnfusedPatternsWithTheirTimeAndGain) {
  Trace trace = npu_step::NpuStep();
  Graph g(&trace);
  const uint32_t x = g.MatMulAddAndSigmoidMul("bias", "Const", "1,768", /*gate_on_addend=*/false);
  const uint32_t c1 = g.Op("Cast_1", "Cast", {x});
  const uint32_t c2 = g.Op("Cast_2", "Cast", {c1});
  g.Op("Cast_3", "Cast", {c2});  // one chain of three: one occurrence, the third cast left over
  g.Ran("MatMul_1", "MatMulV2", 40);
  g.Ran("Add_1", "Add", 10);
  g.Ran("Sigmoid_1", "Sigmoid", 5);
  g.Ran("Mul_1", "Mul", 3);
  const std::optional<Finding> f = GraphFusionFinding(trace, 3, 58, 13);  // (50 - 40) + (8 - 5) us saved
  ASSERT_TRUE(f.has_value());
  const std::string patterns = Text(*f, "patterns");
  EXPECT_EQ(patterns.find("matmul_bias"), 0u) << patterns;  // largest gain first
  EXPECT_NE(patterns.find("x1: MatMul_1 > Add_1; 50.0 us per step, saves 10.0 us"), std::string::npos) << patterns;
  EXPECT_NE(patterns.find("swish (Sigmoid > Mul) x1: Sigmoid_1 > Mul_1"), std::string::npos) << patterns;
  EXPECT_NE(patterns.find("cast_chain (Cast > Cast) x1: Cast_1 > Cast_2; time unknown"), std::string::npos);
  EXPECT_NE(f->strategy.find("MatMulBiasAddFusionPass"), std::string::npos);
  EXPECT_FALSE(f->gain_unknown());
}

TEST(GraphFusion, ResidualAddsAndOtherMulsAreNotPatterns) {
  Trace trace = npu_step::NpuStep();
  Graph g(&trace);
  // A residual added, not a bias, and a gate on another tensor, not x * sigmoid(x).
  const uint32_t x = g.MatMulAddAndSigmoidMul("y", "Data", "8,768", /*gate_on_addend=*/true);
  g.Op("MatMul_2", "MatMulV2", {x});
  EXPECT_EQ(Find(AdviseOneRank(trace), "fusion.graph_fusion"), nullptr);
}

TEST(GraphFusion, DecomposedLayerNormAndGainUnknownWithoutKernelDetails) {
  Trace trace = npu_step::NpuStep();
  Graph g(&trace);
  const uint32_t x = g.Op("x", "Data");
  const uint32_t mean = g.Op("ln/mean", "ReduceMean", {x});
  const uint32_t sub = g.Op("ln/sub", "Sub", {x, mean});
  const uint32_t sq = g.Op("ln/square", "Square", {sub});
  const uint32_t var = g.Op("ln/var", "ReduceMean", {sq});
  const uint32_t add = g.Op("ln/add", "Add", {var});
  const uint32_t rsqrt = g.Op("ln/rsqrt", "Rsqrt", {add});
  g.Op("ln/mul", "Mul", {sub, rsqrt});
  const uint32_t t1 = g.Op("t1", "TransData", {x});
  g.Op("t2", "TransData", {t1});
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* f = Find(result, "fusion.graph_fusion");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Number(*f, "unfused_subgraphs"), 2);
  const std::string patterns = Text(*f, "patterns");
  EXPECT_NE(patterns.find("layer_norm (ReduceMean > Sub > Square|Pow|Mul > ReduceMean > Add|Adds > Rsqrt|Sqrt > "
                          "Mul|RealDiv|Div) x1: ln/mean > ln/sub > ln/square > ln/var > ln/add > ln/rsqrt > ln/mul"),
            std::string::npos)
      << patterns;
  EXPECT_NE(patterns.find("transdata_chain"), std::string::npos);
  EXPECT_TRUE(f->gain_unknown());
}

TEST(GraphFusion, TheSameGraphDumpedTwiceIsCountedOnce) {
  Trace trace = npu_step::NpuStep();
  Graph g(&trace);
  for (int copy = 0; copy < 2; ++copy) {  // the ModelDef and ONNX forms of one graph
    const uint32_t x = g.Op("x", "Data");
    const uint32_t sig = g.Op("Sigmoid_1", "Sigmoid", {x});
    g.Op("Mul_1", "Mul", {sig, x});
  }
  g.Ran("Sigmoid_1", "Sigmoid", 5);
  g.Ran("Mul_1", "Mul", 3);
  EXPECT_TRUE(GraphFusionFinding(trace, 1, 8, 3).has_value());
}

// One input read by 100,000 Sigmoid + Mul pairs: the matching stays linear in the graph's edges (every
// Sigmoid's consumers are scanned once, not every consumer of the shared input per Sigmoid).
TEST(GraphFusion, AWideGraphStaysLinear) {
  Trace trace = npu_step::NpuStep();
  Graph g(&trace);
  const uint32_t x = g.Op("x", "Data");
  constexpr int kPairs = 100'000;
  for (int i = 0; i < kPairs; ++i) {
    const uint32_t sig = g.Op("s" + std::to_string(i), "Sigmoid", {x});
    g.Op("m" + std::to_string(i), "Mul", {x, sig});
  }
  const AdvisorResult result = AdviseOneRank(trace);
  const Finding* f = Find(result, "fusion.graph_fusion");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Number(*f, "unfused_subgraphs"), kPairs);
  EXPECT_NE(Text(*f, "patterns").find("s0 > m0; s1 > m1; s2 > m2; and 99997 more"), std::string::npos);
}

TEST(GraphFusion, QuietWithoutAGraph) {
  Trace trace = npu_step::NpuStep();
  EXPECT_EQ(Find(AdviseOneRank(trace), "fusion.graph_fusion"), nullptr);
}

}  // namespace
}  // namespace tuneprof::rule_test

// The kernel class table: vendor names land in their class, unknown kernels take their launching
// operator's class or stay unclassified, docs/advisor.md lists exactly the table's rows, and where
// TraceLens (a peer) names a kernel's category on the shared H100 / MI300X pairs, the class agrees.
#include "analysis/core/kernel_class_rules.h"

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/core/doc_table_for_test.h"
#include "analysis/core/hand_built_trace_for_test.h"
#include "analysis/core/host_op_tree.h"
#include "analysis/core/op_classes.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

TEST(KernelClassRulesTest, VendorKernelsLandInTheirClass) {
  EXPECT_EQ(OpLetter("Cijk_Alik_Bljk_SB_MT128x128x16_MI32x32x2x1_SN_1LDSB0"), op_letter::kMatmul);
  EXPECT_EQ(OpLetter("Custom_Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64"), op_letter::kMatmul);
  EXPECT_EQ(OpLetter("igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt128x128x32"), op_letter::kConv);
  EXPECT_EQ(OpLetter("gridwise_convolution_implicit_gemm_v4r4_nchw_kcyx_nkhw"), op_letter::kConv);
  EXPECT_EQ(OpLetter("fmoe_bf16_g1u1_subGU_256"), op_letter::kMatmul);
  EXPECT_EQ(OpLetter("fc-dtype_Float"), op_letter::kMatmul);
  EXPECT_EQ(OpLetter("triton_tem_fused_addmm_relu_0"), op_letter::kMatmul);
  EXPECT_EQ(OpLetter("triton_tem_fused_convolution_1"), op_letter::kConv);
  EXPECT_EQ(OpLetter("triton_poi_fused_add_0"), op_letter::kAdd);  // a named operation beats the family
  EXPECT_EQ(OpLetter("triton_poi_fused_0"), op_letter::kOtherElementwise);
  EXPECT_EQ(OpLetter("triton_red_fused_0"), op_letter::kReduce);
  EXPECT_EQ(OpLetter("MatMulV2"), op_letter::kMatmul);
  EXPECT_EQ(OpLetter("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), op_letter::kCommunication);
  EXPECT_EQ(OpLetter("some_vendor_kernel_v2"), op_letter::kOther);
}

TEST(KernelClassRulesTest, EveryRowIsComplete) {
  for (const KernelClassRule& rule : KernelClassRules()) {
    EXPECT_FALSE(rule.pattern.empty());
    EXPECT_FALSE(rule.vendor.empty()) << rule.pattern;
    EXPECT_FALSE(rule.why.empty()) << rule.pattern;
    EXPECT_NE(OpClassName(rule.letter), "unclassified") << rule.pattern;
    for (char c : rule.pattern) EXPECT_FALSE(c >= 'A' && c <= 'Z') << rule.pattern << " is matched lower-cased";
  }
}

// Each kernel is launched by its own runtime call inside `op`.
struct Launched {
  HandBuiltTrace hand;
  std::vector<uint32_t> kernels;
  void Add(std::string_view op, std::string_view kernel) {
    const int64_t at = Us(100) * static_cast<int64_t>(kernels.size() + 1);
    const int64_t correlation = static_cast<int64_t>(kernels.size() + 1);
    hand.Host(EventKind::kHostOp, op, at, Us(20));
    hand.Launch(at + Us(5), correlation);
    kernels.push_back(hand.Kernel(kernel, at + Us(30), Us(10), correlation));
  }
};

TEST(KernelClassRulesTest, UnknownKernelsTakeTheLaunchersClassElseStayUnclassified) {
  Launched l;
  l.Add("aten::mm", "mtia_kernel_0");            // unknown name, matmul launcher
  l.Add("aten::convolution", "Cijk_Ailk_Bljk");  // a GEMM a convolution launched
  l.Add("aten::mystery_op", "mystery_kernel");   // neither classes it
  l.Add("aten::add", "vectorized_elementwise_kernel");
  const Trace trace = l.hand.Finish();
  const HostOpTree tree = BuildHostOpTree(trace);
  KernelLetters letters(trace, tree);
  EXPECT_EQ(letters.Of(l.kernels[0]), op_letter::kMatmul);
  EXPECT_EQ(letters.Of(l.kernels[1]), op_letter::kConv);
  EXPECT_EQ(letters.Of(l.kernels[2]), op_letter::kOther);
  EXPECT_EQ(letters.Of(l.kernels[3]), op_letter::kOtherElementwise);
}

std::string DocRow(const KernelClassRule& rule) {
  return fmt::format("| `{}` | {} | {} | {} | {} |", rule.pattern, KernelClassMatchName(rule.match), rule.vendor,
                     OpClassName(rule.letter), rule.why);
}

TEST(KernelClassRulesTest, DocsListEveryRowAndNoOther) {
  std::vector<std::string> rows;
  for (const KernelClassRule& rule : KernelClassRules()) rows.push_back(DocRow(rule));
  ExpectDocumentedRows("advisor.md", "## Kernel classes", rows);
}

// One CSV line split on commas, quoted fields kept whole.
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// TraceLens' op categories mapped to the classes they mean; its "other" and blank categories name none.
std::set<char> ClassesOfTraceLensCategory(std::string_view category) {
  if (category == "GEMM") return {op_letter::kMatmul};
  if (category == "CONV_fwd" || category == "CONV_bwd") return {op_letter::kConv};
  if (category.starts_with("SDPA")) return {op_letter::kAttention};
  if (category.starts_with("NORM")) return {op_letter::kBatchNorm, op_letter::kOtherNorm};
  return {};
}

// TraceLens classes each kernel by its parent operator; we class it by name, else by that operator.
// Where both name a class (TraceLens' GEMM, convolution, attention, norm categories) for the same work,
// the classes agree: every GEMM and convolution kernel of the H100 and MI300X pairs (rocBLAS / Tensile
// Cijk_* included) and every kernel classed by its launcher.
TEST(KernelClassRulesTest, AgreesWithTraceLensOnTheSharedPairs) {
  const std::filesystem::path root = std::filesystem::path(TUNEPROF_SHARED_DIR) / "reference/expected/tracelens";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "no TraceLens reference outputs at " << root;
  int compared = 0, compute_bound = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().filename() != "kernel_summary.csv") continue;
    std::ifstream in(entry.path());
    std::string line;
    std::getline(in, line);  // header: Parent op category, Parent cpu_op, Kernel name, ...
    while (std::getline(in, line)) {
      const std::vector<std::string> f = CsvFields(line);
      if (f.size() < 3) continue;
      const std::set<char> theirs = ClassesOfTraceLensCategory(f[0]);
      if (theirs.empty()) continue;
      const char own = OpLetter(f[2]);
      const char ours = KernelLetterWithLauncher(own, OpLetter(f[1]));
      if (ours == op_letter::kOther) continue;  // unclassified: we name no class
      // TraceLens files every kernel under its operator's category; a kernel whose own name says it
      // transposes, copies or adds a bias inside a GEMM or convolution operator is that, not the GEMM.
      const bool auxiliary = own != op_letter::kOther && !IsComputeBoundLetter(own);
      if (auxiliary && IsComputeBoundLetter(*theirs.begin())) continue;
      if (IsComputeBoundLetter(ours)) ++compute_bound;
      EXPECT_TRUE(theirs.contains(ours)) << entry.path() << ": " << f[2].substr(0, 80) << " under " << f[1]
                                         << ": TraceLens " << f[0] << ", ours " << OpClassName(ours);
      ++compared;
    }
  }
  EXPECT_GT(compared, 50);
  EXPECT_GT(compute_bound, 40);
}

}  // namespace
}  // namespace tuneprof

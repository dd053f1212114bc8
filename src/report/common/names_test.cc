#include "report/common/names.h"

#include <gtest/gtest.h>

#include <set>

namespace tuneprof {
namespace {

TEST(NamesTest, ShortNamesStayWhole) {
  EXPECT_EQ(AbbreviatedName("aten::mm", 32), "aten::mm");
  EXPECT_EQ(AbbreviatedName("ampere_sgemm_128x64_nn", 32), "ampere_sgemm_128x64_nn");
}

TEST(NamesTest, LongKernelNamesLoseVoidParametersAndQualifiersFirst) {
  EXPECT_EQ(
      AbbreviatedName("void at::native::vectorized_elementwise_kernel<4, float>(int, at::detail::Array<char*, 2>)", 40),
      "vectorized_elementwise_kernel<4, float>");
  EXPECT_EQ(AbbreviatedName("void (anonymous namespace)::softmax_warp_forward<c10::Half>(c10::Half*)", 40),
            "softmax_warp_forward<Half>");
}

TEST(NamesTest, TooLongNamesKeepTheirStartAndEnd) {
  const std::string cut = AbbreviatedName(std::string(50, 'a') + "<" + std::string(50, 'b') + ">", 30);
  EXPECT_EQ(cut.size(), 30u);
  EXPECT_TRUE(cut.starts_with("aaaa"));
  EXPECT_TRUE(cut.ends_with("bb>"));
  EXPECT_NE(cut.find('~'), std::string::npos);
}

TEST(NamesTest, NamesThatWouldPrintTheSameShowWhereTheyDiffer) {
  // Three real split_embedding kernels of HTA's trace_filter sample: same start, same end.
  const std::vector<std::string> names = {
      "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, float, float, "
      "2ul, 32ul>(int)",
      "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1<float, float, float, "
      "2ul, 32ul>(int)",
      "void split_embedding_backward_codegen_sgd_unweighted_kernel_cta_per_row_1<float, float, float, 2ul, "
      "32ul>(int)",
      "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, float, float, "
      "2ul, 32ul>(int)"};
  const std::vector<std::string> shown = DistinctShortNames(names, 31);
  ASSERT_EQ(shown.size(), names.size());
  EXPECT_EQ(std::set<std::string>(shown.begin(), shown.begin() + 3).size(), 3u);
  EXPECT_EQ(shown[0], shown[3]);  // the same kernel twice prints the same
  for (const std::string& text : shown) EXPECT_LE(text.size(), 31u);
  EXPECT_NE(shown[0].find("cta"), std::string::npos);
  EXPECT_NE(shown[1].find("warp"), std::string::npos);
}

TEST(NamesTest, WidthZeroPrintsWholeNames) {
  const std::vector<std::string> names = {"void a_very_long_kernel_name<float>(int)"};
  EXPECT_EQ(DistinctShortNames(names, 0), names);
}

}  // namespace
}  // namespace tuneprof

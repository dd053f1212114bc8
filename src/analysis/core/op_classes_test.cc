// op_classes.h: operator and kernel names to the classes the fusion patterns read.
#include "analysis/core/op_classes.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

TEST(OpClasses, AtenNamesByExactName) {
  EXPECT_EQ(OpLetter("aten::addmm"), op_letter::kMatmul);
  EXPECT_EQ(OpLetter("aten::_to_copy"), op_letter::kCast);
  EXPECT_EQ(OpLetter("aten::view"), op_letter::kSkip);
  EXPECT_EQ(OpLetter("aten::not_an_op"), op_letter::kOther);
}

TEST(OpClasses, KernelKeywordsFirstMatchWins) {
  EXPECT_EQ(OpLetter("ampere_sgemm_128x64_nn"), op_letter::kMatmul);
  EXPECT_EQ(OpLetter("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda, "
                     "at::native::memory::LoadWithCast<1>>"),
            op_letter::kCopy);
  EXPECT_EQ(OpLetter("Memcpy HtoD (Pinned -> Device)"), op_letter::kCopy);
  // Communication kernels the keywords miss, by the communication-kernel table.
  EXPECT_EQ(OpLetter("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*)"), op_letter::kCommunication);
  EXPECT_EQ(OpLetter("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)"),
            op_letter::kCommunication);
}

// h100_2gpu_mfu_before: 100 "cast chains" were runs of gpu_kernel_impl_nocast multiplies.
TEST(OpClasses, NocastElementwiseKernelsAreNotCasts) {
  const char* kMul =
      "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<"
      "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>>"
      "(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)";
  EXPECT_EQ(OpLetter(kMul), op_letter::kOtherElementwise);
  EXPECT_EQ(OpLetter("void at::native::vectorized_elementwise_kernel<4, at::native::cast_kernel>"), op_letter::kCast);
}

}  // namespace
}  // namespace tuneprof

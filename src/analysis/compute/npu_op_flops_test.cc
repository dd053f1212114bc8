#include "analysis/compute/npu_op_flops.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

TEST(NpuOpFlopsTest, MatMulTakesKFromTheOperandThatIsNotTheOutputDim) {
  // [4096,12288] x [4608,12288]^T -> [4096,4608]: B is written transposed, K = 12288.
  const OpCost cost =
      EstimateNpuOpCost("MatMul", "4096,12288;4608,12288", "FORMAT_ND;FORMAT_ND", "FLOAT16;FLOAT16", "4096,4608");
  EXPECT_DOUBLE_EQ(cost.flops, 2.0 * 4096 * 4608 * 12288);
  EXPECT_EQ(cost.dtype, "c10::Half");
  EXPECT_DOUBLE_EQ(cost.bytes, 2.0 * (4096.0 * 12288 + 4608.0 * 12288 + 4096.0 * 4608));
}

TEST(NpuOpFlopsTest, BiasInputAndVersionSuffixAreAccepted) {
  // MatMulV2 with a bias: [32,9216] x [4096,9216]^T + [4096] -> [32,4096].
  EXPECT_DOUBLE_EQ(EstimateNpuOpCost("MatMulV2", "32,9216;4096,9216;4096", "FORMAT_ND;FORMAT_ND;FORMAT_ND",
                                     "FLOAT;FLOAT;FLOAT", "32,4096")
                       .flops,
                   2.0 * 32 * 4096 * 9216);
  // A transposed: [32,4096]^T x [32,9216] -> [4096,9216], K = 32.
  EXPECT_DOUBLE_EQ(
      EstimateNpuOpCost("MatMulV3", "32,4096;32,9216", "FORMAT_ND;FORMAT_ND", "FLOAT;FLOAT", "4096,9216").flops,
      2.0 * 4096 * 9216 * 32);
}

TEST(NpuOpFlopsTest, BatchMatMulMultipliesTheBatchDims) {
  const OpCost cost = EstimateNpuOpCost("BatchMatMul", "12,1024,512;12,512,1024", "FORMAT_ND;FORMAT_ND",
                                        "DT_BF16;DT_BF16", "12,1024,1024");
  EXPECT_DOUBLE_EQ(cost.flops, 2.0 * 12 * 1024 * 1024 * 512);
  EXPECT_EQ(cost.dtype, "c10::BFloat16");
}

TEST(NpuOpFlopsTest, UnknownWhereTheShapesDoNotDetermineTheFlops) {
  // Operands disagree on K (81920 vs 8192): no formula fits, the row stays uncosted.
  EXPECT_LT(EstimateNpuOpCost("MatMulV3", "81920,1536;8192,4096", "ND;ND", "DT_BF16;DT_BF16", "1536,4096").flops, 0);
  // Fractal (tiled) formats pad the dims.
  EXPECT_LT(EstimateNpuOpCost("MatMulV2", "32,64,16,16;64,64,16,16", "FRACTAL_NZ;FRACTAL_NZ", "FLOAT16;FLOAT16",
                              "64,32,16,16")
                .flops,
            0);
  // Convolutions in NC1HWC0 count padded channels; attention layouts are attributes the file lacks.
  EXPECT_LT(EstimateNpuOpCost("Conv2D", "32,1,224,224,8;121,4,16,8;64", "NC1HWC0;FRACTAL_Z;NCHW", "FLOAT;FLOAT;FLOAT",
                              "32,8,55,55,8")
                .flops,
            0);
  EXPECT_LT(
      EstimateNpuOpCost("FlashAttentionScore", "8192,2,640;8192,2,640;8192,2,640", "ND;ND;ND", "DT_BF16", "").flops, 0);
  EXPECT_LT(EstimateNpuOpCost("MatMulAllReduce", "4,8;8,4", "ND;ND", "FLOAT16", "4,4").flops, 0);
  EXPECT_LT(EstimateNpuOpCost("MatMul", "4,N/A;8,4", "ND;ND", "FLOAT16", "4,4").flops, 0);
  EXPECT_LT(EstimateNpuOpCost("MatMul", "", "", "", "").flops, 0);
}

TEST(NpuOpFlopsTest, UnknownDtypeLeavesBytesUnknown) {
  const OpCost cost = EstimateNpuOpCost("MatMul", "4,8;8,4", "ND;ND", "COMPLEX64;COMPLEX64", "4,4");
  EXPECT_DOUBLE_EQ(cost.flops, 2.0 * 4 * 4 * 8);
  EXPECT_LT(cost.bytes, 0);
}

}  // namespace
}  // namespace tuneprof

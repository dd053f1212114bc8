#include "analysis/comm/fused_comm_bytes.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

std::vector<NpuTensor> Tensors(std::string_view shapes, std::string_view dtypes) {
  return ParseNpuTensors(shapes, dtypes);
}

TEST(FusedCommBytesTest, MatmulAllReduceReducesItsResult) {
  EXPECT_EQ(FusedCommMessageBytes("MatmulAllReduce", Tensors("4096,2048;2048,7168", "DT_BF16;DT_BF16"),
                                  Tensors("4096,7168", "DT_BF16")),
            4096 * 7168 * 2);
}

TEST(FusedCommBytesTest, MatmulReduceScatterScattersTheWholeResult) {
  // x1 [4096, 2048] x x2 [2048, 7168]: each of 8 ranks keeps [512, 7168] of the [4096, 7168] result.
  EXPECT_EQ(FusedCommMessageBytes("MatmulReduceScatter", Tensors("4096,2048;2048,7168", "FLOAT16;FLOAT16"),
                                  Tensors("512,7168", "FLOAT16")),
            4096 * 7168 * 2);
}

TEST(FusedCommBytesTest, AllGatherMatmulGathersItsFirstOperand) {
  // gather_out written: it is the gathered operand.
  EXPECT_EQ(FusedCommMessageBytes("AllGatherMatmul", Tensors("512,7168;7168,2048", "DT_BF16;DT_BF16"),
                                  Tensors("4096,2048;4096,7168", "DT_BF16;DT_BF16")),
            4096 * 7168 * 2);
  // Without it: the result's rows x the operand's columns.
  EXPECT_EQ(FusedCommMessageBytes("AllGatherMatmul", Tensors("512,7168;7168,2048", "DT_BF16;DT_BF16"),
                                  Tensors("4096,2048;", "DT_BF16;UNDEFINED")),
            4096 * 7168 * 2);
}

TEST(FusedCommBytesTest, DispatchAndCombineTheLargerOfSentAndReceived) {
  EXPECT_EQ(FusedCommMessageBytes("MoeDistributeDispatch", Tensors("4096,7168;4096,8", "DT_BF16;INT32"),
                                  Tensors("32768,7168;32768", "DT_BF16;INT32")),
            32768 * 7168 * 2);
  EXPECT_EQ(FusedCommMessageBytes("MoeDistributeCombine", Tensors("32768,7168;4096,8", "DT_BF16;INT32"),
                                  Tensors("4096,7168", "DT_BF16")),
            32768 * 7168 * 2);
}

TEST(FusedCommBytesTest, UnknownWithoutUsableShapes) {
  EXPECT_EQ(FusedCommMessageBytes("MatmulAllReduce", {}, {}), kNoId);
  EXPECT_EQ(FusedCommMessageBytes("MatmulAllReduce", Tensors("4,4", "FLOAT"), Tensors("4,x", "FLOAT")), kNoId);
  EXPECT_EQ(FusedCommMessageBytes("MatmulReduceScatter", Tensors("4096", "FLOAT"), Tensors("512,7", "FLOAT")),
            kNoId);
  EXPECT_EQ(FusedCommMessageBytes("MoeDistributeDispatch", Tensors("4,4", "NOT_A_TYPE"), Tensors("4,4", "FLOAT")),
            kNoId);
  EXPECT_EQ(FusedCommMessageBytes("NotAFusedKernel", Tensors("4,4", "FLOAT"), Tensors("4,4", "FLOAT")), kNoId);
  // Dims no message has: unknown, never an overflowed product.
  EXPECT_EQ(FusedCommMessageBytes("MatmulAllReduce", Tensors("1,1", "FLOAT"),
                                  Tensors("9223372036854775807,9223372036854775807", "FLOAT")),
            kNoId);
}

}  // namespace
}  // namespace tuneprof

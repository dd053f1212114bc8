#include "analysis/comm/fused_comm_bytes.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

// The message bytes of `op` from its kernel_details columns: input shapes and types, output shapes and types.
int64_t Bytes(std::string_view op, std::string_view in_shapes, std::string_view in_dtypes, std::string_view out_shapes,
              std::string_view out_dtypes) {
  return FusedCommMessageBytes(op, ParseNpuTensors(in_shapes, in_dtypes), ParseNpuTensors(out_shapes, out_dtypes));
}

TEST(FusedCommBytesTest, MatmulAllReduceReducesItsResult) {
  EXPECT_EQ(Bytes("MatmulAllReduce", "4096,2048;2048,7168", "DT_BF16;DT_BF16", "4096,7168", "DT_BF16"),
            4096 * 7168 * 2);
}

TEST(FusedCommBytesTest, MatmulReduceScatterScattersTheWholeResult) {
  // x1 [4096, 2048] x x2 [2048, 7168]: each of 8 ranks keeps [512, 7168] of the [4096, 7168] result.
  EXPECT_EQ(Bytes("MatmulReduceScatter", "4096,2048;2048,7168", "FLOAT16;FLOAT16", "512,7168", "FLOAT16"),
            4096 * 7168 * 2);
}

TEST(FusedCommBytesTest, AllGatherMatmulGathersItsFirstOperand) {
  // gather_out written: it is the gathered operand.
  EXPECT_EQ(Bytes("AllGatherMatmul", "512,7168;7168,2048", "DT_BF16;DT_BF16", "4096,2048;4096,7168", "DT_BF16;DT_BF16"),
            4096 * 7168 * 2);
  // Without it: the result's rows x the operand's columns.
  EXPECT_EQ(Bytes("AllGatherMatmul", "512,7168;7168,2048", "DT_BF16;DT_BF16", "4096,2048;", "DT_BF16;UNDEFINED"),
            4096 * 7168 * 2);
}

TEST(FusedCommBytesTest, DispatchAndCombineTheLargerOfSentAndReceived) {
  EXPECT_EQ(Bytes("MoeDistributeDispatch", "4096,7168;4096,8", "DT_BF16;INT32", "32768,7168;32768", "DT_BF16;INT32"),
            32768 * 7168 * 2);
  EXPECT_EQ(Bytes("MoeDistributeCombine", "32768,7168;4096,8", "DT_BF16;INT32", "4096,7168", "DT_BF16"),
            32768 * 7168 * 2);
}

TEST(FusedCommBytesTest, UnknownWithoutUsableShapes) {
  EXPECT_EQ(FusedCommMessageBytes("MatmulAllReduce", {}, {}), kNoId);
  EXPECT_EQ(Bytes("MatmulAllReduce", "4,4", "FLOAT", "4,x", "FLOAT"), kNoId);
  EXPECT_EQ(Bytes("MatmulReduceScatter", "4096", "FLOAT", "512,7", "FLOAT"), kNoId);
  EXPECT_EQ(Bytes("MoeDistributeDispatch", "4,4", "NOT_A_TYPE", "4,4", "FLOAT"), kNoId);
  EXPECT_EQ(Bytes("NotAFusedKernel", "4,4", "FLOAT", "4,4", "FLOAT"), kNoId);
  // Dims no message has: unknown, never an overflowed product.
  EXPECT_EQ(Bytes("MatmulAllReduce", "1,1", "FLOAT", "9223372036854775807,9223372036854775807", "FLOAT"), kNoId);
}

}  // namespace
}  // namespace tuneprof

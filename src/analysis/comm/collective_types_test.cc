#include "analysis/comm/collective_types.h"

#include <gtest/gtest.h>

#include "model/trace.h"
#include "text_cases.h"

namespace tuneprof {
namespace {

TEST(CollectiveTypeTest, ParsesEverySpelling) {
  const test_support::TextCase<CollectiveType> kCases[] = {
      {"allreduce", CollectiveType::kAllReduce},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", CollectiveType::kAllReduce},
      {"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", CollectiveType::kReduceScatter},
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)", CollectiveType::kSendRecv},
      {"gloo:all_reduce", CollectiveType::kAllReduce},
      {"gloo:all_gather", CollectiveType::kAllGather},
      {"gloo:barrier", CollectiveType::kBarrier},
      {"hcom_allReduce__586_0_1", CollectiveType::kAllReduce},
      {"hcom_reduceScatter__123_1_1", CollectiveType::kReduceScatter},
      {"hcom_receive__123_1_1", CollectiveType::kSendRecv},
      {"hcom_broadcast__1_0_1", CollectiveType::kBroadcast},
      {"all_to_all", CollectiveType::kAllToAll},
      {"_allgather_base", CollectiveType::kAllGather},
      {"reduce", CollectiveType::kReduce},
      {"wait", CollectiveType::kOther},
  };
  test_support::ExpectEachCase(ParseCollectiveType, kCases);
}

TEST(CollectiveTypeTest, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor(CollectiveType::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor(CollectiveType::kAllGather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor(CollectiveType::kReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor(CollectiveType::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor(CollectiveType::kBroadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor(CollectiveType::kSendRecv, 2), 1.0);
  EXPECT_FALSE(BusBandwidthFactor(CollectiveType::kAllReduce, kNoId).has_value());
  EXPECT_FALSE(BusBandwidthFactor(CollectiveType::kBarrier, 2).has_value());
  // A one-rank group moves nothing over a link: no bus bandwidth rather than 0 % of the peak.
  EXPECT_FALSE(BusBandwidthFactor(CollectiveType::kAllReduce, 1).has_value());
  EXPECT_FALSE(BusBandwidthFactor(CollectiveType::kBroadcast, 1).has_value());
}

}  // namespace
}  // namespace tuneprof

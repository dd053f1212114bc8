#include "analysis/breakdown/trace_summary.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"
#include "model/trace_builder.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;
using hand_built::Us;

// info's two counts: the communication kernels, the population comm counts, and the events that carry
// collective arguments; a SendRecv launched outside any collective's annotation is the first and not the second.
TEST(TraceSummaryTest, CountsCommunicationKernelsBesideCollectiveArguments) {
  HandBuiltTrace hand;
  const uint32_t all_to_all = hand.Kernel("ncclDevKernel_SendRecv", Us(0), Us(10));
  hand.Kernel("ncclDevKernel_SendRecv", Us(20), Us(10));
  hand.Kernel("ampere_sgemm_128x64_nn", Us(40), Us(10));
  TraceBuilder* b = hand.mutable_builder();
  CollectiveInfo info;
  info.event = all_to_all;
  info.collective = b->Intern("all_to_all");
  b->AddCollectiveInfo(info);
  const TraceSummary s = SummarizeTrace(hand.Finish());
  EXPECT_EQ(s.communication_kernels, 2u);
  EXPECT_EQ(s.collectives, 1u);
}

}  // namespace
}  // namespace tuneprof

// The producer facts say what each format's comparison said: GC pauses only where the host timeline
// draws every operator, the Nsight Systems wordings only for its export.
#include "model/producer_facts.h"

#include <gtest/gtest.h>

namespace tuneprof {
namespace {

TEST(ProducerFacts, HostOpsDrawnByThePytorchProfilerOnly) {
  EXPECT_TRUE(ProducerFactsOf(TraceFormat::kKineto).host_ops_drawn);
  EXPECT_TRUE(ProducerFactsOf(TraceFormat::kTorchNpuTraceView).host_ops_drawn);
  EXPECT_FALSE(ProducerFactsOf(TraceFormat::kNsysSqlite).host_ops_drawn);
  EXPECT_FALSE(ProducerFactsOf(TraceFormat::kChromeTrace).host_ops_drawn);
  EXPECT_FALSE(ProducerFactsOf(TraceFormat::kPytorchLegacy).host_ops_drawn);
}

TEST(ProducerFacts, NsightSystemsOnlyForItsExport) {
  EXPECT_TRUE(ProducerFactsOf(TraceFormat::kNsysSqlite).nsight_systems);
  EXPECT_FALSE(ProducerFactsOf(TraceFormat::kKineto).nsight_systems);
  EXPECT_FALSE(ProducerFactsOf(TraceFormat::kUnknown).nsight_systems);
}

}  // namespace
}  // namespace tuneprof

#include "analysis/compute/gpu_metrics.h"

#include <gtest/gtest.h>

#include "analysis/core/hand_built_trace_for_test.h"

namespace tuneprof {
namespace {

using hand_built::HandBuiltTrace;

TEST(GpuMetricsTest, MeansOfTheSamplesInsideTheWindow) {
  HandBuiltTrace t;
  TraceBuilder* b = t.mutable_builder();
  const ProcessKey gpu{0};
  for (int64_t ts = 0; ts < 10; ++ts) {
    b->AddCounterSample(gpu, "GPU_METRICS/SMs Active [Throughput %]", ts * 100, ts < 5 ? 20 : 80);
    b->AddCounterSample(gpu, "GPU_METRICS/DRAM Read Bandwidth [Throughput %]", ts * 100, 30);
    b->AddCounterSample(gpu, "GPU_METRICS/DRAM Write Bandwidth [Throughput %]", ts * 100, 10);
  }
  b->AddCounterSample(gpu, "AI Core Freq/MHz", 0, 1800);  // not a GPU metric
  const Trace trace = t.Finish();
  const GpuMetricSamples samples(trace);
  const SampledGpuMetrics all = samples.Measure(0, 1000);
  EXPECT_EQ(all.sm_samples, 10u);
  EXPECT_DOUBLE_EQ(*all.sm_active, 0.5);
  EXPECT_DOUBLE_EQ(*all.dram_bandwidth, 0.4);
  EXPECT_FALSE(all.tensor_active.has_value());
  EXPECT_EQ(all.sm_metric, "SMs Active [Throughput %]");
  const SampledGpuMetrics late = samples.Measure(500, 1000);  // [500, 1000): 5 samples of 80
  EXPECT_EQ(late.sm_samples, 5u);
  EXPECT_DOUBLE_EQ(*late.sm_active, 0.8);
}

TEST(GpuMetricsTest, NoneWithoutGpuMetricCounters) {
  HandBuiltTrace t;
  t.mutable_builder()->AddCounterSample(ProcessKey{0}, "AI Core Freq/MHz", 0, 1800);
  const Trace trace = t.Finish();
  EXPECT_FALSE(GpuMetricSamples(trace).Measure(0, 100).any());
}

}  // namespace
}  // namespace tuneprof

#pragma once
// GPU utilizations measured by Nsight Systems' GPU metrics sampling (nsys profile
// --gpu-metrics-devices=...): the share of SMs active, tensor pipes active, and DRAM read and write
// throughput as a share of the peak, each sampled at a fixed rate on each GPU. The importer keeps them
// as counters "GPU_METRICS/<metricName>" of the GPU's process; their values are percent.
//
// Over a window, each figure is the mean of the samples inside it on every GPU of the rank (the samples
// are evenly spaced, so the mean is time-weighted); DRAM bandwidth is mean read + mean write throughput,
// both shares of the same peak. These are measurements, preferred to the estimates from launch
// configurations and shapes.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace tuneprof {

struct SampledGpuMetrics {
  uint64_t sm_samples = 0;               // SM-activity samples in the window
  std::string sm_metric;                 // the metric read, as nsys names it ("SMs Active [Throughput %]")
  std::optional<double> sm_active;       // 0..1
  std::optional<double> tensor_active;   // 0..1
  std::optional<double> dram_bandwidth;  // read + write throughput, 0..1 of the DRAM peak
  std::vector<int64_t> gpus;             // ordinals of the GPUs the trace sampled, ascending

  bool any() const { return sm_active || dram_bandwidth || tensor_active; }
};

// The trace's GPU-metric samples sorted by time once (O(s log s)), so that each window, a step or the
// whole span, is measured in O(log s).
class GpuMetricSamples {
 public:
  explicit GpuMetricSamples(const Trace& trace);

  // Samples with start_ns <= ts < end_ns.
  SampledGpuMetrics Measure(int64_t start_ns, int64_t end_ns) const;

 private:
  struct Series {
    std::vector<int64_t> ts;     // ascending
    std::vector<double> prefix;  // prefix[i] = Σ of the first i values
  };
  std::array<Series, 4> series_;  // SM active, tensor active, DRAM read, DRAM write
  std::string sm_metric_;
  std::vector<int64_t> gpus_;
};

}  // namespace tuneprof

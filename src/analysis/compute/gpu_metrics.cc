#include "analysis/compute/gpu_metrics.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace tuneprof {
namespace {

constexpr std::string_view kPrefix = "GPU_METRICS/";

enum class Metric : uint8_t { kSmActive, kTensorActive, kDramRead, kDramWrite, kNone };

Metric MetricOf(std::string_view name) {
  if (name.starts_with("SMs Active") || name.starts_with("SM Active")) return Metric::kSmActive;
  if (name.starts_with("Tensor Active")) return Metric::kTensorActive;
  if (name.starts_with("DRAM Read Bandwidth")) return Metric::kDramRead;
  if (name.starts_with("DRAM Write Bandwidth")) return Metric::kDramWrite;
  return Metric::kNone;
}

struct Mean {
  double sum = 0;
  uint64_t count = 0;
  std::optional<double> Fraction() const {
    return count ? std::optional<double>(sum / static_cast<double>(count) / 100.0) : std::nullopt;
  }
};

}  // namespace

SampledGpuMetrics MeasureSampledGpuMetrics(const Trace& trace, int64_t start_ns, int64_t end_ns) {
  SampledGpuMetrics out;
  std::vector<Metric> metric_of(trace.counters().size(), Metric::kNone);
  std::vector<int64_t> gpu_of(trace.counters().size(), kNoId);
  bool any = false;
  for (size_t c = 0; c < trace.counters().size(); ++c) {
    const Counter& counter = trace.counters()[c];
    const std::string_view name = trace.str(counter.name);
    if (!name.starts_with(kPrefix)) continue;
    metric_of[c] = MetricOf(name.substr(kPrefix.size()));
    if (metric_of[c] == Metric::kSmActive) out.sm_metric = std::string(name.substr(kPrefix.size()));
    const uint32_t device = trace.processes()[counter.process].device;
    if (device != kNoIndex) gpu_of[c] = trace.devices()[device].id;
    any = any || metric_of[c] != Metric::kNone;
  }
  if (!any) return out;
  std::array<Mean, 4> means;
  std::vector<bool> sampled(trace.counters().size(), false);
  for (const CounterSample& sample : trace.counter_samples()) {
    const Metric metric = metric_of[sample.counter];
    if (metric == Metric::kNone || sample.ts_ns < start_ns || sample.ts_ns >= end_ns) continue;
    Mean& mean = means[static_cast<size_t>(metric)];
    mean.sum += sample.value;
    ++mean.count;
    sampled[sample.counter] = true;
  }
  for (size_t c = 0; c < sampled.size(); ++c) {
    if (sampled[c] && gpu_of[c] != kNoId) out.gpus.push_back(gpu_of[c]);
  }
  std::sort(out.gpus.begin(), out.gpus.end());
  out.gpus.erase(std::unique(out.gpus.begin(), out.gpus.end()), out.gpus.end());
  out.sm_samples = means[static_cast<size_t>(Metric::kSmActive)].count;
  out.sm_active = means[static_cast<size_t>(Metric::kSmActive)].Fraction();
  out.tensor_active = means[static_cast<size_t>(Metric::kTensorActive)].Fraction();
  const auto read = means[static_cast<size_t>(Metric::kDramRead)].Fraction();
  const auto write = means[static_cast<size_t>(Metric::kDramWrite)].Fraction();
  if (read || write) out.dram_bandwidth = read.value_or(0) + write.value_or(0);
  return out;
}

}  // namespace tuneprof

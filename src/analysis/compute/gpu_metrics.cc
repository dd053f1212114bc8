#include "analysis/compute/gpu_metrics.h"

#include <algorithm>
#include <string_view>
#include <utility>

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

}  // namespace

GpuMetricSamples::GpuMetricSamples(const Trace& trace) {
  std::vector<Metric> metric_of(trace.counters().size(), Metric::kNone);
  bool any = false;
  for (size_t c = 0; c < trace.counters().size(); ++c) {
    const Counter& counter = trace.counters()[c];
    const std::string_view name = trace.str(counter.name);
    if (!name.starts_with(kPrefix)) continue;
    metric_of[c] = MetricOf(name.substr(kPrefix.size()));
    if (metric_of[c] == Metric::kNone) continue;
    any = true;
    if (metric_of[c] == Metric::kSmActive) sm_metric_ = std::string(name.substr(kPrefix.size()));
    const uint32_t device = trace.processes()[counter.process].device;
    if (device != kNoIndex) gpus_.push_back(trace.devices()[device].id);
  }
  std::sort(gpus_.begin(), gpus_.end());
  gpus_.erase(std::unique(gpus_.begin(), gpus_.end()), gpus_.end());
  if (!any) return;
  std::array<std::vector<std::pair<int64_t, double>>, 4> samples;
  for (const CounterSample& sample : trace.counter_samples()) {
    const Metric metric = metric_of[sample.counter];
    if (metric != Metric::kNone) samples[static_cast<size_t>(metric)].emplace_back(sample.ts_ns, sample.value);
  }
  for (size_t m = 0; m < samples.size(); ++m) {
    std::sort(samples[m].begin(), samples[m].end());
    Series& series = series_[m];
    series.prefix.push_back(0);
    for (const auto& [ts, value] : samples[m]) {
      series.ts.push_back(ts);
      series.prefix.push_back(series.prefix.back() + value);
    }
  }
}

SampledGpuMetrics GpuMetricSamples::Measure(int64_t start_ns, int64_t end_ns) const {
  SampledGpuMetrics out;
  out.sm_metric = sm_metric_;
  out.gpus = gpus_;
  std::array<std::optional<double>, 4> mean;
  std::array<uint64_t, 4> count{};
  for (size_t m = 0; m < series_.size(); ++m) {
    const Series& series = series_[m];
    const size_t from = std::lower_bound(series.ts.begin(), series.ts.end(), start_ns) - series.ts.begin();
    const size_t to = std::lower_bound(series.ts.begin(), series.ts.end(), end_ns) - series.ts.begin();
    if (to <= from) continue;
    count[m] = to - from;
    mean[m] = (series.prefix[to] - series.prefix[from]) / static_cast<double>(count[m]) / 100.0;
  }
  out.sm_samples = count[static_cast<size_t>(Metric::kSmActive)];
  out.sm_active = mean[static_cast<size_t>(Metric::kSmActive)];
  out.tensor_active = mean[static_cast<size_t>(Metric::kTensorActive)];
  const auto read = mean[static_cast<size_t>(Metric::kDramRead)];
  const auto write = mean[static_cast<size_t>(Metric::kDramWrite)];
  if (read || write) out.dram_bandwidth = read.value_or(0) + write.value_or(0);
  return out;
}

}  // namespace tuneprof

#include "analysis/compute/memory_traffic.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <charconv>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tuneprof {
namespace {

bool OnAiCores(std::string_view core) {
  return core == "AI_CORE" || core == "AI_VECTOR_CORE" || core == "MIX_AIC" || core == "MIX_AIV";
}

// The chip's memory bandwidth or, where no measured peak is known, its cores' aggregate read path; and
// the utilization of the achieved bandwidth against it.
void SetPeak(const HardwareProfile* profile, MemoryTrafficEstimate* out) {
  if (profile != nullptr) {
    if (profile->memory_gb_per_s.value) {
      out->peak_gb_per_s = *profile->memory_gb_per_s.value;
      out->peak_source = "memory_gb_per_s";
    } else if (profile->core_read_path_gb_per_s.value) {
      out->peak_gb_per_s = *profile->core_read_path_gb_per_s.value;
      out->peak_source = "core_read_path_gb_per_s";
    }
  }
  if (out->achieved_gb_per_s && out->peak_gb_per_s && *out->peak_gb_per_s > 0) {
    out->utilization = *out->achieved_gb_per_s / *out->peak_gb_per_s;
  }
}

// Achieved bandwidth and utilization of the operators counted.
MemoryTrafficEstimate Against(const HardwareProfile* profile, MemoryTrafficEstimate out) {
  if (out.ops == 0 || out.time_ns <= 0) return out;
  out.achieved_gb_per_s = out.bytes / static_cast<double>(out.time_ns);  // bytes per ns = GB/s
  SetPeak(profile, &out);
  return out;
}

// "HBM 3/Write/Write(MB/s)" and its read twin.
bool IsHbmSeries(std::string_view name) {
  return name.starts_with("HBM ") && (name.ends_with("/Read(MB/s)") || name.ends_with("/Write(MB/s)"));
}

// NpuTensorBytes of interned shapes and data types, parsed once per distinct pair: a table of a million
// rows repeats a few hundred. Past kMaxPairs distinct pairs (shapes that change every row) the rest are
// parsed each time, so the memory stays bounded.
class TensorBytesCache {
 public:
  explicit TensorBytesCache(const Trace& trace) : trace_(trace) {}

  std::optional<double> Bytes(StringId shapes, StringId dtypes) {
    const uint64_t key = (uint64_t{shapes.value} << 32) | dtypes.value;
    if (const auto found = bytes_.find(key); found != bytes_.end()) return found->second;
    const std::optional<double> bytes = NpuTensorBytes(trace_.str(shapes), trace_.str(dtypes));
    if (bytes_.size() < kMaxPairs) bytes_.emplace(key, bytes);
    return bytes;
  }

 private:
  static constexpr size_t kMaxPairs = 1 << 16;
  const Trace& trace_;
  std::unordered_map<uint64_t, std::optional<double>> bytes_;
};

}  // namespace

MemoryTrafficEstimate EstimateNpuMemoryTraffic(const Trace& trace, const HardwareProfile* profile) {
  MemoryTrafficEstimate out;
  TensorBytesCache tensor_bytes(trace);
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (!OnAiCores(trace.str(row.accelerator_core)) || row.dur_ns == kNoId || row.dur_ns <= 0) continue;
    const std::string_view input_dtypes = trace.str(row.input_data_types);
    const std::optional<double> in = tensor_bytes.Bytes(row.input_shapes, row.input_data_types);
    const std::optional<double> result = tensor_bytes.Bytes(row.output_shapes, row.output_data_types);
    if (input_dtypes.empty() || !in || !result) {
      ++out.ops_unknown;
      continue;
    }
    ++out.ops;
    out.bytes += *in + *result;
    out.time_ns += row.dur_ns;
  }
  if (out.ops > 0) out.source = "kernel_details shapes";
  return Against(profile, std::move(out));
}

MemoryTrafficEstimate MeasureNpuMainMemory(const Trace& trace, const HardwareProfile* profile) {
  struct Core {
    const NpuOpMetricColumn* read;
    const NpuOpMetricColumn* write;
    const NpuOpMetricColumn* time;  // µs
  };
  const std::array<Core, 2> cores = {
      Core{trace.kernel_metric("aic_main_mem_read_bw(GB/s)"), trace.kernel_metric("aic_main_mem_write_bw(GB/s)"),
           trace.kernel_metric("aicore_time(us)")},
      Core{trace.kernel_metric("aiv_main_mem_read_bw(GB/s)"), trace.kernel_metric("aiv_main_mem_write_bw(GB/s)"),
           trace.kernel_metric("aiv_time(us)")}};
  MemoryTrafficEstimate out;
  if (std::none_of(cores.begin(), cores.end(), [](const Core& c) { return c.read || c.write; })) return out;
  const auto value = [](const NpuOpMetricColumn* column, size_t row) {
    return column && row < column->values.size() && std::isfinite(column->values[row]) ? column->values[row] : 0.0;
  };
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    const NpuOpRow& row = rows[i];
    if (!OnAiCores(trace.str(row.accelerator_core)) || row.dur_ns == kNoId || row.dur_ns <= 0) continue;
    double bytes = 0;
    for (const Core& core : cores) {
      const double gb_per_s = value(core.read, i) + value(core.write, i);
      const double time_ns =
          core.time && value(core.time, i) > 0 ? value(core.time, i) * 1e3 : static_cast<double>(row.dur_ns);
      bytes += gb_per_s * time_ns;  // GB/s x ns = bytes
    }
    ++out.ops;
    out.bytes += bytes;
    out.time_ns += row.dur_ns;
  }
  if (out.ops > 0) {
    out.source = "kernel_details PMU main_mem";
    out.measured = true;
  }
  return Against(profile, std::move(out));
}

MemoryTrafficEstimate EstimateShapeMemoryTraffic(const RankOpFlops& flops, const HardwareProfile* profile) {
  MemoryTrafficEstimate out;
  if (flops.source != "record_shapes") return out;
  for (const OpFlopsRow& row : flops.ops) {
    if (row.outermost != row.count) continue;  // nested under another costed operator somewhere
    if (!row.device_time || !row.bytes_known || row.bytes <= 0 || row.time_ns <= 0) {
      out.ops_unknown += row.count;
      continue;
    }
    out.ops += row.count;
    out.bytes += row.bytes;
    out.time_ns += row.time_ns;
  }
  if (out.ops > 0) out.source = "record_shapes";
  return Against(profile, std::move(out));
}

MemoryTrafficEstimate MeasureHbmSampling(const Trace& trace, const HardwareProfile* profile, int64_t start_ns,
                                         int64_t end_ns, int64_t busy_ns) {
  MemoryTrafficEstimate out;
  const std::vector<Counter>& counters = trace.counters();
  std::vector<char> hbm(counters.size(), 0);
  for (size_t i = 0; i < counters.size(); ++i) hbm[i] = IsHbmSeries(trace.str(counters[i].name));
  std::vector<double> sum(counters.size(), 0);
  std::vector<uint64_t> count(counters.size(), 0);
  for (const CounterSample& s : trace.counter_samples()) {
    if (s.counter >= counters.size() || !hbm[s.counter] || s.ts_ns < start_ns || s.ts_ns >= end_ns) continue;
    sum[s.counter] += s.value;
    ++count[s.counter];
  }
  double mib_per_s = 0;
  for (size_t i = 0; i < counters.size(); ++i) {
    if (count[i] == 0) continue;
    mib_per_s += sum[i] / static_cast<double>(count[i]);
    out.samples += count[i];
    ++out.series;
  }
  if (out.series == 0 || end_ns <= start_ns || busy_ns <= 0) return out;
  out.source = "HBM sampling";
  out.measured = true;
  out.span_gb_per_s = mib_per_s * 1048576.0 / 1e9;
  out.bytes = *out.span_gb_per_s * static_cast<double>(end_ns - start_ns);  // GB/s x ns = bytes
  out.time_ns = std::min(busy_ns, end_ns - start_ns);
  out.achieved_gb_per_s = out.bytes / static_cast<double>(out.time_ns);
  SetPeak(profile, &out);
  return out;
}

}  // namespace tuneprof

#include "analysis/compute/memory_traffic.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <array>
#include <charconv>
#include <utility>
#include <vector>

namespace tuneprof {
namespace {

constexpr std::array<std::pair<std::string_view, double>, 22> kNpuDtypeBytes = {{
    {"FLOAT", 4},       {"FLOAT32", 4},  {"FP32", 4},          {"FLOAT16", 2},     {"FP16", 2},   {"BF16", 2},
    {"BFLOAT16", 2},    {"DOUBLE", 8},   {"INT8", 1},          {"UINT8", 1},       {"BOOL", 1},   {"INT16", 2},
    {"UINT16", 2},      {"INT32", 4},    {"UINT32", 4},        {"INT64", 8},       {"UINT64", 8}, {"COMPLEX64", 8},
    {"COMPLEX128", 16}, {"HIFLOAT8", 1}, {"FLOAT8_E4M3FN", 1}, {"FLOAT8_E5M2", 1},
}};

// An optional input the operator was called without: no tensor, no bytes.
constexpr std::string_view kAbsentTensor = "UNDEFINED";

bool OnAiCores(std::string_view core) {
  return core == "AI_CORE" || core == "AI_VECTOR_CORE" || core == "MIX_AIC" || core == "MIX_AIV";
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == separator) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '"')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '"')) text.remove_suffix(1);
  return text;
}

// Elements of one tensor ("32,3,224,224"; "" is a scalar); nullopt when a dimension is not a number.
std::optional<double> Numel(std::string_view shape) {
  shape = Trim(shape);
  double numel = 1;
  if (shape.empty()) return numel;
  for (std::string_view dim : Split(shape, ',')) {
    dim = Trim(dim);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
    if (error != std::errc() || end != dim.data() + dim.size() || value < 0) return std::nullopt;
    numel *= static_cast<double>(value);
  }
  return numel;
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

}  // namespace

double NpuDtypeBytes(std::string_view dtype) {
  dtype = Trim(dtype);
  if (dtype.starts_with("DT_")) dtype.remove_prefix(3);
  for (const auto& [name, bytes] : kNpuDtypeBytes) {
    if (dtype == name) return bytes;
  }
  return 0;
}

std::optional<double> NpuTensorBytes(std::string_view shapes, std::string_view dtypes) {
  const std::vector<std::string_view> shape_list = Split(shapes, ';');
  const std::vector<std::string_view> dtype_list = Split(dtypes, ';');
  if (shape_list.size() != dtype_list.size()) return std::nullopt;
  double bytes = 0;
  for (size_t i = 0; i < shape_list.size(); ++i) {
    if (Trim(dtype_list[i]) == kAbsentTensor) continue;
    const double element = NpuDtypeBytes(dtype_list[i]);
    const std::optional<double> numel = Numel(shape_list[i]);
    if (element <= 0 || !numel) return std::nullopt;
    bytes += element * *numel;
  }
  return bytes;
}

MemoryTrafficEstimate EstimateNpuMemoryTraffic(const Trace& trace, const HardwareProfile* profile) {
  MemoryTrafficEstimate out;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (!OnAiCores(trace.str(row.accelerator_core)) || row.dur_ns == kNoId || row.dur_ns <= 0) continue;
    const std::string_view input_dtypes = trace.str(row.input_data_types);
    const std::optional<double> in = NpuTensorBytes(trace.str(row.input_shapes), input_dtypes);
    const std::optional<double> result = NpuTensorBytes(trace.str(row.output_shapes), trace.str(row.output_data_types));
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

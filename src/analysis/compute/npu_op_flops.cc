#include "analysis/compute/npu_op_flops.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <vector>

namespace tuneprof {

namespace {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t from = 0;
  while (true) {
    const size_t at = text.find(separator, from);
    parts.push_back(text.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return parts;
    from = at + 1;
  }
}

// "4096,9216" -> {4096, 9216}; false for anything but positive integers.
bool ParseShape(std::string_view text, std::vector<int64_t>* dims) {
  dims->clear();
  if (text.empty()) return false;
  for (std::string_view part : Split(text, ',')) {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (error != std::errc() || end != part.data() + part.size() || value <= 0) return false;
    dims->push_back(value);
  }
  return true;
}

bool IsPlainFormat(std::string_view format) { return format == "FORMAT_ND" || format == "ND"; }

// MatMul, MatMulV2, MatMulV3, BatchMatMul, BatchMatMulV2, BatchMatMulV3.
bool IsMatrixProduct(std::string_view type) {
  if (type.starts_with("Batch")) type.remove_prefix(5);
  if (!type.starts_with("MatMul")) return false;
  type.remove_prefix(6);
  return type.empty() || (type.size() == 2 && type[0] == 'V' && type[1] >= '1' && type[1] <= '9');
}

// K of an operand whose last two dims hold `outer` (M or N) and K in either order; 0 when neither does.
int64_t InnerDim(const std::vector<int64_t>& operand, int64_t outer) {
  const int64_t a = operand[operand.size() - 2], b = operand[operand.size() - 1];
  if (a == outer) return b;
  if (b == outer) return a;
  return 0;
}

}  // namespace

std::string_view NpuDtypeAsShapeDtype(std::string_view npu_dtype) {
  if (npu_dtype.starts_with("DT_")) npu_dtype.remove_prefix(3);
  if (npu_dtype == "FLOAT16" || npu_dtype == "FP16") return "c10::Half";
  if (npu_dtype == "BF16" || npu_dtype == "BFLOAT16") return "c10::BFloat16";
  if (npu_dtype == "FLOAT" || npu_dtype == "FLOAT32" || npu_dtype == "FP32") return "float";
  if (npu_dtype == "INT8") return "signed char";
  if (npu_dtype == "UINT8") return "unsigned char";
  return "";
}

OpCost EstimateNpuOpCost(std::string_view type, std::string_view input_shapes, std::string_view input_formats,
                         std::string_view input_dtypes, std::string_view output_shapes) {
  if (!IsMatrixProduct(type)) return {};
  const auto shapes = Split(input_shapes, ';');
  const auto formats = Split(input_formats, ';');
  const auto dtypes = Split(input_dtypes, ';');
  if (shapes.size() < 2 || formats.size() < 2 || !IsPlainFormat(formats[0]) || !IsPlainFormat(formats[1])) return {};
  std::vector<int64_t> a, b, out;
  if (!ParseShape(shapes[0], &a) || !ParseShape(shapes[1], &b) || !ParseShape(Split(output_shapes, ';')[0], &out)) {
    return {};
  }
  if (a.size() < 2 || b.size() < 2 || out.size() < 2) return {};
  const int64_t m = out[out.size() - 2], n = out[out.size() - 1];
  const int64_t k = InnerDim(a, m);
  if (k == 0 || InnerDim(b, n) != k) return {};
  const double batch = Numel(out) / (static_cast<double>(m) * static_cast<double>(n));
  OpCost cost;
  cost.flops = 2 * batch * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  cost.dtype = NpuDtypeAsShapeDtype(dtypes.empty() ? std::string_view() : dtypes[0]);
  const int64_t element = ShapeDtypeBytes(cost.dtype);
  if (element > 0) cost.bytes = static_cast<double>(element) * (Numel(a) + Numel(b) + Numel(out));
  return cost;
}

namespace {

struct CostedRow {
  size_t row;
  OpCost cost;
};

// Whether row `r` counts towards the steps' FLOPs: its Step Id when the file has one, else its start
// inside a step range; every row when the trace has no steps.
bool RowInSteps(const Trace& trace, const NpuOpRow& row) {
  if (trace.steps().empty()) return true;
  if (row.step != kNoId) return true;
  return std::any_of(trace.steps().begin(), trace.steps().end(),
                     [&](const Step& step) { return step.start_ns <= row.start_ns && row.start_ns < step.end_ns; });
}

int64_t StepTime(const Trace& trace, const KernelDetailTable& table) {
  int64_t total = 0;
  for (const Step& step : trace.steps()) total += step.end_ns - step.start_ns;
  if (total > 0) return total;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const NpuOpRow& row : table.rows) {
    if (row.start_ns == kNoId || row.dur_ns == kNoId) continue;
    first = std::min(first, row.start_ns);
    last = std::max(last, row.start_ns + row.dur_ns);
  }
  return last > first ? last - first : 0;
}

void FillNpuMfu(const Trace& trace, const HardwareProfile* profile, const std::vector<CostedRow>& costed,
                RankOpFlops* out) {
  const KernelDetailTable& table = trace.kernel_details();
  std::unordered_map<std::string_view, double> by_dtype;
  for (const CostedRow& c : costed) {
    by_dtype[c.cost.dtype] += c.cost.flops;
    if (RowInSteps(trace, table.rows[c.row])) out->step_flops += c.cost.flops;
  }
  double best = -1;
  for (const auto& [dtype, flops] : by_dtype) {
    if (flops > best || (flops == best && std::string(dtype) < out->dtype)) {
      best = flops;
      out->dtype = std::string(dtype);
    }
  }
  out->step_ns = StepTime(trace, table);
  if (out->step_ns > 0 && out->step_flops > 0) {
    out->achieved_flops_per_s = out->step_flops / (static_cast<double>(out->step_ns) * 1e-9);
  }
  if (profile) out->peak_flops_per_s = PeakFlopsPerSecond(*profile, out->dtype);  // one NPU per rank
  if (out->achieved_flops_per_s && out->peak_flops_per_s && *out->peak_flops_per_s > 0) {
    out->mfu = *out->achieved_flops_per_s / *out->peak_flops_per_s;
  }
}

}  // namespace

RankOpFlops ComputeNpuOpFlops(const Trace& trace, const HardwareProfile* profile) {
  RankOpFlops out;
  out.source = "kernel_details";
  const KernelDetailTable& table = trace.kernel_details();
  std::vector<CostedRow> costed;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const NpuOpRow& row = table.rows[r];
    if (row.input_shapes.value == 0) continue;
    ++out.ops_with_shapes;
    const OpCost cost =
        EstimateNpuOpCost(trace.str(row.type), trace.str(row.input_shapes), trace.str(row.input_formats),
                          trace.str(row.input_data_types), trace.str(row.output_shapes));
    if (cost.flops >= 0) costed.push_back({r, cost});
  }
  out.shapes = out.ops_with_shapes > 0;
  out.ops_costed = costed.size();
  std::unordered_map<std::string_view, size_t> rows;  // op type -> index into out.ops
  for (const CostedRow& c : costed) {
    const NpuOpRow& row = table.rows[c.row];
    const std::string_view type = trace.str(row.type);
    auto [it, added] = rows.emplace(type, out.ops.size());
    if (added) {
      out.ops.emplace_back();
      out.ops.back().name = std::string(type);
      out.ops.back().dtype = std::string(c.cost.dtype);
      out.ops.back().device_time = true;
    }
    OpFlopsRow& op = out.ops[it->second];
    ++op.count;
    ++op.outermost;  // device tasks do not nest
    op.flops += c.cost.flops;
    if (c.cost.bytes >= 0)
      op.bytes += c.cost.bytes;
    else
      op.bytes_known = false;
    op.time_ns += std::max<int64_t>(row.dur_ns, 0);
    out.flops += c.cost.flops;
  }
  for (OpFlopsRow& op : out.ops) op.roof = RooflineOf(op, profile);
  std::sort(out.ops.begin(), out.ops.end(), [](const OpFlopsRow& a, const OpFlopsRow& b) {
    return a.flops != b.flops ? a.flops > b.flops : a.name < b.name;
  });
  if (!costed.empty()) FillNpuMfu(trace, profile, costed, &out);
  return out;
}

}  // namespace tuneprof

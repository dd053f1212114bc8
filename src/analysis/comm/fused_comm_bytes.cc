#include "analysis/comm/fused_comm_bytes.h"

#include <algorithm>
#include <limits>

#include "analysis/core/comm_kernel_rules.h"

namespace tuneprof {
namespace {

constexpr double kMaxBytes = static_cast<double>(std::numeric_limits<int64_t>::max() / 2);

// Elements as a double (dims from a file may overflow an integer product); 1 for a scalar.
double Elements(const std::vector<int64_t>& dims, size_t from, size_t to) {
  double n = 1;
  for (size_t i = from; i < to && i < dims.size(); ++i) n *= static_cast<double>(dims[i]);
  return n;
}

// A present tensor with at least `rank` dims.
bool Has(const std::vector<NpuTensor>& list, size_t i, size_t rank = 0) {
  return i < list.size() && list[i].element_bytes > 0 && list[i].dims.size() >= rank;
}

double Whole(const NpuTensor& t) { return Elements(t.dims, 0, t.dims.size()) * t.element_bytes; }
double Rows(const NpuTensor& t) { return Elements(t.dims, 0, t.dims.size() - 1); }
double Columns(const NpuTensor& t) { return static_cast<double>(t.dims.back()); }

double Estimate(std::string_view pattern, const std::vector<NpuTensor>& in, const std::vector<NpuTensor>& out) {
  if (pattern == "MatmulAllReduce") return Has(out, 0) ? Whole(out[0]) : -1;
  if (pattern == "MatmulReduceScatter") {
    return Has(in, 0, 2) && Has(out, 0, 2) ? Rows(in[0]) * Columns(out[0]) * out[0].element_bytes : -1;
  }
  if (pattern == "AllGatherMatmul") {
    if (Has(out, 1, 2)) return Whole(out[1]);
    return Has(in, 0, 2) && Has(out, 0, 2) ? Rows(out[0]) * Columns(in[0]) * in[0].element_bytes : -1;
  }
  if (pattern == "MoeDistributeDispatch" || pattern == "MoeDistributeCombine") {
    if (!Has(in, 0) || !Has(out, 0)) return -1;
    return std::max(Whole(in[0]), Whole(out[0]));
  }
  return -1;
}

}  // namespace

int64_t FusedCommMessageBytes(std::string_view pattern, const std::vector<NpuTensor>& inputs,
                              const std::vector<NpuTensor>& outputs) {
  const double bytes = Estimate(pattern, inputs, outputs);
  if (!(bytes >= 0) || bytes > kMaxBytes) return kNoId;  // unknown, or beyond any real message
  return static_cast<int64_t>(bytes);
}

FusedCommShapes::FusedCommShapes(const Trace& trace) : trace_(&trace) {
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  std::unordered_map<uint32_t, bool> fused_name;  // names repeat: each is matched once
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].start_ns == kNoId) continue;
    auto [it, added] = fused_name.try_emplace(rows[i].name.value, false);
    if (added) {
      const CommKernelRule* rule = MatchCommKernel(trace.str(rows[i].name));
      it->second = rule != nullptr && rule->kind == CommKernelKind::kFusedComm;
    }
    if (it->second) rows_by_start_.emplace(rows[i].start_ns, i);
  }
}

int64_t FusedCommShapes::Bytes(std::string_view name, int64_t start_ns) const {
  const auto [first, last] = rows_by_start_.equal_range(start_ns);
  for (auto it = first; it != last; ++it) {
    const NpuOpRow& row = trace_->kernel_details().rows[it->second];
    if (trace_->str(row.name) != name) continue;
    const CommKernelRule* rule = MatchCommKernel(name);
    if (rule == nullptr) return kNoId;
    return FusedCommMessageBytes(rule->pattern,
                                 ParseNpuTensors(trace_->str(row.input_shapes), trace_->str(row.input_data_types)),
                                 ParseNpuTensors(trace_->str(row.output_shapes), trace_->str(row.output_data_types)));
  }
  return kNoId;
}

}  // namespace tuneprof

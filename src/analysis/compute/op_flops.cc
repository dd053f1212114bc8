#include "analysis/compute/op_flops.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <unordered_map>

#include "analysis/compute/npu_op_flops.h"
#include "analysis/core/host_op_tree.h"

namespace tuneprof {

double Numel(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

namespace {

// ---- formulas

const std::vector<int64_t>* DimsAt(const OpShapes& s, size_t i) { return i < s.dims.size() ? &s.dims[i] : nullptr; }

std::string_view TypeAt(const OpShapes& s, size_t i) { return i < s.types.size() ? s.types[i] : std::string_view(); }

bool IsTensor(const OpShapes& s, size_t i) {
  return (DimsAt(s, i) && !DimsAt(s, i)->empty()) || ShapeDtypeBytes(TypeAt(s, i)) > 0;
}

// Σ numel × dtype size over tensor inputs, plus the output; -1 when a tensor's dtype is unknown.
double BytesOf(const OpShapes& s, double output_numel, std::string_view output_dtype) {
  double bytes = 0;
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (!IsTensor(s, i)) continue;
    const int64_t size = ShapeDtypeBytes(TypeAt(s, i));
    if (size <= 0) return -1;
    bytes += Numel(s.dims[i]) * static_cast<double>(size);
  }
  const int64_t out_size = ShapeDtypeBytes(output_dtype);
  if (out_size <= 0) return -1;
  return bytes + output_numel * static_cast<double>(out_size);
}

std::string_view FirstTensorDtype(const OpShapes& s) {
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (IsTensor(s, i)) return TypeAt(s, i);
  }
  return {};
}

OpCost Cost(const OpShapes& s, double flops, double output_numel) {
  OpCost cost;
  cost.dtype = FirstTensorDtype(s);
  cost.flops = flops;
  cost.bytes = BytesOf(s, output_numel, cost.dtype);
  return cost;
}

// [M,K] x [K,N] at inputs a, b (addmm: 1, 2).
OpCost MatrixProduct(const OpShapes& s, size_t a, size_t b) {
  const auto* x = DimsAt(s, a);
  const auto* y = DimsAt(s, b);
  if (!x || !y || x->size() != 2 || y->size() != 2 || (*x)[1] != (*y)[0]) return {};
  const double m = static_cast<double>((*x)[0]), k = static_cast<double>((*x)[1]), n = static_cast<double>((*y)[1]);
  return Cost(s, 2 * m * k * n, m * n);
}

OpCost BatchedProduct(const OpShapes& s, size_t a, size_t b) {
  const auto* x = DimsAt(s, a);
  const auto* y = DimsAt(s, b);
  if (!x || !y || x->size() != 3 || y->size() != 3 || (*x)[2] != (*y)[1]) return {};
  const double batch = static_cast<double>((*x)[0]), m = static_cast<double>((*x)[1]);
  const double k = static_cast<double>((*x)[2]), n = static_cast<double>((*y)[2]);
  return Cost(s, 2 * batch * m * k * n, batch * m * n);
}

// torch.matmul: 1-D operands gain a dim of 1 (removed again), batch dims broadcast.
OpCost Matmul(const OpShapes& s) {
  const auto* x = DimsAt(s, 0);
  const auto* y = DimsAt(s, 1);
  if (!x || !y || x->empty() || y->empty()) return {};
  std::vector<int64_t> a = *x, b = *y;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  if (a.back() != b[b.size() - 2]) return {};
  const double m = static_cast<double>(a[a.size() - 2]), k = static_cast<double>(a.back());
  const double n = static_cast<double>(b.back());
  double batch = 1;
  const size_t batch_dims = std::max(a.size(), b.size()) - 2;
  for (size_t i = 0; i < batch_dims; ++i) {
    const size_t from_end = batch_dims - i;  // dims counted from the end of the batch part
    const int64_t da = a.size() - 2 >= from_end ? a[a.size() - 2 - from_end] : 1;
    const int64_t db = b.size() - 2 >= from_end ? b[b.size() - 2 - from_end] : 1;
    if (da != db && da != 1 && db != 1) return {};
    batch *= static_cast<double>(std::max(da, db));
  }
  return Cost(s, 2 * batch * m * k * n, batch * m * n);
}

OpCost Linear(const OpShapes& s) {
  const auto* x = DimsAt(s, 0);
  const auto* w = DimsAt(s, 1);
  if (!x || !w || x->empty() || w->size() != 2 || x->back() != (*w)[1]) return {};
  const double rows = Numel(*x) / static_cast<double>(x->back());
  const double k = static_cast<double>((*w)[1]), n = static_cast<double>((*w)[0]);
  return Cost(s, 2 * rows * k * n, rows * n);
}

// Stride/padding/dilation lists from Concrete Inputs, one value per spatial dim ("[2]" repeats).
bool SpatialList(const OpShapes& s, size_t index, size_t spatial, std::vector<int64_t>* out) {
  if (index >= s.concrete.size()) return false;
  std::vector<int64_t> values = IntsIn(s.concrete[index]);
  if (values.size() == 1) values.assign(spatial, values[0]);
  if (values.size() != spatial) return false;
  *out = std::move(values);
  return true;
}

struct ConvArgs {
  size_t stride, padding, dilation, transposed, groups;  // Concrete Inputs indices; SIZE_MAX = absent
};

OpCost Convolution(const OpShapes& s, const ConvArgs& at) {
  const auto* x = DimsAt(s, 0);
  const auto* w = DimsAt(s, 1);
  if (!x || !w || x->size() < 3 || w->size() != x->size()) return {};
  const size_t spatial = x->size() - 2;
  std::vector<int64_t> groups_list =
      at.groups < s.concrete.size() ? IntsIn(s.concrete[at.groups]) : std::vector<int64_t>{};
  if (groups_list.size() != 1 || groups_list[0] <= 0) return {};
  const double groups = static_cast<double>(groups_list[0]);
  const bool transposed =
      at.transposed != SIZE_MAX && at.transposed < s.concrete.size() && s.concrete[at.transposed] == "True";
  double kernel = 1;
  for (size_t i = 2; i < w->size(); ++i) kernel *= static_cast<double>((*w)[i]);
  const double n = static_cast<double>((*x)[0]), c_in = static_cast<double>((*x)[1]);
  if (transposed) {  // weight [C_in, C_out/groups, k...]; every input position feeds C_out/groups × kernel outputs
    double in_positions = 1;
    for (size_t i = 2; i < x->size(); ++i) in_positions *= static_cast<double>((*x)[i]);
    OpCost cost = Cost(s, 2 * n * c_in * in_positions * static_cast<double>((*w)[1]) * kernel, -1);
    cost.bytes = -1;  // the output size needs output_padding; not estimated
    return cost;
  }
  std::vector<int64_t> stride, padding, dilation;
  if (!SpatialList(s, at.stride, spatial, &stride) || !SpatialList(s, at.dilation, spatial, &dilation)) return {};
  auto positive = [](int64_t v) { return v > 0; };
  if (!std::all_of(stride.begin(), stride.end(), positive) ||
      !std::all_of(dilation.begin(), dilation.end(), positive)) {
    return {};  // malformed arguments: no division by zero
  }
  const std::string_view pad_text = at.padding < s.concrete.size() ? s.concrete[at.padding] : std::string_view();
  double out_positions = 1;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = (*x)[i + 2], k = (*w)[i + 2];
    int64_t out = 0;
    if (pad_text == "same") {
      out = in;
    } else {
      if (pad_text == "valid")
        padding.assign(spatial, 0);
      else if (padding.empty() && !SpatialList(s, at.padding, spatial, &padding))
        return {};
      out = (in + 2 * padding[i] - dilation[i] * (k - 1) - 1) / stride[i] + 1;
    }
    if (out <= 0) return {};
    out_positions *= static_cast<double>(out);
  }
  const double c_out = static_cast<double>((*w)[0]);
  return Cost(s, 2 * n * c_out * out_positions * (c_in / groups) * kernel, n * c_out * out_positions);
}

// q [batch..., L, E] (or [B, L, H, E] when heads_second is false), k [.., S, E], v [.., S, Ev].
OpCost Attention(const OpShapes& s, size_t q_at, bool heads_second, bool backward) {
  const auto* q = DimsAt(s, q_at);
  const auto* k = DimsAt(s, q_at + 1);
  const auto* v = DimsAt(s, q_at + 2);
  if (!q || !k || !v || q->size() < 3 || k->size() != q->size() || v->size() != q->size()) return {};
  const size_t r = q->size();
  double batch = 1, l = 0, sk = 0;
  if (heads_second) {
    for (size_t i = 0; i + 2 < r; ++i) batch *= static_cast<double>((*q)[i]);
    l = static_cast<double>((*q)[r - 2]);
    sk = static_cast<double>((*k)[r - 2]);
  } else {  // [B, L, H, E]
    if (r != 4) return {};
    batch = static_cast<double>((*q)[0] * (*q)[2]);
    l = static_cast<double>((*q)[1]);
    sk = static_cast<double>((*k)[1]);
  }
  const double e = static_cast<double>(q->back()), ev = static_cast<double>(v->back());
  const double flops = backward ? 2 * batch * l * sk * (3 * e + 2 * ev) : 2 * batch * l * sk * (e + ev);
  OpCost cost = Cost(s, flops, batch * l * ev);
  return cost;
}

double BroadcastNumel(const OpShapes& s) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (!IsTensor(s, i)) continue;
    const auto& d = s.dims[i];
    if (d.size() > out.size()) out.insert(out.begin(), d.size() - out.size(), 1);
    for (size_t j = 0; j < d.size(); ++j) {
      int64_t& o = out[out.size() - d.size() + j];
      o = std::max(o, d[j]);
    }
  }
  return Numel(out);
}

OpCost PerElement(const OpShapes& s, double per_element) {
  if (!IsTensor(s, 0)) return {};
  const double numel = BroadcastNumel(s);
  return Cost(s, per_element * numel, numel);
}

OpCost Norm(const OpShapes& s, double base, size_t weight_at, size_t bias_at) {
  if (!IsTensor(s, 0)) return {};
  double per_element = base;
  if (DimsAt(s, weight_at) && !DimsAt(s, weight_at)->empty()) per_element += 1;
  if (bias_at != SIZE_MAX && DimsAt(s, bias_at) && !DimsAt(s, bias_at)->empty()) per_element += 1;
  const double numel = Numel(s.dims[0]);
  return Cost(s, per_element * numel, numel);
}

constexpr std::array<std::string_view, 44> kElementWise = {
    "add",           "add_",          "sub",
    "sub_",          "rsub",          "mul",
    "mul_",          "div",           "div_",
    "neg",           "abs",           "pow",
    "sqrt",          "rsqrt",         "exp",
    "log",           "reciprocal",    "maximum",
    "minimum",       "clamp",         "clamp_",
    "relu",          "relu_",         "gelu",
    "gelu_",         "silu",          "silu_",
    "sigmoid",       "tanh",          "threshold_backward",
    "gelu_backward", "silu_backward", "sigmoid_backward",
    "tanh_backward", "hardtanh",      "leaky_relu",
    "elu",           "erf",           "sin",
    "cos",           "square",        "where",
    "masked_fill",   "masked_fill_",
};

constexpr ConvArgs kConvNd{3, 4, 5, SIZE_MAX,
                           6};                   // conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups)
constexpr ConvArgs kConvolution{3, 4, 5, 6, 8};  // convolution/_convolution(..., transposed, output_padding, groups)

OpCost ByName(std::string_view op, const OpShapes& s) {
  if (op == "mm") return MatrixProduct(s, 0, 1);
  if (op == "addmm") return MatrixProduct(s, 1, 2);
  if (op == "bmm") return BatchedProduct(s, 0, 1);
  if (op == "baddbmm") return BatchedProduct(s, 1, 2);
  if (op == "matmul") return Matmul(s);
  if (op == "linear") return Linear(s);
  if (op == "conv1d" || op == "conv2d" || op == "conv3d") return Convolution(s, kConvNd);
  if (op == "convolution" || op == "_convolution") return Convolution(s, kConvolution);
  if (op == "scaled_dot_product_attention" || op == "_scaled_dot_product_flash_attention" ||
      op == "_scaled_dot_product_efficient_attention" || op == "_scaled_dot_product_cudnn_attention" ||
      op == "_scaled_dot_product_flash_attention_for_cpu") {
    return Attention(s, 0, true, false);
  }
  if (op == "_flash_attention_forward" || op == "_efficient_attention_forward") return Attention(s, 0, false, false);
  if (op == "_scaled_dot_product_flash_attention_backward" ||
      op == "_scaled_dot_product_efficient_attention_backward" ||
      op == "_scaled_dot_product_cudnn_attention_backward" ||
      op == "_scaled_dot_product_flash_attention_for_cpu_backward") {
    return Attention(s, 1, true, true);
  }
  if (op == "_flash_attention_backward" || op == "_efficient_attention_backward") return Attention(s, 1, false, true);
  if (op == "layer_norm" || op == "native_layer_norm") return Norm(s, 5, 2, 3);
  if (op == "rms_norm") return Norm(s, 3, 2, SIZE_MAX);
  if (op == "softmax" || op == "_softmax" || op == "log_softmax" || op == "_log_softmax") return PerElement(s, 5);
  if (std::find(kElementWise.begin(), kElementWise.end(), op) != kElementWise.end()) return PerElement(s, 1);
  return {};
}

// ---- the rank's table

struct Occurrence {
  uint32_t event;
  OpCost cost;
};

bool IsKernelLink(const Trace& trace, const Link& link) {
  return link.kind == LinkKind::kCorrelation && trace.events().kind[link.to] == EventKind::kKernel;
}

// Device time of each costed op: the kernels launched from inside it (any depth).
std::unordered_map<uint32_t, int64_t> DeviceTimes(const Trace& trace, const HostOpTree& tree,
                                                  const std::vector<bool>& costed, size_t costed_count) {
  std::unordered_map<uint32_t, int64_t> times;
  times.reserve(costed_count);
  const EventTable& events = trace.events();
  for (const Link& link : trace.links()) {
    if (!IsKernelLink(trace, link)) continue;
    const int64_t dur = std::max<int64_t>(events.dur_ns[link.to], 0);
    for (uint32_t e = link.from; e != kNoIndex && e < tree.parent.size(); e = tree.parent[e]) {
      if (costed[e]) times[e] += dur;
    }
  }
  return times;
}

bool Outermost(uint32_t event, const HostOpTree& tree, const std::vector<bool>& costed) {
  for (uint32_t e = tree.parent[event]; e != kNoIndex; e = tree.parent[e]) {
    if (costed[e]) return false;
  }
  return true;
}

int64_t DevicesWithKernels(const Trace& trace) {
  std::vector<uint32_t> devices;
  const EventTable& events = trace.events();
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (events.kind[i] != EventKind::kKernel) continue;
    const uint32_t device = trace.processes()[trace.tracks()[events.track[i]].process].device;
    if (std::find(devices.begin(), devices.end(), device) == devices.end()) devices.push_back(device);
  }
  return std::max<int64_t>(1, static_cast<int64_t>(devices.size()));
}

// Step windows by start, for a binary search per op (steps do not overlap; ProfilerStep ranges follow
// one another).
std::vector<std::pair<int64_t, int64_t>> StepWindows(const Trace& trace) {
  std::vector<std::pair<int64_t, int64_t>> windows;
  for (const Step& step : trace.steps()) windows.emplace_back(step.start_ns, step.end_ns);
  std::sort(windows.begin(), windows.end());
  return windows;
}

bool InSteps(const std::vector<std::pair<int64_t, int64_t>>& windows, int64_t ts) {
  auto it = std::upper_bound(windows.begin(), windows.end(), std::make_pair(ts, std::numeric_limits<int64_t>::max()));
  return it != windows.begin() && ts < std::prev(it)->second;
}

void FillMfu(const Trace& trace, const HardwareProfile* profile, const std::vector<Occurrence>& counted,
             RankOpFlops* out) {
  std::unordered_map<std::string_view, double> by_dtype;
  const auto windows = StepWindows(trace);
  for (const Occurrence& o : counted) {
    by_dtype[o.cost.dtype] += o.cost.flops;
    if (windows.empty() || InSteps(windows, trace.events().ts_ns[o.event])) out->step_flops += o.cost.flops;
  }
  double best = -1;
  for (const auto& [dtype, flops] : by_dtype) {
    if (flops > best || (flops == best && std::string(dtype) < out->dtype)) {
      best = flops;
      out->dtype = std::string(dtype);
    }
  }
  for (const Step& step : trace.steps()) out->step_ns += step.end_ns - step.start_ns;
  if (trace.steps().empty() && trace.start_ns() != kNoId) out->step_ns = trace.end_ns() - trace.start_ns();
  if (out->step_ns > 0 && out->flops > 0) {
    out->achieved_flops_per_s = out->step_flops / (static_cast<double>(out->step_ns) * 1e-9);
  }
  out->devices = DevicesWithKernels(trace);
  if (profile) {
    const auto peak = PeakFlopsPerSecond(*profile, out->dtype);
    if (peak) out->peak_flops_per_s = *peak * static_cast<double>(out->devices);
  }
  if (out->achieved_flops_per_s && out->peak_flops_per_s && *out->peak_flops_per_s > 0) {
    out->mfu = *out->achieved_flops_per_s / *out->peak_flops_per_s;
  }
}

}  // namespace

OpCost EstimateOpCost(std::string_view op_name, const OpShapes& shapes) {
  constexpr std::string_view kAten = "aten::";
  if (!op_name.starts_with(kAten)) return {};
  return ByName(op_name.substr(kAten.size()), shapes);
}

std::optional<double> OpFlopsRow::FlopsPerSecond() const {
  if (time_ns <= 0 || flops <= 0) return std::nullopt;
  return flops / (static_cast<double>(time_ns) * 1e-9);
}

std::optional<double> OpFlopsRow::Intensity() const {
  if (!bytes_known || bytes <= 0) return std::nullopt;
  return flops / bytes;
}

std::optional<double> PeakFlopsPerSecond(const HardwareProfile& profile, std::string_view dtype) {
  const SourcedValue* peak = &profile.peak_fp16_tflops;
  if (dtype == "c10::BFloat16")
    peak = &profile.peak_bf16_tflops;
  else if (dtype == "float")
    peak = &profile.peak_fp32_tflops;
  else if (dtype == "signed char" || dtype == "unsigned char")
    peak = &profile.peak_int8_tops;
  else if (dtype != "c10::Half")
    return std::nullopt;  // double, complex, fp8: no dense peak in the profiles
  if (!peak->value || *peak->value <= 0) return std::nullopt;
  return *peak->value * 1e12;
}

RooflinePoint RooflineOf(const OpFlopsRow& row, const HardwareProfile* profile) {
  RooflinePoint point;
  if (!profile || !profile->memory_gb_per_s.value || *profile->memory_gb_per_s.value <= 0) return point;
  const auto peak = PeakFlopsPerSecond(*profile, row.dtype);
  if (!peak) return point;
  const double bandwidth = *profile->memory_gb_per_s.value * 1e9;
  point.ridge = *peak / bandwidth;
  if (const auto intensity = row.Intensity()) {
    point.compute_bound = *intensity >= *point.ridge;
    point.roof_time_ns = std::max(row.flops / *peak, row.bytes / bandwidth) * 1e9;
  }
  return point;
}

namespace {

// An operator's arguments repeat on every step: each distinct (name, dims, types, concrete inputs) is
// parsed and costed once per trace. The costs' dtype views point into the trace's strings, which outlive
// the cache.
class OpCostCache {
 public:
  explicit OpCostCache(const Trace& trace) : trace_(trace) {}
  // The cost of `info`'s operator; flops < 0 when its shapes do not parse or fit no formula.
  OpCost Of(const OpShapeInfo& info) {
    const StringId name = trace_.events().name[info.event];
    const Key key{name.value, info.input_dims.value, info.input_types.value, info.concrete_inputs.value};
    auto [it, added] = costs_.try_emplace(key);
    if (added && ParseOpShapes(trace_.str(info.input_dims), trace_.str(info.input_types),
                               trace_.str(info.concrete_inputs), &shapes_)) {
      it->second = EstimateOpCost(trace_.str(name), shapes_);
    }
    return it->second;
  }

 private:
  using Key = std::array<uint32_t, 4>;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = 0;
      for (uint32_t part : k) h = (h ^ part) * 0x9E3779B97F4A7C15ull;
      return static_cast<size_t>(h ^ (h >> 32));
    }
  };
  const Trace& trace_;
  OpShapes shapes_;
  std::unordered_map<Key, OpCost, KeyHash> costs_;
};

}  // namespace

RankOpFlops ComputeOpFlops(const Trace& trace, const HardwareProfile* profile, const HostOpTree* given_tree) {
  if (trace.op_shapes().empty() && !trace.kernel_details().rows.empty()) return ComputeNpuOpFlops(trace, profile);
  RankOpFlops out;
  if (trace.op_shapes().empty()) return out;
  out.shapes = true;
  out.ops_with_shapes = trace.op_shapes().size();
  std::vector<Occurrence> occurrences;
  std::vector<bool> costed(trace.events().size(), false);  // by event: a bit, for the launches' parent chains
  OpCostCache costs(trace);
  for (const OpShapeInfo& info : trace.op_shapes()) {
    const OpCost cost = costs.Of(info);
    if (cost.flops < 0) continue;
    costed[info.event] = true;
    occurrences.push_back(Occurrence{info.event, cost});
  }
  out.ops_costed = occurrences.size();
  if (occurrences.empty()) return out;
  HostOpTree built;
  const HostOpTree& tree = given_tree != nullptr ? *given_tree : (built = BuildHostOpTree(trace));
  const auto device_times = DeviceTimes(trace, tree, costed, occurrences.size());
  const bool device = std::any_of(trace.links().begin(), trace.links().end(),
                                  [&](const Link& link) { return IsKernelLink(trace, link); });
  std::unordered_map<uint32_t, size_t> rows;  // name id -> index into out.ops
  std::vector<Occurrence> counted;
  for (const Occurrence& o : occurrences) {
    const StringId name = trace.events().name[o.event];
    auto [it, added] = rows.emplace(name.value, out.ops.size());
    if (added) {
      out.ops.emplace_back();
      out.ops.back().name = std::string(trace.str(name));
      out.ops.back().dtype = std::string(o.cost.dtype);
      out.ops.back().device_time = device;
    }
    OpFlopsRow& row = out.ops[it->second];
    ++row.count;
    row.flops += o.cost.flops;
    if (o.cost.bytes >= 0)
      row.bytes += o.cost.bytes;
    else
      row.bytes_known = false;
    if (device) {
      auto t = device_times.find(o.event);
      row.time_ns += t == device_times.end() ? 0 : t->second;
    } else {
      row.time_ns += std::max<int64_t>(trace.events().dur_ns[o.event], 0);
    }
    if (Outermost(o.event, tree, costed)) {
      ++row.outermost;
      out.flops += o.cost.flops;
      counted.push_back(o);
    }
  }
  std::sort(out.ops.begin(), out.ops.end(), [](const OpFlopsRow& a, const OpFlopsRow& b) {
    return a.flops != b.flops ? a.flops > b.flops : a.name < b.name;
  });
  for (OpFlopsRow& row : out.ops) row.roof = RooflineOf(row, profile);
  FillMfu(trace, profile, counted, &out);
  return out;
}

void RetimeOpFlops(int64_t step_ns, RankOpFlops* flops) {
  if (step_ns <= 0) return;
  flops->step_ns = step_ns;
  flops->achieved_flops_per_s.reset();
  flops->mfu.reset();
  if (flops->step_flops > 0) flops->achieved_flops_per_s = flops->step_flops / (static_cast<double>(step_ns) * 1e-9);
  if (flops->achieved_flops_per_s && flops->peak_flops_per_s && *flops->peak_flops_per_s > 0) {
    flops->mfu = *flops->achieved_flops_per_s / *flops->peak_flops_per_s;
  }
}

}  // namespace tuneprof

#include "analysis/compute/moe_balance.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <optional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/compute/moe_hccl_all_to_all.h"
#include "analysis/core/name_test_memo.h"
#include "analysis/core/op_shapes.h"
#include "base/ascii_case.h"
#include "base/rank_ranges.h"

namespace tuneprof {
namespace {

using Shape = std::vector<int64_t>;

bool Plausible(int64_t dim) { return dim >= 0 && dim <= kMoeMaxDim; }

// Sums of many calls' tokens and times: a hostile input of enough calls saturates rather than overflows.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

// Operator names of the grouped-GEMM and fused-MoE families (lower case). The shapes decide the rest: a
// name alone never makes a call.
bool GroupedGemmName(std::string_view name) {
  constexpr std::string_view kWords[] = {"grouped_mm",     "grouped_gemm",  "groupedgemm",
                                         "grouped_matmul", "groupedmatmul", "::gmm",
                                         "fused_moe",      "fused_experts", "moe_gemm"};
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](std::string_view word) { return ContainsNoCase(name, word); });
}

// What one grouped-GEMM call ran.
struct Call {
  int64_t tokens = 0;
  int64_t experts = 0;
  std::vector<int64_t> expert_tokens;  // empty when the shapes do not give them
};

// x [tokens, hidden] before a weight [experts, a, b] with hidden one of a, b.
std::optional<Call> FromStackedWeight(const std::vector<Shape>& shapes) {
  for (size_t w = 0; w < shapes.size(); ++w) {
    const Shape& weight = shapes[w];
    if (weight.size() != 3 || weight[0] <= 0) continue;
    if (!std::all_of(weight.begin(), weight.end(), Plausible)) return std::nullopt;
    for (size_t i = w; i-- > 0;) {
      const Shape& x = shapes[i];
      if (x.size() == 2 && Plausible(x[0]) && (x[1] == weight[1] || x[1] == weight[2])) {
        return Call{x[0], weight[0], {}};
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// The tensor-list form: x_0..x_{k-1} [t_i, hidden], then w_0..w_{k-1} [hidden, out].
std::optional<Call> FromTensorLists(const std::vector<Shape>& shapes) {
  if (shapes.empty() || shapes[0].size() != 2) return std::nullopt;
  const int64_t hidden = shapes[0][1];
  for (size_t k = shapes.size() / 2; k >= 2; --k) {  // one x and one weight is a plain matmul
    bool fits = true;
    for (size_t i = 0; i < k && fits; ++i) {
      fits = shapes[i].size() == 2 && shapes[i][1] == hidden && Plausible(shapes[i][0]) && shapes[k + i].size() == 2 &&
             shapes[k + i][0] == hidden;
    }
    if (!fits) continue;
    Call call;
    call.experts = static_cast<int64_t>(k);
    for (size_t i = 0; i < k; ++i) {
      call.expert_tokens.push_back(shapes[i][0]);
      call.tokens = SaturatingAdd(call.tokens, shapes[i][0]);
    }
    return call;
  }
  return std::nullopt;
}

// An integer list of one entry per expert: group sizes summing to the tokens, or their running sum
// ending at them.
std::vector<int64_t> GroupSizes(const std::vector<int64_t>& list, const Call& call) {
  if (static_cast<int64_t>(list.size()) != call.experts || list.empty()) return {};
  if (!std::all_of(list.begin(), list.end(), Plausible)) return {};
  if (std::accumulate(list.begin(), list.end(), int64_t{0}, SaturatingAdd) == call.tokens) return list;
  if (!std::is_sorted(list.begin(), list.end()) || list.back() != call.tokens) return {};
  std::vector<int64_t> sizes(list.size());
  std::adjacent_difference(list.begin(), list.end(), sizes.begin());
  return sizes;
}

std::optional<Call> FromRecordShapes(const OpShapes& shapes) {
  std::optional<Call> call = FromStackedWeight(shapes.dims);
  // record_shapes writes a tensor-list input as one nested entry, never as separate tensors: two 2-D
  // inputs there are a plain matmul or a weight-gradient grouped matmul ([out, tokens] x [tokens, in]),
  // whose leading dimension is no token count.
  if (!call) return std::nullopt;
  for (std::string_view concrete : shapes.concrete) {
    std::vector<int64_t> sizes = GroupSizes(IntsIn(concrete), *call);
    if (!sizes.empty()) {
      call->expert_tokens = std::move(sizes);
      break;
    }
  }
  return call;
}

// "32,4096;8,4096,1024;8" -> shapes; an empty tensor entry gives an empty shape.
std::vector<Shape> ParseNpuShapes(std::string_view text) {
  std::vector<Shape> shapes;
  while (true) {
    const size_t end = text.find(';');
    std::string_view tensor = text.substr(0, end);
    Shape shape;
    while (!tensor.empty()) {
      const size_t comma = tensor.find(',');
      std::string_view dim = tensor.substr(0, comma);
      while (!dim.empty() && (dim.front() == ' ' || dim.front() == '"')) dim.remove_prefix(1);
      while (!dim.empty() && (dim.back() == ' ' || dim.back() == '"')) dim.remove_suffix(1);
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
      if (ec != std::errc() || ptr != dim.data() + dim.size()) {
        shape.clear();
        break;
      }
      shape.push_back(value);
      if (comma == std::string_view::npos) break;
      tensor.remove_prefix(comma + 1);
    }
    shapes.push_back(std::move(shape));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return shapes;
}

void Add(const Call& call, int64_t device_ns, RankMoeLoad* load) {
  ++load->calls;
  load->tokens = SaturatingAdd(load->tokens, call.tokens);
  load->device_ns = SaturatingAdd(load->device_ns, device_ns);
  load->experts = std::max(load->experts, call.experts);
  if (load->call_ns.size() < kMoeMaxCalls) load->call_ns.push_back(device_ns);
  if (call.expert_tokens.empty()) return;
  ++load->expert_calls;
  if (load->expert_tokens.size() < call.expert_tokens.size()) load->expert_tokens.resize(call.expert_tokens.size());
  for (size_t e = 0; e < call.expert_tokens.size(); ++e) {
    load->expert_tokens[e] = SaturatingAdd(load->expert_tokens[e], call.expert_tokens[e]);
  }
}

using Windows = std::vector<std::pair<int64_t, int64_t>>;

Windows StepWindows(const Trace& trace) {
  Windows windows;
  for (const Step& step : trace.steps()) windows.emplace_back(step.start_ns, step.end_ns);
  std::sort(windows.begin(), windows.end());
  return windows;
}

// Inside a step, or anywhere when the trace marks none.
bool InSteps(const Windows& windows, int64_t ts) {
  if (windows.empty()) return true;
  auto it = std::upper_bound(windows.begin(), windows.end(), std::make_pair(ts, INT64_MAX));
  return it != windows.begin() && ts < std::prev(it)->second;
}

bool MeasureKernelDetails(const Trace& trace, RankMoeLoad* load) {
  const KernelDetailTable& table = trace.kernel_details();
  const Windows windows = StepWindows(trace);
  std::set<int64_t> steps;
  // Each name classified once however many rows carry it: a kernel_details table of millions of rows
  // has a few hundred distinct names.
  NameTestMemo grouped_gemm(trace, GroupedGemmName);
  for (const NpuOpRow& row : table.rows) {
    if (!grouped_gemm(row.type) && !grouped_gemm(row.name)) continue;
    if (row.step == kNoId && !InSteps(windows, row.start_ns)) continue;
    const std::vector<Shape> shapes = ParseNpuShapes(trace.str(row.input_shapes));
    std::optional<Call> call = FromStackedWeight(shapes);
    if (!call) call = FromTensorLists(shapes);
    if (!call) continue;
    Add(*call, std::max<int64_t>(row.dur_ns, 0), load);
    if (row.step != kNoId) steps.insert(row.step);
  }
  if (load->calls == 0) return false;
  load->source = "kernel_details";
  load->steps = std::max<uint64_t>(1, steps.empty() ? trace.steps().size() : steps.size());
  return true;
}

void MeasureRecordShapes(const Trace& trace, const HostOpTree& tree, RankMoeLoad* load) {
  const EventTable& events = trace.events();
  const Windows windows = StepWindows(trace);
  std::unordered_map<uint32_t, Call> calls;  // by host event
  std::vector<uint32_t> order;
  OpShapes shapes;
  NameTestMemo grouped_gemm(trace, GroupedGemmName);
  for (const OpShapeInfo& info : trace.op_shapes()) {
    const uint32_t e = info.event;
    if (events.kind[e] != EventKind::kHostOp || !grouped_gemm(events.name[e])) continue;
    if (!InSteps(windows, events.ts_ns[e])) continue;
    if (!ParseOpShapes(trace.str(info.input_dims), trace.str(info.input_types), trace.str(info.concrete_inputs),
                       &shapes)) {
      continue;
    }
    std::optional<Call> call = FromRecordShapes(shapes);
    if (!call) continue;
    calls.emplace(e, std::move(*call));
    order.push_back(e);
  }
  if (order.empty()) return;
  // The outermost call of nested ones (a custom op over aten::_grouped_mm) counts once.
  const auto enclosing = [&](uint32_t e) {
    uint32_t found = kNoIndex;
    for (uint32_t p = e; p != kNoIndex && p < tree.parent.size(); p = tree.parent[p]) {
      if (calls.count(p)) found = p;
    }
    return found;
  };
  std::unordered_map<uint32_t, int64_t> device_ns;
  bool kernels = false;
  for (const Link& link : trace.links()) {
    if (link.kind != LinkKind::kCorrelation || events.kind[link.to] != EventKind::kKernel) continue;
    kernels = true;
    const uint32_t owner = enclosing(link.from);
    if (owner != kNoIndex) device_ns[owner] += std::max<int64_t>(events.dur_ns[link.to], 0);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return events.ts_ns[a] < events.ts_ns[b]; });
  for (uint32_t e : order) {
    if (enclosing(e) != e) continue;
    const auto time = device_ns.find(e);
    const int64_t ns = kernels ? (time == device_ns.end() ? 0 : time->second) : std::max<int64_t>(events.dur_ns[e], 0);
    Add(calls[e], ns, load);
  }
  load->source = "record_shapes";
  load->steps = std::max<uint64_t>(1, trace.steps().size());
}

// Σ of an all-to-all's split sizes ("[512, 480, 530]", rows per peer); nullopt when absent or unreadable.
std::optional<int64_t> SplitRows(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::vector<int64_t> rows = ParseRankList(text, "[]");  // a list of counts, as a rank list is written
  if (rows.empty()) return std::nullopt;
  int64_t sum = 0;
  for (int64_t r : rows) sum = SaturatingAdd(sum, r);
  return Plausible(sum) ? std::optional<int64_t>(sum) : std::nullopt;
}

// One all-to-all with split sizes: when it ran and the rows it sent and received.
struct SplitCall {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  StringId in_splits, out_splits;
  int64_t received = 0;
};

// The all-to-alls that write split sizes, in start order: the device kernels where the trace has them
// (the host's record_param_comms carries the same args), else the host events.
std::vector<SplitCall> ListSplitCalls(const Trace& trace, const Windows& windows) {
  const EventTable& events = trace.events();
  std::vector<SplitCall> device, host;
  for (const CollectiveInfo& c : trace.collectives()) {
    if (c.in_splits.value == 0 || c.out_splits.value == 0) continue;
    const std::optional<int64_t> received = SplitRows(trace.str(c.out_splits));
    if (!received || !SplitRows(trace.str(c.in_splits)) || !InSteps(windows, events.ts_ns[c.event])) continue;
    SplitCall call{events.ts_ns[c.event], events.end_ns(c.event), c.in_splits, c.out_splits, *received};
    (IsDeviceKind(events.kind[c.event]) ? device : host).push_back(call);
  }
  std::vector<SplitCall>& calls = device.empty() ? host : device;
  std::sort(calls.begin(), calls.end(), [](const SplitCall& a, const SplitCall& b) { return a.start_ns < b.start_ns; });
  return std::move(calls);
}

// Tokens per EP rank from the all-to-alls' split sizes, where no grouped GEMM gives them. An all-to-all
// whose splits are those of an earlier unanswered one reversed (in = its out, out = its in) brings the
// tokens back (combine, or the backward of a dispatch); any other sends them out to the experts (dispatch,
// or the backward of a combine), and the rows it receives are the tokens this rank's experts run. The
// experts' time of such a call is the gap until the answering all-to-all starts (the rank runs its
// experts in between); 0 when none answers. Pairs match latest first, as layers nest in the backward.
bool MeasureAllToAllSplits(const Trace& trace, RankMoeLoad* load) {
  const std::vector<SplitCall> calls = ListSplitCalls(trace, StepWindows(trace));
  std::vector<std::pair<int64_t, int64_t>> outbound;                        // (tokens received, experts' ns) in order
  std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> unanswered;  // (in, out) -> outbound indices
  for (const SplitCall& c : calls) {
    auto back = unanswered.find({c.out_splits.value, c.in_splits.value});
    if (back != unanswered.end() && !back->second.empty()) {
      std::pair<int64_t, int64_t>& out = outbound[back->second.back()];
      back->second.pop_back();
      out.second = std::max<int64_t>(0, c.start_ns - out.second);  // held the outbound call's end until now
      continue;
    }
    unanswered[{c.in_splits.value, c.out_splits.value}].push_back(outbound.size());
    outbound.emplace_back(c.received, c.end_ns);
  }
  for (auto& [key, open] : unanswered) {
    for (size_t i : open) outbound[i].second = 0;  // never answered: no experts' time
  }
  for (const auto& [tokens, ns] : outbound) Add(Call{tokens, 0, {}}, ns, load);
  if (load->calls == 0) return false;
  load->source = "all_to_all_splits";
  load->steps = std::max<uint64_t>(1, trace.steps().size());
  return true;
}

// Tokens per EP rank from torch_npu's communication summaries (moe_hccl_all_to_all.h), the last resort.
bool MeasureHcclAllToAll(const Trace& trace, RankMoeLoad* load) {
  std::set<uint32_t> steps;
  for (const MoeExpertRows& layer : MoeRowsFromHcclAllToAll(trace)) {
    Add(Call{layer.tokens, 0, {}}, layer.experts_ns, load);
    steps.insert(layer.step);
  }
  if (load->calls == 0) return false;
  load->source = "communication_matrix";
  load->steps = std::max<uint64_t>(1, steps.size());
  return true;
}

std::pair<size_t, double> MaxAndMean(const std::vector<double>& values) {
  const auto max = std::max_element(values.begin(), values.end());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  return {static_cast<size_t>(max - values.begin()), mean};
}

}  // namespace

RankMoeLoad MeasureMoeLoad(const Trace& trace, const HostOpTree& tree) {
  RankMoeLoad load;
  load.rank = trace.metadata().rank;
  if (!MeasureKernelDetails(trace, &load)) MeasureRecordShapes(trace, tree, &load);
  if (!load.found()) MeasureAllToAllSplits(trace, &load);
  if (!load.found()) MeasureHcclAllToAll(trace, &load);
  return load;
}

RankMoeLoad MeasureMoeLoad(const Trace& trace) {
  const EventTable& events = trace.events();
  NameTestMemo grouped_gemm(trace, GroupedGemmName);
  const bool candidate = std::any_of(trace.op_shapes().begin(), trace.op_shapes().end(), [&](const OpShapeInfo& info) {
    return events.kind[info.event] == EventKind::kHostOp && grouped_gemm(events.name[info.event]);
  });
  return MeasureMoeLoad(trace, candidate ? BuildHostOpTree(trace) : HostOpTree{});
}

MoeBalance BalanceAcrossRanks(const std::vector<const RankMoeLoad*>& loads) {
  MoeBalance out;
  std::vector<const RankMoeLoad*> ep;
  for (const RankMoeLoad* load : loads) {
    if (load != nullptr && load->found()) ep.push_back(load);
  }
  if (ep.empty()) return out;
  out.steps = ep.front()->steps;
  out.source = ep.front()->source;
  out.matched_calls = ep.front()->call_ns.size();
  for (const RankMoeLoad* load : ep) {
    const auto steps = static_cast<double>(std::max<uint64_t>(load->steps, 1));  // 0 only from a damaged summary
    out.ranks.push_back(load->rank);
    out.tokens_per_step.push_back(static_cast<double>(load->tokens) / steps);
    out.device_ns_per_step.push_back(static_cast<double>(load->device_ns) / steps);
    for (int64_t tokens : load->expert_tokens)
      out.expert_tokens_per_step.push_back(static_cast<double>(tokens) / steps);
    out.steps = std::max<uint64_t>(1, std::min(out.steps, load->steps));
    out.matched_calls = std::min<uint64_t>(out.matched_calls, load->call_ns.size());
  }
  const auto [max_rank, mean_tokens] = MaxAndMean(out.tokens_per_step);
  out.max_rank = out.ranks[max_rank];
  out.max_rank_tokens = out.tokens_per_step[max_rank];
  out.mean_rank_tokens = mean_tokens;
  out.rank_imbalance = mean_tokens > 0 ? out.max_rank_tokens / mean_tokens : 1;
  if (!out.expert_tokens_per_step.empty()) {
    const auto [max_expert, mean_expert] = MaxAndMean(out.expert_tokens_per_step);
    out.max_expert = static_cast<int64_t>(max_expert);
    out.max_expert_tokens = out.expert_tokens_per_step[max_expert];
    out.mean_expert_tokens = mean_expert;
    out.expert_imbalance = mean_expert > 0 ? out.max_expert_tokens / mean_expert : 1;
  }
  const auto [slowest, mean_ns] = MaxAndMean(out.device_ns_per_step);
  out.slowest_rank = out.ranks[slowest];
  out.slowest_excess_ns = out.device_ns_per_step[slowest] - mean_ns;
  if (ep.size() < 2) return out;
  const auto n = static_cast<double>(ep.size());
  double cost = 0, wait = 0;
  std::vector<double> own_wait(ep.size(), 0.0);
  for (size_t k = 0; k < out.matched_calls; ++k) {
    int64_t max = 0;
    double sum = 0;
    for (const RankMoeLoad* load : ep) {
      max = std::max(max, load->call_ns[k]);
      sum += static_cast<double>(load->call_ns[k]);
    }
    cost += static_cast<double>(max) - sum / n;
    wait += (n * static_cast<double>(max) - sum) / (n - 1);
    for (size_t r = 0; r < ep.size(); ++r) own_wait[r] += static_cast<double>(max - ep[r]->call_ns[k]);
  }
  // The compared calls stand for every call of a step: scaled by the calls a step holds (the same as
  // dividing by the steps when every call was kept).
  if (out.matched_calls == 0) return out;
  uint64_t fewest_calls = ep.front()->calls;
  for (const RankMoeLoad* load : ep) fewest_calls = std::min(fewest_calls, load->calls);
  const double per_step =
      static_cast<double>(fewest_calls) / static_cast<double>(out.steps) / static_cast<double>(out.matched_calls);
  out.cost_ns = cost * per_step;
  out.others_wait_ns = wait * per_step;
  for (double& w : own_wait) w *= per_step;
  out.wait_ns_per_step = std::move(own_wait);
  return out;
}

bool MoeCallsAreGroupedGemms(std::string_view source) {
  return source == "record_shapes" || source == "kernel_details";
}

std::string_view MoeExpertWorkWords(std::string_view source) {
  return MoeCallsAreGroupedGemms(source) ? "grouped GEMMs" : "experts (the compute between dispatch and combine)";
}

}  // namespace tuneprof

// fusion.graph_fusion: subgraphs of GE's compiled graph (the graph dumps beside an Ascend rank,
// model/trace.h GeGraphTable) that a GE graph-fusion pass would have made one operator and that stayed
// apart: msprof-analyze's Graph Fusion check, with the time the unfused ops took from kernel_details.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// What a step of a pattern checks besides the op's type.
enum class Check : uint8_t {
  kNone,
  kSwish,  // the Mul's other input is the Sigmoid's own input: x * sigmoid(x)
  kBias,   // the Add's other input is a bias: every dimension but the last is 1 (shapes written)
};

// One pattern: ops of the types of `chain` (steps separated by " > ", alternatives by '|'), each consuming
// the one before; the fused operator GE makes of them, and what enables it.
struct GraphFusionPattern {
  std::string_view name;
  std::string_view chain;
  Check last_check = Check::kNone;  // applies to the last step
  std::string_view fused;
  std::string_view enable;
};

// clang-format off
// Sources: the CANN "Graph Fusion and UB Fusion Patterns" reference (hiascend.com, graphubfusionref) for
// MatMulBiasAddFusionPass, ConvBatchnormFusionPass, LayerNormFusionPass, BatchMatMulTransposeFusionPass and
// CastRemoveFusionPass (listed among GE's graph-fusion passes in the ATC fusion pattern list);
// msprof-analyze's advisor rules (op_fusion_pass.yaml) for FlashAttentionFusionPass and the
// ConfusionTransposeD passes. Swish, Softmax, Gelu and TransData chains are tuneprof's own: the operators
// exist in CANN's operator list (Swish, SoftmaxV2, Gelu / FastGelu, TransData), no pass name confirmed.
constexpr std::array kGraphFusionPatterns = std::to_array<GraphFusionPattern>({
    // MatMulBiasAddFusionPass: MatMul* + BiasAdd/Add (bias on the last dimension) -> MatMul* with bias.
    {"matmul_bias", "MatMul|MatMulV2|MatMulV3|BatchMatMul|BatchMatMulV2|BatchMatMulV3 > Add|BiasAdd", Check::kBias,
     "MatMulV2 / BatchMatMulV2 with its bias input",
     "MatMulBiasAddFusionPass (keep it on in the fusion_switch_file); torch: F.linear(x, w, b), "
     "torch_npu.npu_linear"},
    // ConvBatchnormFusionPass: Conv2D/Conv3D + BatchNorm/BNInference -> one convolution (inference).
    {"conv_bn", "Conv2D|Conv3D|DepthwiseConv2D > BatchNorm|BNInference|BNInferenceD", Check::kNone,
     "Conv2D with the batch norm folded into its weights and bias",
     "ConvBatchnormFusionPass (keep it on in the fusion_switch_file); export in eval mode with constant "
     "BN statistics"},
    // msprof-analyze FlashAttentionFusionPass: BatchMatMul + Mul + Softmax + BatchMatMul.
    {"flash_attention",
     "BatchMatMulV2|BatchMatMul|MatMul|MatMulV2 > Mul > Softmax|SoftmaxV2 > BatchMatMulV2|BatchMatMul|MatMul|MatMulV2",
     Check::kNone, "FlashAttentionScore",
     "FlashAttentionFusionPass; torch_npu.npu_fusion_attention (or "
     "torch.nn.functional.scaled_dot_product_attention)"},
    // LayerNormFusionPass: ReduceMean, Sub / SquaredDifference, ReduceMean, Add, Rsqrt, Mul -> LayerNorm.
    {"layer_norm", "ReduceMean > Sub > Square|Pow|Mul > ReduceMean > Add|Adds > Rsqrt|Sqrt > Mul|RealDiv|Div",
     Check::kNone, "LayerNorm", "LayerNormFusionPass; torch.nn.LayerNorm instead of the written-out formula"},
    {"layer_norm", "ReduceMean > SquaredDifference > Add|Adds > Rsqrt|Sqrt > Mul|RealDiv|Div", Check::kNone,
     "LayerNorm", "LayerNormFusionPass; torch.nn.LayerNorm instead of the written-out formula"},
    // Softmax written out: exp(x - max) / sum.
    {"softmax", "ReduceMax|ReduceMaxD > Sub > Exp > ReduceSum|ReduceSumD > RealDiv|Div", Check::kNone, "SoftmaxV2",
     "torch.softmax / torch_npu.npu_scaled_masked_softmax instead of the written-out formula"},
    // Gelu written out, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    {"gelu", "Pow > Mul > Add > Mul > Tanh > Add|Adds > Mul", Check::kNone, "FastGelu / Gelu",
     "torch.nn.functional.gelu / torch_npu.fast_gelu instead of the written-out formula"},
    // Gelu written out, erf form: x * 0.5 * (1 + erf(x / sqrt 2)).
    {"gelu", "RealDiv|Div|Mul|Muls > Erf > Add|Adds > Mul|Muls", Check::kNone, "Gelu",
     "torch.nn.functional.gelu instead of the written-out formula"},
    // Swish / SiLU written out: x * sigmoid(x).
    {"swish", "Sigmoid > Mul", Check::kSwish, "Swish", "torch.nn.functional.silu / torch_npu.npu_silu"},
    // BatchMatMulTransposeFusionPass and the ConfusionTransposeD passes: a transpose and a reshape fused.
    {"confusion_transpose", "Transpose|TransposeD > Reshape", Check::kNone, "ConfusionTransposeD",
     "torch_npu.npu_confusion_transpose"},
    {"confusion_transpose", "Reshape > Transpose|TransposeD", Check::kNone, "ConfusionTransposeD",
     "torch_npu.npu_confusion_transpose"},
    // CastRemoveFusionPass: one cast feeding another is one cast (or none).
    {"cast_chain", "Cast > Cast", Check::kNone, "one Cast (or none)",
     "CastRemoveFusionPass; cast once to the dtype the consumer needs (or keep the model in one dtype)"},
    // Two format conversions in a row: one (or none) would do.
    {"transdata_chain", "TransData > TransData", Check::kNone, "one TransData (or none)",
     "keep one storage format between the operators (torch_npu.npu_format_cast once, or "
     "torch.npu.config.allow_internal_format = False)"},
});
// clang-format on

std::vector<std::string_view> Split(std::string_view text, std::string_view separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + separator.size());
  }
}

bool TypeIn(std::string_view type, const std::vector<std::string_view>& alternatives) {
  return std::find(alternatives.begin(), alternatives.end(), type) != alternatives.end();
}

// The graph's consumers of each op, in op order (compressed rows: consumers[first[i] .. first[i + 1])).
struct Consumers {
  std::vector<uint32_t> first;
  std::vector<uint32_t> consumers;
};

Consumers ConsumersOf(const std::vector<GeGraphOp>& ops) {
  Consumers c;
  c.first.assign(ops.size() + 1, 0);
  for (const GeGraphOp& op : ops) {
    for (uint32_t input : op.inputs) ++c.first[input + 1];
  }
  for (size_t i = 1; i < c.first.size(); ++i) c.first[i] += c.first[i - 1];
  c.consumers.resize(c.first.back());
  std::vector<uint32_t> next(c.first.begin(), c.first.end() - 1);
  for (uint32_t i = 0; i < ops.size(); ++i) {
    for (uint32_t input : ops[i].inputs) c.consumers[next[input]++] = i;
  }
  return c;
}

// Whether the output shape "1,1,768" (the first output of "a;b") is a bias: known, and every dimension
// but the last is 1.
bool IsBiasShape(std::string_view shapes) {
  const std::string_view first = shapes.substr(0, shapes.find(';'));
  if (first.empty()) return false;
  const std::vector<std::string_view> dims = Split(first, ",");
  return std::all_of(dims.begin(), dims.end() - 1, [](std::string_view d) { return d == "1"; });
}

bool Passes(const Trace& trace, const std::vector<GeGraphOp>& ops, uint32_t producer, uint32_t consumer, Check check) {
  const std::vector<uint32_t>& inputs = ops[consumer].inputs;
  switch (check) {
    case Check::kNone:
      return true;
    case Check::kSwish:
      return !ops[producer].inputs.empty() &&
             std::find(inputs.begin(), inputs.end(), ops[producer].inputs.front()) != inputs.end();
    case Check::kBias:
      return inputs.size() == 2 &&
             std::all_of(
                 inputs.begin(), inputs.end(),
                 [&](uint32_t in) { return in == producer || IsBiasShape(trace.str(ops[in].output_shapes)); }) &&
             inputs[0] != inputs[1];
  }
  return false;
}

struct Occurrences {
  const GraphFusionPattern* pattern = nullptr;
  std::vector<std::vector<uint32_t>> matches;  // op indices, in chain order
  int64_t time_ns = 0;                         // the matched ops' kernel_details time
  int64_t gain_ns = 0;                         // time minus the fused operators' estimate
  bool timed = false;                          // some matched op has kernel_details rows
};

// Every non-overlapping occurrence of `pattern`: from each op of the first step's types, the first
// consumer of the next step's types at each step (so the cost is the ops times their consumers per step).
Occurrences Match(const Trace& trace, const GraphFusionPattern& pattern, const Consumers& consumers,
                  std::vector<bool>* used) {
  const std::vector<GeGraphOp>& ops = trace.ge_graphs().ops;
  std::vector<std::vector<std::string_view>> steps;  // each step's types, split once
  for (std::string_view step : Split(pattern.chain, " > ")) steps.push_back(Split(step, "|"));
  Occurrences found;
  found.pattern = &pattern;
  std::vector<uint32_t> chain;
  std::unordered_set<std::string> seen;
  for (uint32_t start = 0; start < ops.size(); ++start) {
    if ((*used)[start] || !TypeIn(trace.str(ops[start].type), steps[0])) continue;
    chain.assign(1, start);
    for (size_t s = 1; s < steps.size() && chain.size() == s; ++s) {
      const uint32_t from = chain.back();
      const Check check = s + 1 == steps.size() ? pattern.last_check : Check::kNone;
      for (uint32_t k = consumers.first[from]; k < consumers.first[from + 1]; ++k) {
        const uint32_t next = consumers.consumers[k];
        if ((*used)[next] || !TypeIn(trace.str(ops[next].type), steps[s]) || !Passes(trace, ops, from, next, check)) {
          continue;
        }
        chain.push_back(next);
        break;
      }
    }
    if (chain.size() != steps.size() || std::adjacent_find(chain.begin(), chain.end()) != chain.end()) continue;
    for (uint32_t op : chain) (*used)[op] = true;
    // The same graph dumped twice (both forms, or compiled again) is one occurrence: kernel_details' time
    // by name already holds every run of those ops.
    std::string key;
    for (uint32_t op : chain) key.append(trace.str(ops[op].name)).push_back('\0');
    if (seen.insert(std::move(key)).second) found.matches.push_back(chain);
  }
  return found;
}

// kernel_details time by op name: in graph mode its Name column is the GE op's name.
std::unordered_map<std::string_view, int64_t> TimeByName(const Trace& trace) {
  std::unordered_map<std::string_view, int64_t> time;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (row.dur_ns > 0) time[trace.str(row.name)] += row.dur_ns;
  }
  return time;
}

// The time of each occurrence and the gain of fusing it: the fused operator is estimated to take as long
// as the longest op it replaces (it does that op's work; the others' pass over memory rides along on chip).
void Time(const Trace& trace, const std::unordered_map<std::string_view, int64_t>& by_name, Occurrences* o) {
  for (const std::vector<uint32_t>& match : o->matches) {
    int64_t sum = 0;
    int64_t longest = 0;
    for (uint32_t op : match) {
      auto it = by_name.find(trace.str(trace.ge_graphs().ops[op].name));
      if (it == by_name.end()) continue;
      o->timed = true;
      sum += it->second;
      longest = std::max(longest, it->second);
    }
    o->time_ns += sum;
    o->gain_ns += sum - longest;
  }
}

std::string OpNames(const Trace& trace, const Occurrences& o) {
  constexpr size_t kNamed = 3;
  std::string names;
  for (size_t m = 0; m < std::min(o.matches.size(), kNamed); ++m) {
    if (!names.empty()) names += "; ";
    for (size_t i = 0; i < o.matches[m].size(); ++i) {
      names += (i > 0 ? " > " : "") + std::string(trace.str(trace.ge_graphs().ops[o.matches[m][i]].name));
    }
  }
  if (o.matches.size() > kNamed) names += fmt::format("; and {} more", o.matches.size() - kNamed);
  return names;
}

// One line per pattern that occurs: what stayed unfused, how often, its time and the fused operator.
std::string Describe(const RankEvidence& rank, const Occurrences& o) {
  const Trace& trace = *rank.trace;
  const std::string time = o.timed ? fmt::format("{} per step, saves {}", FormatDuration(PerStep(rank, o.time_ns)),
                                                 FormatDuration(PerStep(rank, o.gain_ns)))
                                   : std::string("time unknown: no kernel_details row names these ops");
  return fmt::format("{} ({}) x{}: {}; {} -> {} ({})", o.pattern->name, o.pattern->chain, o.matches.size(),
                     OpNames(trace, o), time, o.pattern->fused, o.pattern->enable);
}

std::vector<Occurrences> FindAll(const Trace& trace) {
  const std::vector<GeGraphOp>& ops = trace.ge_graphs().ops;
  const Consumers consumers = ConsumersOf(ops);
  std::vector<bool> used(ops.size(), false);
  const auto by_name = TimeByName(trace);
  std::vector<Occurrences> all;
  for (const GraphFusionPattern& pattern : kGraphFusionPatterns) {
    Occurrences o = Match(trace, pattern, consumers, &used);
    if (o.matches.empty()) continue;
    Time(trace, by_name, &o);
    all.push_back(std::move(o));
  }
  std::stable_sort(all.begin(), all.end(), [](const Occurrences& a, const Occurrences& b) {
    return a.gain_ns != b.gain_ns ? a.gain_ns > b.gain_ns : a.matches.size() > b.matches.size();
  });
  return all;
}

}  // namespace

void RuleGraphFusion(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  if (trace.ge_graphs().ops.empty()) return;
  const std::vector<Occurrences> all = FindAll(trace);
  if (all.empty()) return;
  size_t count = 0;
  int64_t time = 0;
  int64_t gain = 0;
  bool timed = false;
  std::string patterns;
  std::string strategy = "GE left these subgraphs as separate operators where a graph-fusion pass makes one:";
  for (const Occurrences& o : all) {
    count += o.matches.size();
    time += o.time_ns;
    gain += o.gain_ns;
    timed |= o.timed;
    patterns += (patterns.empty() ? "" : " | ") + Describe(rank, o);
    strategy += fmt::format(" {} -> {} ({});", o.pattern->name, o.pattern->fused, o.pattern->enable);
  }
  Finding f = NewFinding("fusion.graph_fusion", rank, config);
  f.title = fmt::format("{} unfused subgraphs in GE's graph ({} patterns); top {} x{}", count, all.size(),
                        all.front().pattern->name, all.front().matches.size());
  f.value = static_cast<double>(count);
  f.uncapped_gain_ns = PerStep(rank, static_cast<double>(gain));
  f.gain_model = timed ? "per occurrence, the kernel_details time of its ops minus the longest of them (the fused "
                         "operator does that op's work in one pass)"
                       : "unknown: no kernel_details row names the graph's ops";
  strategy.back() = '.';
  f.strategy = strategy +
               " Check that the fusion_switch_file does not turn the pass off and that the shapes and "
               "dtypes meet its conditions, or write the fused API in the model.";
  f.AddNumber("unfused_subgraphs", static_cast<double>(count), "count");
  f.AddNumber("unfused_us_per_step", PerStep(rank, static_cast<double>(time)) / 1e3, "us");
  f.AddText("patterns", patterns);
  f.AddText("graph_dumps",
            fmt::format("{} files, {} ops", trace.ge_graphs().files.size(), trace.ge_graphs().ops.size()));
  out->push_back(std::move(f));
}

}  // namespace tuneprof

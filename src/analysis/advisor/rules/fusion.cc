// fusion.*: fusible operator sequences (fusion_patterns.h) that occur at least 5 times and take at least
// 1 % of the work time (msprof-analyze's Fusible Operator check), at the host-operator level (aten ops,
// timed by the device time they launch) and at the kernel level (each stream's kernels). One finding
// per pattern; where both levels see it, the level with the larger gain is kept (advisor.cc merges by
// id). Gain: fusion_patterns.h's per-match estimate, summed, per step. On NPU a chain of element-wise
// operators inside the step of an optimizer the API-replacement table covers (its _foreach_ kernels) is
// fusion.api_replacement's: the fused optimizer replaces it, and compiling the model does not reach
// optimizer.step, so fusion.elementwise_chain leaves it out.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <vector>

#include "analysis/advisor/api_replacements.h"
#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/fusion_patterns.h"
#include "analysis/advisor/op_sequences.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// What every fusion finding's row says alike; the gain model as fusion_patterns.h's FusionGain of its pattern.
constexpr std::string_view kFusionMetric = "occurrences and time of the operator sequence";
constexpr std::string_view kOnePassGain = "one fused pass costs the longest member: sum - max of each occurrence";
constexpr std::string_view kEpilogueGain = "the members around the matmul/conv fold into its kernel: their time";

// A fusion finding's row: what every pattern's says alike, and the pattern's own gain, strategy and APIs.
constexpr FindingSpec FusionRow(std::string_view id, std::string_view gain_model, std::string_view strategy,
                                PlatformApis apis, FindingCategory category = FindingCategory::kCompute) {
  FindingSpec row;
  row.id = id;
  row.category = category;
  row.saves_from = TimePart::kMemoryBound;
  row.metric = kFusionMetric;
  row.unit = "count";
  row.gain_model = gain_model;
  row.strategy = strategy;
  row.apis = apis;
  return row;
}

struct PatternTotals {
  uint64_t count = 0;
  int64_t time_ns = 0;
  int64_t saved_ns = 0;
  const PatternMatch* example = nullptr;
  std::vector<const PatternMatch*> matches;  // every occurrence counted, for the modules that hold them
};

// Kernel names with their template arguments run to thousands of characters: each is cut in the middle
// (the start names the kernel, the end holds the arguments that tell instances apart), and so is the
// whole chain, so one example stays one readable line; the full names are in the trace.
constexpr size_t kExampleNameChars = 160;
constexpr size_t kExampleChars = 640;

std::string MiddleCut(std::string_view text, size_t width) {
  if (text.size() <= width) return std::string(text);
  const size_t tail = width / 3, head = width - tail - 3;
  return std::string(text.substr(0, head)) + "..." + std::string(text.substr(text.size() - tail));
}

std::string ExampleNames(const Trace& trace, const OpSequence& sequence, const PatternMatch& match) {
  std::string names;
  for (size_t i = match.begin; i < match.end; ++i) {
    names += (names.empty() ? "" : " -> ") +
             MiddleCut(trace.str(trace.events().name[sequence.events[i]]), kExampleNameChars);
  }
  return MiddleCut(names, kExampleChars);
}

// On NPU, the fused API's versions (api_replacements.h) against the run's: this finding is that API's
// one finding per call site.
void SayVersions(const RankEvidence& rank, std::string_view pattern_id, Finding* f) {
  const ApiReplacement* row = PlatformOf(rank) == Platform::kNpu ? RowReportedBy(pattern_id) : nullptr;
  if (row == nullptr) return;
  bool reached = false;
  f->AddText("api_versions", VersionState(*row, ReadRunVersions(rank.trace->metadata()), &reached));
}

// The user's source line of the example occurrence, where the trace has Python frames: host-level
// matches from their first operator, kernel-level ones from the operator that launched their first kernel.
void SayCallSite(const RankEvidence& rank, const OpSequence& sequence, const PatternMatch& example, Finding* f) {
  const Trace& trace = *rank.trace;
  uint32_t op = sequence.events[example.begin];
  if (sequence.level == SequenceLevel::kKernels) {
    const auto& links = trace.links();
    const auto it = std::find_if(links.begin(), links.end(), [&](const Link& link) {
      return link.kind == LinkKind::kCorrelation && link.to == op;
    });
    if (it == links.end()) return;
    op = it->from;
  }
  CallSites sites(trace, rank.tree);
  const std::string& where = sites.Of(op);
  if (!where.empty()) f->AddText("call_site", where);
}

// The operators or kernels of every occurrence counted.
std::vector<uint32_t> MatchedEvents(const std::vector<OpSequence>& sequences, const PatternTotals& totals) {
  std::vector<uint32_t> events;
  for (const PatternMatch* match : totals.matches) {
    const OpSequence& sequence = sequences[match->sequence];
    events.insert(events.end(), sequence.events.begin() + static_cast<std::ptrdiff_t>(match->begin),
                  sequence.events.begin() + static_cast<std::ptrdiff_t>(match->end));
  }
  return events;
}

double WorkTimeNs(const RankEvidence& rank) { return rank.split.step_ns * static_cast<double>(rank.split.steps); }

void Report(const RankEvidence& rank, const AdvisorConfig& config, const std::vector<OpSequence>& sequences,
            size_t pattern, const PatternTotals& totals, std::vector<Finding>* out) {
  const bool generic = pattern == FusionLibrary().size();
  const PatternMatch& example = *totals.example;
  const OpSequence& sequence = sequences[example.sequence];
  Finding f = NewFinding(generic ? kElementwiseChainId : FusionLibrary()[pattern].id, rank, config);
  const std::string shape = generic ? "runs of 3+ element-wise operators" : std::string(FusionLibrary()[pattern].shape);
  f.title = fmt::format("{} unfused {} ({} per step)", totals.count, shape,
                        FormatDuration(PerStep(rank, static_cast<double>(totals.time_ns))));
  f.value = static_cast<double>(totals.count);
  f.uncapped_gain_ns = PerStep(rank, static_cast<double>(totals.saved_ns));
  f.AddNumber("occurrences", static_cast<double>(totals.count), "count");
  f.AddNumber("pattern_us", static_cast<double>(totals.time_ns) / 1e3, "us");
  f.AddNumber("pattern_pct_of_work", 100 * static_cast<double>(totals.time_ns) / WorkTimeNs(rank), "%");
  f.AddText("level", sequence.level == SequenceLevel::kHostOps ? "host operators" : "kernels");
  f.AddText("example", ExampleNames(*rank.trace, sequence, example));
  if (!generic) SayVersions(rank, FusionLibrary()[pattern].id, &f);
  SayCallSite(rank, sequence, example, &f);
  SayModules(rank, MatchedEvents(sequences, totals), &f);
  out->push_back(std::move(f));
}

// Kernels a CUDA graph replayed were captured from code the run already compiles or captures (graph
// capture, torch.compile): a chain among them is what that compiler left, not a missing compiler.
bool ReplayedByGraph(const RankEvidence& rank, const OpSequence& sequence, const PatternMatch& match) {
  if (!rank.compute->graphs.any() || sequence.level != SequenceLevel::kKernels) return false;
  for (size_t i = match.begin; i < match.end; ++i) {
    if (rank.compute->graphs.replayed[sequence.events[i]]) return true;
  }
  return false;
}

constexpr std::string_view kFusionOptimizerStepPrefix = "Optimizer.step#";

// Per event: inside the step of an optimizer fusion.api_replacement reports (host operators below the
// step's range, kernels launched from them). Empty off NPU or without such a step.
std::vector<bool> InsideReplacedOptimizerStep(const RankEvidence& rank) {
  const Trace& trace = *rank.trace;
  const EventTable& events = trace.events();
  std::vector<bool> inside;
  if (PlatformOf(rank) != Platform::kNpu) return inside;
  std::vector<uint32_t> steps;
  for (uint32_t e = 0; e < events.size(); ++e) {
    const std::string_view name = trace.str(events.name[e]);
    if (name.starts_with(kFusionOptimizerStepPrefix) &&
        ApiReplacementReportsOptimizer(name.substr(kFusionOptimizerStepPrefix.size())))
      steps.push_back(e);
  }
  if (steps.empty()) return inside;
  inside.assign(events.size(), false);
  // Each track's ranges are sorted parents first: a range inside a step is marked after the step itself.
  for (const uint32_t step : steps) inside[step] = true;
  for (const std::vector<uint32_t>& track : rank.tree.by_track) {
    for (const uint32_t e : track) {
      const uint32_t parent = rank.tree.parent[e];
      if (parent != kNoIndex && inside[parent]) inside[e] = true;
    }
  }
  // Device work counts for the host event that launched it (through torch_npu's task queue too).
  const std::vector<uint32_t> launchers = DeviceLaunchers(trace);
  for (uint32_t e = 0; e < launchers.size() && e < inside.size(); ++e) {
    if (launchers[e] != kNoIndex && launchers[e] < inside.size() && inside[launchers[e]]) inside[e] = true;
  }
  return inside;
}

bool ChainInReplacedOptimizerStep(const std::vector<bool>& inside, const OpSequence& sequence,
                                  const PatternMatch& match) {
  return !inside.empty() && inside[sequence.events[match.begin]];
}

}  // namespace

void RuleFusionPatterns(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const std::vector<OpSequence>& sequences =
      rank.op_sequences.Sequences(*rank.trace, rank.tree, rank.split.cpu_only, &rank.device_work);
  const std::vector<PatternMatch> matches = MatchFusionPatterns(sequences, RunsBackward(*rank.trace));
  // Per pattern and level: host-level and kernel-level matches of one pattern are separate candidates.
  std::map<std::pair<size_t, SequenceLevel>, PatternTotals> totals;
  const std::vector<bool> in_optimizer = InsideReplacedOptimizerStep(rank);
  for (const PatternMatch& match : matches) {
    if (ReplayedByGraph(rank, sequences[match.sequence], match)) continue;
    if (match.pattern == FusionLibrary().size() &&
        ChainInReplacedOptimizerStep(in_optimizer, sequences[match.sequence], match))
      continue;
    PatternTotals& t = totals[{match.pattern, sequences[match.sequence].level}];
    ++t.count;
    t.time_ns += match.time_ns;
    t.saved_ns += match.saved_ns;
    if (!t.example || match.time_ns > t.example->time_ns) t.example = &match;
    t.matches.push_back(&match);
  }
  const double min_count = config.Get(threshold::kFusionMinOccurrences);
  const double min_time = config.Get(threshold::kFusionMinTimePct) / 100 * WorkTimeNs(rank);
  std::map<size_t, const PatternTotals*> best;  // per pattern, the level that saves more
  for (const auto& [key, t] : totals) {
    if (static_cast<double>(t.count) < min_count || static_cast<double>(t.time_ns) < min_time || t.saved_ns <= 0)
      continue;
    const PatternTotals*& kept = best[key.first];
    if (!kept || t.saved_ns > kept->saved_ns) kept = &t;
  }
  for (const auto& [pattern, t] : best) Report(rank, config, sequences, pattern, *t, out);
}

TUNEPROF_ADVISOR_RULE(
    RuleFusionPatterns, (RuleRow{.order = 90, .thresholds = "fusion_min_occurrences fusion_min_time_pct"}),
    FusionRow(
        "fusion.attention", kEpilogueGain,
        "Replace the hand-written attention with a fused FlashAttention kernel: the scores matrix never goes "
        "to memory and the softmax, masking and dropout run inside it.",
        ApisPerPlatform(
            "torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=..., dropout_p=..., is_causal=True)",
            "torch_npu.npu_fusion_attention(q, k, v, head_num, input_layout=\"BNSD\", ...)",
            "torch.nn.functional.scaled_dot_product_attention (uses the fused CPU flash kernel)")),
    FusionRow(
        "fusion.conv_bn_relu", kEpilogueGain,
        "Fuse Conv-BatchNorm-ReLU: for inference fold BatchNorm into the convolution's weights and run the "
        "activation as its epilogue; for training let a compiler fuse BatchNorm and the activation into one pass.",
        ApisPerPlatform(
            "torch.nn.utils.fusion.fuse_conv_bn_eval (inference), torch.compile(model), channels_last memory format",
            "keep the Conv2D/BatchNorm/ReLU graph visible to CANN's ConvBatchnormFusionPass (graph mode, torchair)",
            "torch.ao.quantization.fuse_modules(model, [[\"conv\", \"bn\", \"relu\"]]) / fuse_conv_bn_eval, "
            "torch.compile")),
    FusionRow("fusion.rms_norm", kOnePassGain, "Use one fused RMSNorm kernel instead of its element-wise pieces.",
              ApisPerPlatform("torch.nn.functional.rms_norm / torch.nn.RMSNorm (torch >= 2.4), or torch.compile",
                              "torch_npu.npu_rms_norm(x, gamma, epsilon)",
                              "torch.nn.functional.rms_norm, or torch.compile")),
    FusionRow("fusion.layer_norm", kOnePassGain, "Use the fused LayerNorm instead of its element-wise pieces.",
              ApisPerPlatform("torch.nn.functional.layer_norm",
                              "torch.nn.functional.layer_norm (npu_add_layer_norm when a residual add precedes it)",
                              "torch.nn.functional.layer_norm")),
    FusionRow("fusion.swiglu", kOnePassGain, "Fuse the SwiGLU gate (silu and the multiply) into one kernel.",
              ApisPerPlatform("torch.compile(model), or a fused SwiGLU kernel", "torch_npu.npu_swiglu(x, dim=-1)",
                              "torch.compile(model)")),
    FusionRow("fusion.geglu", kOnePassGain, "Fuse the GeGLU gate into one kernel.",
              ApisPerPlatform("torch.compile(model)", "torch_npu.npu_geglu(x, dim=-1, approximate=1)",
                              "torch.compile(model)")),
    FusionRow("fusion.rotary", kOnePassGain, "Apply the rotary embedding with one fused kernel.",
              ApisPerPlatform("torch.compile(model), or a fused rotary kernel (e.g. flash_attn.layers.rotary)",
                              "torch_npu.npu_rotary_mul(x, cos, sin)", "torch.compile(model)")),
    FusionRow("fusion.matmul_epilogue", kEpilogueGain,
              "Run the bias and activation as the GEMM's epilogue instead of separate passes over its output.",
              ApisPerPlatform("torch.compile(model) (GEMM epilogue fusion), or torch._addmm_activation",
                              "torch_npu fused matmul ops (e.g. npu_ffn) or graph mode", "torch.compile(model)")),
    FusionRow("fusion.bias_dropout_add", kOnePassGain, "Fuse bias, dropout and the residual add into one kernel.",
              ApisPerPlatform("torch.compile(model)",
                              "graph mode: torch.compile(model, backend=torchair.get_npu_backend())",
                              "torch.compile(model)")),
    FusionRow("fusion.cast_chain", kOnePassGain,
              "Remove dtype round trips: keep tensors in one dtype, or let autocast place the casts.",
              ApisPerPlatform("torch.autocast(\"cuda\", dtype=torch.bfloat16), fewer .float()/.half() calls",
                              "torch.autocast(\"npu\", dtype=torch.bfloat16)",
                              "torch.autocast(\"cpu\", dtype=torch.bfloat16)")),
    FusionRow(kElementwiseChainId, kOnePassGain,
              "Let a compiler fuse chains of element-wise operators into single kernels: each separate operator "
              "reads and writes the whole tensor again.",
              ApisPerPlatform("torch.compile(model)",
                              "torch.compile(model, backend=torchair.get_npu_backend()) (torchair graph mode)",
                              "torch.compile(model)"),
              FindingCategory::kMemory));

}  // namespace tuneprof

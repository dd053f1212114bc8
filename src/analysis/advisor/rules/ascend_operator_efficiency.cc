// compute.operator_efficiency (msprof-analyze AI Core Performance): how close each Ascend operator shape comes
// to the limit of its busiest pipeline, from kernel_details' PipeUtilization ratios.
//
// The operators looked at, grouped by kernel name and input / output shapes as msprof-analyze groups them
// (ratios averaged over the group's rows that have them):
//  - vector: AI_VECTOR_CORE / MIX_AIV rows of the op types holding at least `operator_efficiency_min_share_pct`
//    of all kernel_details time;
//  - cube: AI_CORE rows of MatMul types (MatMulV2, BatchMatMul, ...) whose shape group moves at least
//    `operator_efficiency_cube_min_mb` (inputs + output; msprof-analyze counts 2 bytes an element whatever the
//    dtype, here the dtype's own size);
//  - attention: FlashAttentionScore and FlashAttentionScoreGrad.
// Each group is bound when a pipeline ratio reaches its limit (kLimits below: msprof-analyze's thresholds;
// scalar is ours, checked last). Otherwise its optimization space is msprof-analyze's: the largest gap
// between a pipeline's limit and its ratio, max(limit - ratio). The gain (an upper bound) is the group's
// time the busiest pipeline would save running at its limit: time x (1 - max(ratio / limit)).
// Shape affinity: a matmul whose inner (last) axis of an ND input is not a multiple of
// `cube_inner_axis_bytes` (512 B: 256 FP16 elements, the cube's fractal rows) and a FlashAttention whose head
// dim D or sequence length S is not a multiple of `attention_axis_multiple` (128) wastes cube cycles on
// padding done inside the kernel; the finding names the padded size.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

enum class OpClass : uint8_t { kVector, kCube, kAttention, kAttentionGrad };

// One pipeline's limit: a ratio at or above `limit` makes the operator bound by `bound`. "total" sums the
// vector, MTE2 and MTE3 ratios of a vector operator.
struct PipeLimit {
  std::string_view column;
  std::string_view bound;
  double limit;
};

constexpr PipeLimit kVectorLimits[] = {{"aiv_vec_ratio", "vec", 0.7},
                                       {"aiv_mte2_ratio", "mte2", 0.7},
                                       {"aiv_mte3_ratio", "mte3", 0.7},
                                       {"aiv_scalar_ratio", "scalar", 0.7}};
constexpr double kVectorTotalLimit = 0.9;  // vec + mte2 + mte3: "vec_mte2_mte3" bound
constexpr PipeLimit kCubeLimits[] = {
    {"aic_mac_ratio", "mac", 0.8}, {"aic_mte2_ratio", "mte2", 0.95}, {"aic_scalar_ratio", "scalar", 0.8}};
constexpr PipeLimit kAttentionLimits[] = {
    {"aic_mte2_ratio", "mte2", 0.8}, {"aiv_vec_ratio", "vec", 0.75}, {"aic_scalar_ratio", "scalar", 0.8}};
constexpr PipeLimit kAttentionGradLimits[] = {
    {"aic_mte2_ratio", "mte2", 0.8}, {"aic_fixpipe_ratio", "fixpipe", 0.75}, {"aic_scalar_ratio", "scalar", 0.8}};
constexpr size_t kMaxLimits = 4;

std::span<const PipeLimit> LimitsOf(OpClass op_class) {
  switch (op_class) {
    case OpClass::kVector:
      return kVectorLimits;
    case OpClass::kCube:
      return kCubeLimits;
    case OpClass::kAttention:
      return kAttentionLimits;
    case OpClass::kAttentionGrad:
      return kAttentionGradLimits;
  }
  return {};
}

using Shape = std::vector<int64_t>;

// "32,4096;4096,9216" -> {{32, 4096}, {4096, 9216}}; an unreadable dimension empties its tensor.
std::vector<Shape> ParseShapes(std::string_view text) {
  std::vector<Shape> shapes;
  while (!text.empty()) {
    const size_t end = std::min(text.find(';'), text.size());
    std::string_view tensor = text.substr(0, end);
    Shape dims;
    while (!tensor.empty()) {
      const size_t comma = std::min(tensor.find(','), tensor.size());
      int64_t dim = 0;
      const std::string_view part = tensor.substr(0, comma);
      const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), dim);
      if (ec != std::errc() || ptr != part.data() + part.size() || dim < 0) {
        dims.clear();
        break;
      }
      dims.push_back(dim);
      tensor.remove_prefix(std::min(comma + 1, tensor.size()));
    }
    shapes.push_back(std::move(dims));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return shapes;
}

// Bytes of one element of an Ascend dtype name; 2 (FP16) when unknown.
int64_t ItemSize(std::string_view dtype) {
  if (dtype.starts_with("DT_")) dtype.remove_prefix(3);
  if (dtype == "FLOAT" || dtype == "FLOAT32" || dtype == "INT32" || dtype == "UINT32") return 4;
  if (dtype == "DOUBLE" || dtype == "INT64" || dtype == "UINT64" || dtype == "COMPLEX64") return 8;
  if (dtype == "INT8" || dtype == "UINT8" || dtype == "BOOL" || dtype.starts_with("FLOAT8") ||
      dtype.starts_with("HIFLOAT8")) {
    return 1;
  }
  return 2;
}

// `value` rounded up to a multiple of `multiple` (> 0); nullopt where that does not fit (a damaged shape).
std::optional<int64_t> RoundUp(int64_t value, int64_t multiple) {
  if (value > std::numeric_limits<int64_t>::max() - multiple) return std::nullopt;
  return (value + multiple - 1) / multiple * multiple;
}

std::string_view FirstField(std::string_view list) { return list.substr(0, std::min(list.find(';'), list.size())); }

double Elements(const Shape& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

struct GroupKey {
  StringId name, inputs, outputs;
  OpClass op_class;
  friend auto operator<=>(const GroupKey&, const GroupKey&) = default;
};

struct Group {
  StringId type, dtypes, formats;
  uint64_t count = 0;
  double dur_ns = 0;
  double ratio_sum[kMaxLimits] = {};  // per limit, in LimitsOf's order
  uint64_t ratio_rows = 0;
  std::vector<uint32_t> rows;  // kernel_details rows, for their call sites
};

struct Verdict {
  std::string bound;   // empty: not bound
  double space = 0;    // max(limit - ratio) when not bound
  double gain_ns = 0;  // time x (1 - max(ratio / limit)) when not bound
};

Verdict Classify(OpClass op_class, const Group& group) {
  const std::span<const PipeLimit> limits = LimitsOf(op_class);
  const double rows = static_cast<double>(group.ratio_rows);
  std::vector<double> ratio(limits.size());
  for (size_t i = 0; i < limits.size(); ++i) ratio[i] = group.ratio_sum[i] / rows;
  Verdict v;
  if (op_class == OpClass::kVector && ratio[0] + ratio[1] + ratio[2] >= kVectorTotalLimit) {
    v.bound = "vec_mte2_mte3";
    return v;
  }
  // msprof-analyze's pairs: both of a cube or attention operator's first two limits reached is "a_and_b".
  const bool first = ratio[0] >= limits[0].limit, second = ratio[1] >= limits[1].limit;
  if (op_class != OpClass::kVector && first && second) {
    v.bound = fmt::format("{}_and_{}", limits[0].bound, limits[1].bound);
    return v;
  }
  // msprof-analyze checks a vector operator's MTE2 and MTE3 before its vector pipeline.
  static constexpr size_t kVectorOrder[] = {1, 2, 0, 3};
  double busiest = 0;
  for (size_t j = 0; j < limits.size(); ++j) {
    const size_t i = op_class == OpClass::kVector ? kVectorOrder[j] : j;
    if (ratio[i] >= limits[i].limit) {
      v.bound = std::string(limits[i].bound);
      return v;
    }
    busiest = std::max(busiest, ratio[i] / limits[i].limit);
    if (limits[i].bound != "scalar") v.space = std::max(v.space, limits[i].limit - ratio[i]);
  }
  v.gain_ns = group.dur_ns * (1 - busiest);
  return v;
}

// The columns of `op_class`'s limits; nullopt when one is missing (not a PipeUtilization run).
std::optional<std::vector<const NpuOpMetricColumn*>> ColumnsOf(const Trace& trace, OpClass op_class) {
  std::vector<const NpuOpMetricColumn*> columns;
  for (const PipeLimit& limit : LimitsOf(op_class)) {
    const NpuOpMetricColumn* column = trace.kernel_metric(limit.column);
    if (!column) return std::nullopt;
    columns.push_back(column);
  }
  return columns;
}

bool IsMatMul(std::string_view type) {
  std::string lower(type);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("matmul") != std::string::npos;
}

std::optional<OpClass> ClassOf(const Trace& trace, const NpuOpRow& row) {
  const std::string_view type = trace.str(row.type), core = trace.str(row.accelerator_core);
  if (type == "FlashAttentionScore") return OpClass::kAttention;
  if (type == "FlashAttentionScoreGrad") return OpClass::kAttentionGrad;
  if (core == "AI_CORE" && IsMatMul(type)) return OpClass::kCube;
  if (core == "AI_VECTOR_CORE" || core == "MIX_AIV") return OpClass::kVector;
  return std::nullopt;
}

// Inputs and output of a matmul shape group, bytes at the dtype's size.
double CubeBytes(const Trace& trace, const NpuOpRow& row) {
  const double item = static_cast<double>(ItemSize(FirstField(trace.str(row.input_data_types))));
  double elements = 0;
  for (const Shape& dims : ParseShapes(trace.str(row.input_shapes))) elements += Elements(dims);
  for (const Shape& dims : ParseShapes(trace.str(row.output_shapes))) elements += Elements(dims);
  return elements * item;
}

struct Collected {
  std::map<GroupKey, Group> groups;
  double total_ns = 0;
};

void AddRow(const Trace& trace, size_t i, OpClass op_class,
            const std::map<OpClass, std::vector<const NpuOpMetricColumn*>>& columns, Collected* out) {
  const NpuOpRow& row = trace.kernel_details().rows[i];
  Group& group = out->groups[GroupKey{row.name, row.input_shapes, row.output_shapes, op_class}];
  group.type = row.type;
  group.dtypes = row.input_data_types;
  group.formats = row.input_formats;
  ++group.count;
  group.dur_ns += static_cast<double>(row.dur_ns);
  group.rows.push_back(static_cast<uint32_t>(i));
  const std::vector<const NpuOpMetricColumn*>& cols = columns.at(op_class);
  for (const NpuOpMetricColumn* column : cols) {
    if (std::isnan(column->values[i])) return;  // a row without counters adds time only, as msprof-analyze
  }
  for (size_t c = 0; c < cols.size(); ++c) group.ratio_sum[c] += cols[c]->values[i];
  ++group.ratio_rows;
}

Collected Collect(const Trace& trace, const AdvisorConfig& config,
                  const std::map<OpClass, std::vector<const NpuOpMetricColumn*>>& columns) {
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  Collected out;
  std::map<StringId, double> vector_type_ns;
  std::map<std::tuple<StringId, StringId, StringId>, double> cube_bytes;
  for (const NpuOpRow& row : rows) {
    if (row.dur_ns <= 0) continue;
    out.total_ns += static_cast<double>(row.dur_ns);
    const std::optional<OpClass> op_class = ClassOf(trace, row);
    if (op_class == OpClass::kVector) vector_type_ns[row.type] += static_cast<double>(row.dur_ns);
    if (op_class == OpClass::kCube)
      cube_bytes[{row.name, row.input_shapes, row.output_shapes}] += CubeBytes(trace, row);
  }
  const double min_share = config.Get(threshold::kOperatorEfficiencyMinSharePct) / 100;
  const double min_bytes = config.Get(threshold::kOperatorEfficiencyCubeMinMb) * 1024 * 1024;
  for (size_t i = 0; i < rows.size(); ++i) {
    const NpuOpRow& row = rows[i];
    const std::optional<OpClass> op_class = ClassOf(trace, row);
    if (row.dur_ns <= 0 || !op_class || !columns.contains(*op_class)) continue;
    if (op_class == OpClass::kVector && vector_type_ns[row.type] < min_share * out.total_ns) continue;
    if (op_class == OpClass::kCube && cube_bytes[{row.name, row.input_shapes, row.output_shapes}] < min_bytes) {
      continue;
    }
    AddRow(trace, i, *op_class, columns, &out);
  }
  return out;
}

// What pads a misaligned shape group into alignment; empty when aligned or when the shape cannot say.
std::string CubeMisalignment(const Trace& trace, const Group& group, const GroupKey& key, double axis_bytes) {
  const std::vector<Shape> inputs = ParseShapes(trace.str(key.inputs));
  std::string_view formats = trace.str(group.formats);
  std::string fix;
  for (size_t t = 0; t < inputs.size() && t < 2; ++t) {
    const std::string_view format = FirstField(formats);
    formats.remove_prefix(std::min(format.size() + 1, formats.size()));
    // An NZ (fractal) tensor is stored in aligned 16 x 16 blocks already.
    if (inputs[t].size() < 2 || format.find("NZ") != std::string_view::npos) continue;
    const int64_t item = ItemSize(FirstField(trace.str(group.dtypes)));
    // Any --config value converts: one beyond every real axis stands for "never aligned" without overflow.
    const auto multiple = static_cast<int64_t>(std::min(axis_bytes, 1e15)) / item;
    if (multiple <= 0) continue;
    const int64_t inner = inputs[t].back();
    const std::optional<int64_t> padded = RoundUp(inner, multiple);
    if (inner % multiple == 0 || !padded) continue;
    fix += fmt::format("{}input {} inner axis {} -> {}", fix.empty() ? "" : ", ", t, inner, *padded);
  }
  return fix;
}

// N and S from softmax_max / softmax_sum ([B, N, S, 8]), D from the query (BNSD / BSND: last axis; BSH: H / N).
std::string AttentionMisalignment(const Trace& trace, const GroupKey& key, int64_t multiple) {
  const std::vector<Shape> inputs = ParseShapes(trace.str(key.inputs));
  const std::vector<Shape> outputs = ParseShapes(trace.str(key.outputs));
  const Shape* softmax = nullptr;
  for (const std::vector<Shape>* list : {&inputs, &outputs}) {
    for (const Shape& dims : *list) {
      if (!softmax && dims.size() == 4 && dims[3] == 8) softmax = &dims;
    }
  }
  if (!softmax || inputs.empty() || (*softmax)[1] <= 0 || multiple <= 0) return "";
  const int64_t heads = (*softmax)[1], seq = (*softmax)[2];
  const Shape& query = inputs[0];
  int64_t head_dim = 0;
  if (query.size() == 4) head_dim = query[3];
  if (query.size() == 3) head_dim = query[2] / heads;
  const bool varlen = trace.str(key.name).find("arlen") != std::string_view::npos;
  std::string fix;
  auto pad = [&](std::string_view axis, int64_t value) {
    const std::optional<int64_t> padded = RoundUp(value, multiple);
    if (value <= 0 || value % multiple == 0 || !padded) return;
    fix += fmt::format("{}{} {} -> {}", fix.empty() ? "" : ", ", axis, value, *padded);
  };
  pad("head dim D", head_dim);
  if (!varlen) pad("sequence S", seq);
  return fix;
}

std::string ShortShape(std::string_view shape) {
  constexpr size_t kMax = 48;
  return shape.size() <= kMax ? std::string(shape) : fmt::format("{}...", shape.substr(0, kMax));
}

std::string GroupLabel(const Trace& trace, const GroupKey& key, const Group& group) {
  return fmt::format("{} ({}) [{}] {}", trace.str(key.name), trace.str(group.type), ShortShape(trace.str(key.inputs)),
                     FirstField(trace.str(group.dtypes)));
}

struct Entry {
  std::string label;
  std::string what;  // bound type, "space 67.1 %", or the padding
  double sort_key = 0;
};

std::string TopEntries(std::vector<Entry> entries, size_t limit) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.sort_key > b.sort_key; });
  std::string text;
  for (size_t i = 0; i < entries.size() && i < limit; ++i) {
    text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", entries[i].label, entries[i].what);
  }
  return text;
}

struct TypeTally {
  uint64_t shapes = 0, bound = 0;
  double dur_ns = 0, max_space = 0;
};

struct Tally {
  std::vector<Entry> space, bound, misaligned;
  std::map<std::string_view, TypeTally> by_type;
  double analysed_ns = 0, bound_ns = 0, space_ns = 0, misaligned_ns = 0, gain_ns = 0;
  double max_space = 0, vector_gain_ns = 0;
  uint64_t space_groups = 0, bound_groups = 0;
  std::vector<std::pair<std::string, const Group*>> reported;  // every shape named, for its call sites
};

void Judge(const Trace& trace, const AdvisorConfig& config, const GroupKey& key, const Group& group, Tally* t) {
  const std::string label = GroupLabel(trace, key, group);
  TypeTally& type = t->by_type[trace.str(group.type)];
  ++type.shapes;
  type.dur_ns += group.dur_ns;
  t->analysed_ns += group.dur_ns;
  std::string pad;
  if (key.op_class == OpClass::kCube)
    pad = CubeMisalignment(trace, group, key, config.Get(threshold::kCubeInnerAxisBytes));
  if (key.op_class == OpClass::kAttention || key.op_class == OpClass::kAttentionGrad) {
    const double multiple = std::min(config.Get(threshold::kAttentionAxisMultiple), 1e15);
    pad = AttentionMisalignment(trace, key, static_cast<int64_t>(multiple));
  }
  if (!pad.empty() || group.ratio_rows > 0) t->reported.push_back({label, &group});
  if (!pad.empty()) {
    t->misaligned.push_back({label, fmt::format("pad {} ({})", pad, FormatDuration(group.dur_ns)), group.dur_ns});
    t->misaligned_ns += group.dur_ns;
    return;  // as msprof-analyze: a shape that misses the cube's alignment is fixed by its shape first
  }
  if (group.ratio_rows == 0) return;
  const Verdict v = Classify(key.op_class, group);
  if (!v.bound.empty()) {
    ++t->bound_groups;
    ++type.bound;
    t->bound_ns += group.dur_ns;
    t->bound.push_back({label, fmt::format("{}-bound ({})", v.bound, FormatDuration(group.dur_ns)), group.dur_ns});
    return;
  }
  ++t->space_groups;
  t->space_ns += group.dur_ns;
  t->gain_ns += v.gain_ns;
  if (key.op_class == OpClass::kVector) t->vector_gain_ns += v.gain_ns;
  t->max_space = std::max(t->max_space, v.space);
  type.max_space = std::max(type.max_space, v.space);
  t->space.push_back({label, fmt::format("space {:.1f} %", 100 * v.space), v.space});
}

std::string ByType(const Tally& t, size_t limit) {
  std::vector<std::pair<std::string_view, TypeTally>> sorted(t.by_type.begin(), t.by_type.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.dur_ns > b.second.dur_ns; });
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < limit; ++i) {
    const TypeTally& type = sorted[i].second;
    const std::string space = type.max_space > 0 ? fmt::format(", space up to {:.1f} %", 100 * type.max_space) : "";
    text += fmt::format("{}{} {} shapes {} ({} bound{})", text.empty() ? "" : "; ", sorted[i].first, type.shapes,
                        FormatDuration(type.dur_ns), type.bound, space);
  }
  return text;
}

Finding MakeFinding(const RankEvidence& rank, const AdvisorConfig& config, const Tally& t) {
  Finding f = NewFinding("compute.operator_efficiency", rank, config);
  std::vector<std::string> parts;
  if (t.space_groups > 0) {
    parts.push_back(
        fmt::format("{} operator shapes below every pipeline's limit (optimization space up to {:.1f} %, {})",
                    t.space_groups, 100 * t.max_space, FormatDuration(t.space_ns)));
  }
  if (t.bound_groups > 0)
    parts.push_back(fmt::format("{} bound on a pipeline ({})", t.bound_groups, FormatDuration(t.bound_ns)));
  if (!t.misaligned.empty()) {
    parts.push_back(fmt::format("{} with unaligned matmul / attention axes ({})", t.misaligned.size(),
                                FormatDuration(t.misaligned_ns)));
  }
  f.title = fmt::format("Ascend operator efficiency: {}", fmt::join(parts, "; "));
  f.value = 100 * t.max_space;
  // The vector operators' time is memory-bound work, the cube's and attention's compute-bound.
  f.saves_from = 2 * t.vector_gain_ns >= t.gain_ns ? TimePart::kMemoryBound : TimePart::kComputeBound;
  f.uncapped_gain_ns = PerStep(rank, t.gain_ns);
  f.AddNumber("analysed_us", t.analysed_ns / 1e3, "us");
  f.AddNumber("space_shapes", static_cast<double>(t.space_groups), "count");
  f.AddNumber("space_us", t.space_ns / 1e3, "us");
  f.AddNumber("max_space_pct", 100 * t.max_space, "%");
  f.AddNumber("bound_shapes", static_cast<double>(t.bound_groups), "count");
  f.AddNumber("bound_us", t.bound_ns / 1e3, "us");
  f.AddNumber("misaligned_shapes", static_cast<double>(t.misaligned.size()), "count");
  f.AddNumber("misaligned_us", t.misaligned_ns / 1e3, "us");
  f.AddText("by_type", ByType(t, 5));
  if (!t.space.empty()) f.AddText("top_space", TopEntries(t.space, 5));
  if (!t.bound.empty()) f.AddText("top_bound", TopEntries(t.bound, 5));
  if (!t.misaligned.empty()) f.AddText("misaligned", TopEntries(t.misaligned, 5));
  return f;
}

constexpr size_t kShapesWithSites = 3;

// The user's source lines of the longest shapes named, where the trace has Python frames: "TransData
// [32,3,224,224]: main.py(375): train x5"; nothing where none has one.
void AddCallSites(const RankEvidence& rank, const Tally& t, Finding* f) {
  std::vector<std::pair<std::string, const Group*>> shapes = t.reported;
  std::stable_sort(shapes.begin(), shapes.end(),
                   [](const auto& a, const auto& b) { return a.second->dur_ns > b.second->dur_ns; });
  std::vector<NamedDetailRows> groups;
  for (const auto& [name, group] : shapes) groups.push_back({name, group->rows});
  const std::string text = DetailGroupCallSites(*rank.trace, rank.tree, groups, kShapesWithSites);
  if (!text.empty()) f->AddText("source_lines", text);
}

}  // namespace

void RuleAscendOperatorEfficiency(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  if (trace.kernel_details().rows.empty()) return;
  std::map<OpClass, std::vector<const NpuOpMetricColumn*>> columns;
  for (OpClass op_class : {OpClass::kVector, OpClass::kCube, OpClass::kAttention, OpClass::kAttentionGrad}) {
    if (auto found = ColumnsOf(trace, op_class)) columns.emplace(op_class, std::move(*found));
  }
  if (columns.empty()) return;  // no PipeUtilization counters in this run
  const Collected collected = Collect(trace, config, columns);
  Tally tally;
  for (const auto& [key, group] : collected.groups) Judge(trace, config, key, group, &tally);
  if (tally.space_groups == 0 && tally.bound_groups == 0 && tally.misaligned.empty()) return;
  Finding f = MakeFinding(rank, config, tally);
  AddCallSites(rank, tally, &f);
  std::vector<uint32_t> evidence;
  for (const auto& [label, group] : tally.reported)
    evidence.insert(evidence.end(), group->rows.begin(), group->rows.end());
  SayModulesOfRows(rank, evidence, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof

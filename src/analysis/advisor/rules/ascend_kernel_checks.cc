// msprof-analyze's kernel_details checks, one rule each:
//  - compute.operator_no_bound (Operator No Bound): operators longer than `operator_no_bound_us` whose
//    PipeUtilization ratios (vec, mac, scalar, mte1, mte2, mte3, fixpipe; AI Core and AI Vector columns) all
//    stay at or below `operator_bound_ratio_pct`: no pipeline is saturated, so the tiling leaves the core
//    waiting. A matmul whose fixpipe (the copy of its results out of L0C) is saturated is bound by it.
//    Gain: unknown (what AOE tuning recovers is not in the trace).
//  - compute.block_dim (Block Dim): static-shape AI_CORE / AI_VECTOR_CORE / MIX_AIC operators whose Block
//    Dim is not a multiple of the chip's cube (vector) core count, so the last wave leaves cores idle
//    (MIX_AIC is fine when its Mix Block Dim fills the vector cores). Core counts come from the hardware
//    profile; unknown chip -> quiet. Dynamic-shape operators are skipped as msprof-analyze does (their
//    block dim is chosen at run time). Gain (an upper bound): each operator's time x the idle share of
//    its waves, 1 - block_dim / (ceil(block_dim / cores) x cores).
//  - config.dynamic_shape (Operator Dynamic Shape): every operator with an OP State is "dynamic": the run
//    compiles or selects kernels per shape on the host. Gain: unknown.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

// The PipeUtilization ratio columns of the pipelines: msprof-analyze's operator_bound_ratio set (the 2024+
// AI Core / AI Vector names and the older unprefixed ones) and the fixpipe, which it leaves out although a
// matmul can be bound by it; icache rates are misses, not a pipeline.
constexpr std::string_view kPipeRatios[] = {
    "aic_mac_ratio",    "aic_scalar_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio", "aiv_vec_ratio",
    "aiv_scalar_ratio", "aiv_mte2_ratio",   "aiv_mte3_ratio", "vec_ratio",      "mac_ratio",         "scalar_ratio",
    "mte1_ratio",       "mte2_ratio",       "mte3_ratio",     "fixpipe_ratio"};

std::string_view TypeOf(const Trace& trace, const NpuOpRow& row) {
  return trace.str(row.type).empty() ? trace.str(row.name) : trace.str(row.type);
}

// "Conv2D x3 (1.20 ms)" for the largest entries of a by-type tally.
std::string TopTypes(const std::map<std::string_view, std::pair<uint64_t, double>>& by_type, size_t limit) {
  std::vector<std::pair<std::string_view, std::pair<uint64_t, double>>> sorted(by_type.begin(), by_type.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < limit; ++i) {
    text += fmt::format("{}{} x{} ({})", text.empty() ? "" : ", ", sorted[i].first, sorted[i].second.first,
                        FormatDuration(sorted[i].second.second));
  }
  return text;
}

bool IsDynamic(const Trace& trace, const NpuOpRow& row) { return trace.str(row.op_state) == "dynamic"; }

}  // namespace

void RuleAscendOperatorNoBound(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  std::vector<const NpuOpMetricColumn*> columns;
  for (std::string_view name : kPipeRatios) {
    if (const NpuOpMetricColumn* column = trace.kernel_metric(name)) columns.push_back(column);
  }
  if (columns.empty()) return;  // no PipeUtilization counters in this run
  const double min_ns = config.Get(threshold::kOperatorNoBoundUs) * 1e3;
  const double bound = config.Get(threshold::kOperatorBoundRatioPct) / 100;
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  std::map<std::string_view, std::pair<uint64_t, double>> by_type;
  uint64_t checked = 0, unbound = 0;
  double unbound_ns = 0, checked_ns = 0;
  std::vector<uint32_t> evidence;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (static_cast<double>(rows[i].dur_ns) <= min_ns) continue;
    double highest = -1;
    for (const NpuOpMetricColumn* column : columns) {
      if (!std::isnan(column->values[i])) highest = std::max(highest, column->values[i]);
    }
    if (highest < 0) continue;  // no counters for this row (HCCL, AI CPU)
    ++checked;
    checked_ns += static_cast<double>(rows[i].dur_ns);
    if (highest > bound) continue;
    ++unbound;
    unbound_ns += static_cast<double>(rows[i].dur_ns);
    evidence.push_back(static_cast<uint32_t>(i));
    auto& [count, time] = by_type[TypeOf(trace, rows[i])];
    ++count;
    time += static_cast<double>(rows[i].dur_ns);
  }
  if (unbound == 0) return;
  Finding f = NewFinding("compute.operator_no_bound", rank, config);
  f.title = fmt::format("{} operators over {:.0f} us saturate no pipeline ({} in all)", unbound,
                        config.Get(threshold::kOperatorNoBoundUs), FormatDuration(unbound_ns));
  f.value = static_cast<double>(unbound);
  f.AddNumber("unbound_ops", static_cast<double>(unbound), "count");
  f.AddNumber("unbound_us", unbound_ns / 1e3, "us");
  f.AddNumber("checked_ops", static_cast<double>(checked), "count");
  f.AddNumber("unbound_time_pct", checked_ns > 0 ? 100 * unbound_ns / checked_ns : 0, "%");
  f.AddNumber("bound_ratio_pct", config.Get(threshold::kOperatorBoundRatioPct), "%");
  f.AddText("top_types", TopTypes(by_type, 5));
  SayModulesOfRows(rank, evidence, &f);
  out->push_back(std::move(f));
}

// The cores an operator's blocks are spread over: the cube cores for AI_CORE and MIX_AIC, the vector
// cores for AI_VECTOR_CORE; 0 for other cores and for a MIX_AIC operator whose Mix Block Dim fills the
// vector cores (it is not checked).
int64_t CoresOf(const Trace& trace, const NpuOpRow& row, int64_t cube, int64_t vector) {
  const std::string_view core = trace.str(row.accelerator_core);
  if (core == "AI_CORE") return cube;
  if (core == "AI_VECTOR_CORE") return vector;
  if (core != "MIX_AIC") return 0;
  if (row.mix_block_dim != kNoId && row.mix_block_dim > 0 && row.mix_block_dim % vector == 0) return 0;
  return cube;
}

void RuleAscendBlockDim(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  const HardwareProfile* profile = rank.hardware ? rank.hardware->profile : nullptr;
  if (!profile || !profile->cube_cores.value || !profile->vector_cores.value) return;  // core counts unknown
  const auto cube = static_cast<int64_t>(*profile->cube_cores.value);
  const auto vector = static_cast<int64_t>(*profile->vector_cores.value);
  if (cube <= 0 || vector <= 0) return;
  std::map<std::string_view, std::pair<uint64_t, double>> by_type;
  uint64_t count = 0;
  double time_ns = 0, idle_ns = 0;
  std::vector<uint32_t> evidence;
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    const NpuOpRow& row = rows[i];
    if (IsDynamic(trace, row) || row.block_dim == kNoId || row.block_dim <= 0 || row.dur_ns <= 0) continue;
    const int64_t cores = CoresOf(trace, row, cube, vector);
    if (cores == 0 || row.block_dim % cores == 0) continue;
    const double waves = std::ceil(static_cast<double>(row.block_dim) / static_cast<double>(cores));
    const double dur = static_cast<double>(row.dur_ns);
    ++count;
    evidence.push_back(static_cast<uint32_t>(i));
    time_ns += dur;
    idle_ns += dur * (1 - static_cast<double>(row.block_dim) / (waves * static_cast<double>(cores)));
    auto& [n, t] = by_type[TypeOf(trace, row)];
    ++n;
    t += dur;
  }
  if (count == 0) return;
  Finding f = NewFinding("compute.block_dim", rank, config);
  f.title = fmt::format("{} operators leave AI cores idle: block dim not a multiple of {} cube / {} vector cores",
                        count, cube, vector);
  f.value = static_cast<double>(count);
  f.uncapped_gain_ns = PerStep(rank, idle_ns);
  f.AddNumber("ops", static_cast<double>(count), "count");
  f.AddNumber("ops_us", time_ns / 1e3, "us");
  f.AddNumber("idle_core_us", idle_ns / 1e3, "us");
  f.AddNumber("cube_cores", static_cast<double>(cube), "count");
  f.AddNumber("vector_cores", static_cast<double>(vector), "count");
  f.AddText("top_types", TopTypes(by_type, 5));
  f.strategy = fmt::format(
      "Split these operators' work into a multiple of the {} cube / {} vector cores (shapes "
      "that divide evenly, or custom tiling), so that no wave runs on a fraction of the cores.",
      cube, vector);
  SayModulesOfRows(rank, evidence, &f);
  out->push_back(std::move(f));
}

void RuleAscendDynamicShape(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  uint64_t with_state = 0, dynamic = 0;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    const std::string_view state = trace.str(row.op_state);
    if (state.empty() || state == "N/A") continue;
    ++with_state;
    dynamic += IsDynamic(trace, row);
  }
  if (with_state == 0 || dynamic != with_state) return;
  Finding f = NewFinding("config.dynamic_shape", rank, config);
  f.title = fmt::format("all {} operators run as dynamic-shape operators", dynamic);
  f.value = static_cast<double>(dynamic);
  f.AddNumber("dynamic_ops", static_cast<double>(dynamic), "count");
  f.AddNumber("ops_with_state", static_cast<double>(with_state), "count");
  out->push_back(std::move(f));
}

}  // namespace tuneprof

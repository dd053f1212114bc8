// compute.ai_cpu_ops (msprof-analyze AICPU check): Ascend operators that ran on the AI CPU instead of
// the AI Core, with tasks of at least 20 us. AI CPU operators are slow and break the device pipeline
// (often float64, int64 index ops or unsupported dtypes). Gain: unknown from the trace alone (the AI
// Core time of a replacement is not measured), so 0 and said so.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {

namespace {

constexpr size_t kTypesWithSites = 3;

}  // namespace

void RuleAscendAiCpu(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  const int64_t min_ns = static_cast<int64_t>(config.Get(threshold::kAiCpuTaskUs) * 1e3);
  std::map<std::string_view, std::pair<uint64_t, int64_t>> slow;  // by type: count, total
  std::map<std::string_view, std::vector<uint32_t>> rows_of;      // by type: its rows, for call sites
  double total = 0;
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  for (size_t r = 0; r < rows.size(); ++r) {
    const NpuOpRow& row = rows[r];
    if (trace.str(row.accelerator_core) != "AI_CPU" || row.dur_ns < min_ns) continue;
    const std::string_view type = trace.str(row.type).empty() ? trace.str(row.name) : trace.str(row.type);
    auto& [count, time] = slow[type];
    ++count;
    time += row.dur_ns;
    total += static_cast<double>(row.dur_ns);
    rows_of[type].push_back(static_cast<uint32_t>(r));
  }
  if (slow.empty()) return;
  std::vector<std::pair<std::string_view, std::pair<uint64_t, int64_t>>> sorted(slow.begin(), slow.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::string types;
  for (size_t i = 0; i < sorted.size() && i < 5; ++i) {
    types += fmt::format("{}{} x{} ({})", types.empty() ? "" : ", ", sorted[i].first, sorted[i].second.first,
                         FormatDuration(static_cast<double>(sorted[i].second.second)));
  }
  uint64_t count = 0;
  for (const auto& entry : sorted) count += entry.second.first;
  Finding f = NewFinding("compute.ai_cpu_ops", rank, config);
  f.title = fmt::format("{} AI CPU tasks of at least {:.0f} us ({} in all)", count, config.Get(threshold::kAiCpuTaskUs),
                        FormatDuration(total));
  f.value = static_cast<double>(count);
  f.AddNumber("ai_cpu_tasks", static_cast<double>(count), "count");
  f.AddNumber("ai_cpu_us", total / 1e3, "us");
  f.AddText("top_types", types);
  std::vector<NamedDetailRows> groups;  // the types, longest first
  for (const auto& entry : sorted) groups.push_back({entry.first, rows_of.at(entry.first)});
  const std::string sites = DetailGroupCallSites(trace, rank.tree, groups, kTypesWithSites);
  if (!sites.empty()) f.AddText("source_lines", sites);
  std::vector<uint32_t> evidence;
  for (const auto& [type, of_type] : rows_of) evidence.insert(evidence.end(), of_type.begin(), of_type.end());
  SayModulesOfRows(rank, evidence, &f);
  out->push_back(std::move(f));
}

// compute.aicpu_dtype (msprof-analyze AICPU check, its dtype advice): AI_CPU operators whose inputs are
// float64 or int64. The AI Core has no float64 and few int64 kernels, so such an operator falls back to the
// AI CPU; in float32 / int32, where its values allow, it most often runs on the AI Core. Every such task
// counts, whatever its length: the fallback is the finding, not one slow task. Gain: unknown (the AI Core
// time of the replacement is not in the trace).
namespace {

constexpr size_t kListedTypes = 5;

// "DOUBLE" / "DT_DOUBLE" / "FLOAT64" -> "float64"; "INT64" / "DT_INT64" -> "int64"; else "".
std::string_view WideType(std::string_view dtype) {
  if (dtype.starts_with("DT_")) dtype.remove_prefix(3);
  if (dtype == "DOUBLE" || dtype == "FLOAT64" || dtype == "double" || dtype == "float64") return "float64";
  if (dtype == "INT64" || dtype == "int64") return "int64";
  return {};
}

struct WideInputs {
  std::vector<uint32_t> launched_by;  // the host operators of its tasks, for their call sites
  uint64_t count = 0;
  int64_t time_ns = 0;
  bool float64 = false;
  bool int64 = false;
};

// Whether a ';'-separated list of input data types holds a float64 and an int64 one.
std::pair<bool, bool> WideInputTypes(std::string_view types) {
  bool float64 = false, int64 = false;
  while (!types.empty()) {
    const size_t cut = types.find(';');
    const std::string_view wide = WideType(types.substr(0, cut));
    float64 |= wide == "float64";
    int64 |= wide == "int64";
    types = cut == std::string_view::npos ? std::string_view() : types.substr(cut + 1);
  }
  return {float64, int64};
}

// The costliest operator types (first kListedTypes of `sorted`), each with its count, time, the narrower
// type to cast to and its call sites.
std::string ListWideTypes(const std::vector<std::pair<std::string_view, WideInputs>>& sorted, CallSites* sites) {
  std::string listed;
  for (size_t i = 0; i < sorted.size() && i < kListedTypes; ++i) {
    const WideInputs& w = sorted[i].second;
    const std::string where = TopCallSites(sites, w.launched_by);
    const std::string_view to = w.float64 && w.int64 ? "float32 / int32" : w.float64 ? "float32" : "int32";
    listed += fmt::format("{}{} x{} ({}, {} inputs -> {}{})", i ? "; " : "", sorted[i].first, w.count,
                          FormatDuration(static_cast<double>(w.time_ns)),
                          w.float64 && w.int64 ? "float64 and int64"
                          : w.float64          ? "float64"
                                               : "int64",
                          to, where.empty() ? "" : "; at " + where);
  }
  if (sorted.size() > kListedTypes) listed += fmt::format("; and {} more types", sorted.size() - kListedTypes);
  return listed;
}

}  // namespace

void RuleAscendAiCpuDtype(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  (void)config;
  const Trace& trace = *rank.trace;
  std::map<std::string_view, WideInputs> by_type;
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  std::vector<uint32_t> launched_by;  // filled on the first wide row: most runs have none
  std::vector<uint32_t> evidence;
  for (size_t r = 0; r < rows.size(); ++r) {
    const NpuOpRow& row = rows[r];
    if (trace.str(row.accelerator_core) != "AI_CPU" || row.dur_ns < 0) continue;
    const auto [float64, int64] = WideInputTypes(trace.str(row.input_data_types));
    if (!float64 && !int64) continue;
    WideInputs& w = by_type[trace.str(row.type).empty() ? trace.str(row.name) : trace.str(row.type)];
    ++w.count;
    w.time_ns += row.dur_ns;
    w.float64 |= float64;
    w.int64 |= int64;
    if (launched_by.empty()) launched_by = KernelDetailLaunchers(trace, DeviceLaunchers(trace));
    w.launched_by.push_back(launched_by[r]);
    evidence.push_back(static_cast<uint32_t>(r));
  }
  if (by_type.empty()) return;
  std::vector<std::pair<std::string_view, WideInputs>> sorted(by_type.begin(), by_type.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.time_ns > b.second.time_ns; });
  uint64_t count = 0;
  double total = 0;
  for (const auto& [type, w] : sorted) count += w.count, total += static_cast<double>(w.time_ns);
  CallSites sites(trace, rank.tree);
  const std::string listed = ListWideTypes(sorted, &sites);
  Finding f = NewFinding("compute.aicpu_dtype", rank, config);
  f.title = fmt::format("{} AI CPU tasks take float64 or int64 inputs ({} in all); top {}", count,
                        FormatDuration(total), sorted.front().first);
  f.value = static_cast<double>(count);
  f.AddNumber("aicpu_wide_tasks", static_cast<double>(count), "count");
  f.AddNumber("aicpu_wide_us", total / 1e3, "us");
  f.AddText("operator_types", listed);
  SayModulesOfRows(rank, evidence, &f);
  out->push_back(std::move(f));
}

TUNEPROF_ADVISOR_RULE(
    RuleAscendAiCpu, (RuleRow{.order = 110, .thresholds = "ai_cpu_task_us"}),
    {.id = "compute.ai_cpu_ops",
     .category = FindingCategory::kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "kernel_details rows with Accelerator Core AI_CPU and duration >= threshold",
     .unit = "count",
     .threshold = threshold::kAiCpuTaskUs,
     .gain = GainKind::kUnknown,
     .gain_model = "the AI Core time of the replacement operators is not in the trace",
     .strategy = "Keep these operators on the AI Core: use supported dtypes (float32/float16 instead of float64, "
                 "int32 instead of int64 where possible) and replace index/nonzero-style operators with masked forms.",
     .apis = SameApis("tensor.float() instead of .double(); torch_npu operator whitelist for the CANN version")});

TUNEPROF_ADVISOR_RULE(
    RuleAscendAiCpuDtype, (RuleRow{.order = 440}),
    {.id = "compute.aicpu_dtype",
     .category = FindingCategory::kCompute,
     .saves_from = TimePart::kComputeBound,
     .metric = "kernel_details AI_CPU rows with a DOUBLE or INT64 input data type",
     .unit = "count",
     .gain = GainKind::kUnknown,
     .gain_model = "the AI Core time of the operators in float32 / int32 is not in the trace",
     .strategy = "These operators run on the AI CPU because of their float64 / int64 inputs. Where the values allow, "
                 "cast them to float32 / int32 before the operator (indices and counts below 2^31 fit int32) so that "
                 "it runs on the AI Core.",
     .apis = SameApis("tensor.float() instead of .double(); tensor.int() for indices below 2^31")});

}  // namespace tuneprof

// compute.ai_cpu_ops (msprof-analyze AICPU check): Ascend operators that ran on the AI CPU instead of
// the AI Core, with tasks of at least 20 us. AI CPU operators are slow and break the device pipeline
// (often float64, int64 index ops or unsupported dtypes). Gain: unknown from the trace alone (the AI
// Core time of a replacement is not measured), so 0 and said so.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include "analysis/advisor/aicpu_fallbacks.h"
#include "analysis/advisor/api_replacements.h"
#include "analysis/advisor/call_sites.h"
#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {

namespace {

constexpr size_t kTypesWithSites = 3;
constexpr size_t kAiCpuListedSignatures = 5;
constexpr size_t kAiCoreSignaturesShown = 3;

// The AI CPU calls of one operator type with one dtype signature.
struct AiCpuSignatureGroup {
  std::string_view type;
  std::string_view inputs;
  std::string_view outputs;
  uint64_t count = 0;
  int64_t time_ns = 0;
};

// How to check a dtype the run holds no evidence for: the operator list of the CANN the run used.
std::string AiCpuDtypeCheckHint(const Trace& trace, std::string_view type) {
  const std::string cann = ReadRunVersions(trace.metadata()).cann;
  return fmt::format("check {}'s dtypes in the CANN operator list of the installed version{}", type,
                     cann.empty() ? "" : " (CANN " + cann + " here)");
}

// One AI CPU signature against the run's AI Core calls of its type, in words.
std::string DescribeAiCpuSignature(const Trace& trace, const AiCoreDtypes& ai_core, const AiCpuSignatureGroup& g) {
  const std::string head = fmt::format("{} {} x{} ({})", g.type, DtypeSignature(g.inputs, g.outputs), g.count,
                                       FormatDuration(static_cast<double>(g.time_ns)));
  if (ai_core.Calls(g.type) == 0) {
    return fmt::format(
        "{}: no {} runs on the AI Core in this run, so which of its dtypes the AI Core takes is a "
        "guess: {}",
        head, g.type, AiCpuDtypeCheckHint(trace, g.type));
  }
  const std::string seen = ai_core.Signatures(g.type, kAiCoreSignaturesShown, g.inputs, g.outputs);
  const std::vector<std::string> missing = ai_core.Missing(g.type, g.inputs, g.outputs);
  if (missing.empty()) {
    return fmt::format(
        "{}: each of its dtypes runs on the AI Core at its place in this run ({}): not its dtypes but "
        "its shapes, formats or attributes sent it to the AI CPU",
        head, seen);
  }
  return fmt::format(
      "{}: the AI Core runs {} in this run ({}) but never with {}: the likely cause: give it the "
      "dtypes of those calls where the values allow",
      head, g.type, seen, fmt::join(missing, " or "));
}

// The slow AI CPU calls' dtype signatures, longest first, each against the AI Core calls of its type;
// "" when no call recorded its dtypes (Level0).
std::string DescribeAiCpuDtypes(const Trace& trace, std::span<const uint32_t> slow_rows) {
  std::map<std::tuple<std::string_view, std::string_view, std::string_view>, AiCpuSignatureGroup> groups;
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  for (const uint32_t r : slow_rows) {
    const NpuOpRow& row = rows[r];
    const std::string_view type = trace.str(row.type).empty() ? trace.str(row.name) : trace.str(row.type);
    const std::string_view in = trace.str(row.input_data_types), out = trace.str(row.output_data_types);
    if (DtypeSignature(in, out) == "dtypes not recorded") continue;
    AiCpuSignatureGroup& g = groups[{type, in, out}];
    g = {type, in, out, g.count + 1, g.time_ns + row.dur_ns};
  }
  std::vector<AiCpuSignatureGroup> sorted;
  for (const auto& entry : groups) sorted.push_back(entry.second);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.time_ns > b.time_ns; });
  const AiCoreDtypes ai_core(trace);
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < kAiCpuListedSignatures; ++i) {
    text += (i ? "; " : "") + DescribeAiCpuSignature(trace, ai_core, sorted[i]);
  }
  if (sorted.size() > kAiCpuListedSignatures) {
    text += fmt::format("; and {} more signatures", sorted.size() - kAiCpuListedSignatures);
  }
  return text;
}

// The guide-table rows the slow AI CPU calls match, per operator type and row, longest first.
std::string ListAiCpuGuides(const Trace& trace, std::span<const uint32_t> slow_rows) {
  std::map<std::pair<std::string_view, const AiCpuGuide*>, std::pair<uint64_t, int64_t>> matched;
  const std::vector<NpuOpRow>& rows = trace.kernel_details().rows;
  for (const uint32_t r : slow_rows) {
    const NpuOpRow& row = rows[r];
    const std::string_view type = trace.str(row.type).empty() ? trace.str(row.name) : trace.str(row.type);
    const AiCpuGuide* guide = AiCpuGuideFor(type, trace.str(row.input_data_types));
    if (guide == nullptr) continue;
    auto& [count, time] = matched[{type, guide}];
    ++count;
    time += row.dur_ns;
  }
  std::vector<std::pair<std::pair<std::string_view, const AiCpuGuide*>, std::pair<uint64_t, int64_t>>> sorted(
      matched.begin(), matched.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::string text;
  for (const auto& [key, figures] : sorted) {
    text += fmt::format("{}{} x{} ({}), made by {}: {}", text.empty() ? "" : "; ", key.first, figures.first,
                        FormatDuration(static_cast<double>(figures.second)), key.second->made_by, key.second->guide);
  }
  return text;
}

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
  if (std::string dtypes = DescribeAiCpuDtypes(trace, evidence); !dtypes.empty()) {
    f.AddText("ai_core_dtypes", std::move(dtypes));
  }
  if (std::string guides = ListAiCpuGuides(trace, evidence); !guides.empty()) {
    f.AddText("operator_guides", std::move(guides));
  }
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
  std::set<size_t> float64_at;  // the input places holding them
  std::set<size_t> int64_at;
};

// The input places of a ';'-separated list that hold a float64 and an int64 dtype.
void WideInputPlaces(std::string_view types, WideInputs* w) {
  const std::vector<std::string_view> dtypes = SplitDtypes(types);
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const std::string_view wide = WideType(dtypes[i]);
    if (wide == "float64") w->float64_at.insert(i);
    if (wide == "int64") w->int64_at.insert(i);
  }
}

// The torch name of a narrower AI Core dtype a wide input can be cast to; "" for other dtypes.
std::string_view NarrowTorchType(std::string_view dtype, bool float64) {
  if (dtype.starts_with("DT_")) dtype.remove_prefix(3);
  if (float64) {
    return dtype == "FLOAT" ? "float32" : dtype == "FLOAT16" ? "float16" : dtype == "BF16" ? "bfloat16" : "";
  }
  return dtype == "INT32" ? "int32" : "";
}

// What the AI Core calls of `type` take where its AI CPU calls have float64 (or int64) inputs: the wide
// dtype itself (then it is not the cause), narrower ones to cast to, or nothing that says.
std::string WideOnAiCore(const Trace& trace, const AiCoreDtypes& ai_core, std::string_view type,
                         const std::set<size_t>& places, bool float64) {
  const std::string_view wide = float64 ? "float64" : "int64";
  std::map<std::string_view, uint64_t> narrow;  // AI Core dtype -> calls (the most at any of the places)
  uint64_t wide_calls = 0;
  for (const size_t place : places) {
    for (const auto& [dtype, calls] : ai_core.InputsAt(type, place)) {
      if (WideType(dtype) == wide) wide_calls = std::max(wide_calls, calls);
      if (!NarrowTorchType(dtype, float64).empty()) narrow[dtype] = std::max(narrow[dtype], calls);
    }
  }
  if (wide_calls > 0) {
    return fmt::format(
        "{} runs on the AI Core with {} at the same inputs in this run ({} call{}): {} is not what "
        "sent it to the AI CPU",
        type, wide, wide_calls, wide_calls == 1 ? "" : "s", wide);
  }
  if (narrow.empty()) {
    return fmt::format("the AI Core's {} takes no narrower {} type at those inputs in this run: {} is a guess: {}",
                       type, float64 ? "floating" : "integer", float64 ? "float32" : "int32",
                       AiCpuDtypeCheckHint(trace, type));
  }
  std::vector<std::pair<std::string_view, uint64_t>> sorted(narrow.begin(), narrow.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string seen;
  for (const auto& [dtype, calls] : sorted) {
    seen += fmt::format("{}{} ({} call{})", seen.empty() ? "" : ", ", dtype, calls, calls == 1 ? "" : "s");
  }
  const bool has_float32 = narrow.contains("FLOAT");
  return fmt::format("{} runs on the AI Core with {} in place of its {} inputs in this run: cast them to {}", type,
                     seen, wide, has_float32 ? "float32" : NarrowTorchType(sorted.front().first, float64));
}

// Per listed type, what the run's AI Core calls of it say of its float64 / int64 inputs.
std::string WideTypesOnAiCore(const Trace& trace, const std::vector<std::pair<std::string_view, WideInputs>>& sorted) {
  const AiCoreDtypes ai_core(trace);
  std::string text;
  for (size_t i = 0; i < sorted.size() && i < kListedTypes; ++i) {
    const auto& [type, w] = sorted[i];
    std::string said;
    if (ai_core.Calls(type) == 0) {
      said = fmt::format("{}: no {} runs on the AI Core in this run, so {} is a guess: {}", type, type,
                         w.float64 && w.int64 ? "float32 / int32"
                         : w.float64          ? "float32"
                                              : "int32",
                         AiCpuDtypeCheckHint(trace, type));
    } else {
      if (w.float64) said = WideOnAiCore(trace, ai_core, type, w.float64_at, true);
      if (w.int64) said += (said.empty() ? "" : "; ") + WideOnAiCore(trace, ai_core, type, w.int64_at, false);
    }
    text += (i ? "; " : "") + said;
  }
  return text;
}

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
    WideInputPlaces(trace.str(row.input_data_types), &w);
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
  f.AddText("ai_core_evidence", WideTypesOnAiCore(trace, sorted));
  SayModulesOfRows(rank, evidence, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof

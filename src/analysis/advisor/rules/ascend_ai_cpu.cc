// compute.ai_cpu_ops (msprof-analyze AICPU check): Ascend operators that ran on the AI CPU instead of
// the AI Core, with tasks of at least 20 us. AI CPU operators are slow and break the device pipeline
// (often float64, int64 index ops or unsupported dtypes). Gain: unknown from the trace alone (the AI
// Core time of a replacement is not measured), so 0 and said so.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {

void RuleAscendAiCpu(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  const int64_t min_ns = static_cast<int64_t>(config.Get(threshold::kAiCpuTaskUs) * 1e3);
  std::map<std::string_view, std::pair<uint64_t, int64_t>> slow;  // by type: count, total
  double total = 0;
  for (const NpuOpRow& row : trace.kernel_details().rows) {
    if (trace.str(row.accelerator_core) != "AI_CPU" || row.dur_ns < min_ns) continue;
    const std::string_view type = trace.str(row.type).empty() ? trace.str(row.name) : trace.str(row.type);
    auto& [count, time] = slow[type];
    ++count;
    time += row.dur_ns;
    total += static_cast<double>(row.dur_ns);
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
  Finding f;
  f.id = "compute.ai_cpu_ops";
  f.category = FindingCategory::kCompute;
  f.title = fmt::format("{} AI CPU tasks of at least {:.0f} us ({} in all)", count, config.Get(threshold::kAiCpuTaskUs),
                        FormatDuration(total));
  f.metric = "kernel_details rows with Accelerator Core AI_CPU and duration >= threshold";
  f.value = static_cast<double>(count);
  f.threshold = config.Get(threshold::kAiCpuTaskUs);
  f.unit = "count";
  f.saves_from = TimePart::kComputeBound;
  f.gain_model = "unknown: the AI Core time of the replacement operators is not in the trace";
  f.AddNumber("ai_cpu_tasks", static_cast<double>(count), "count");
  f.AddNumber("ai_cpu_us", total / 1e3, "us");
  f.AddText("top_types", types);
  f.strategy =
      "Keep these operators on the AI Core: use supported dtypes (float32/float16 instead of float64, "
      "int32 instead of int64 where possible) and replace index/nonzero-style operators with masked forms.";
  f.apis = {"tensor.float() instead of .double(); torch_npu operator whitelist for the CANN version"};
  out->push_back(std::move(f));
}

}  // namespace tuneprof

#include "report/console/profile_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/json_writer.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"
#include "report/console/module_report.h"
#include "report/console/profile_report_sections.h"
#include "report/console/warnings_json.h"

namespace tuneprof {
namespace {

// This file puts the sections together: their names read as they are.
using namespace profile_sections;

// Where the stages bound the step, a late rank's arrival is its stage's pipeline wait: the stages' what-if
// (stages balanced) stands for it, and a per-rank on-time gain from the collectives would count it again.
bool StagesBound(const ProfileResult& result) { return result.pipeline_path && !result.pipeline_path->empty(); }

void AppendRankText(const RankBreakdown& rank, const HtaRankBreakdown* hta, const RankComputeUnits* compute,
                    const KernelBreakdown* kernels, const TimeSplit* split, bool wide, std::string* out) {
  *out += fmt::format("rank {}: {}\n", rank.rank, EscapeText(rank.path));
  if (rank.work_on == WorkSource::kCpu) {
    // With gloo, the step's thread inside c10d:: calls waits for the workers' collectives (cpu_work.h).
    *out += fmt::format("  no device work: {} CPU events (host operators = compute, gloo ranges{} = comm)",
                        rank.device_events, rank.total.communication_ns > 0 ? " and the calls waiting on them" : "");
  } else {
    *out += fmt::format("  {} device events on {} device(s), {} definitions", rank.device_events, rank.device_count,
                        StepDefinitionsName(rank.definitions));
  }
  if (rank.device_events_outside_steps > 0) {
    // The kernel tables below are of the whole trace, as HTA's kernel breakdown is: said here, so that
    // their totals are not read against the step rows.
    *out += fmt::format(
        ", {} outside every ProfilerStep (not in the step rows; in the kernel tables, which are "
        "of the whole trace)",
        rank.device_events_outside_steps);
  }
  *out += "\n";
  AppendStepTable(rank.steps, rank.total, out);
  if (!rank.incomplete_steps.empty()) {
    std::string numbers;
    for (const StepBreakdown& s : rank.incomplete_steps) numbers += fmt::format(" {}", s.step.value_or(0));
    *out += fmt::format("  incomplete (trace cut off; not shown, not in the total): step{}{}\n",
                        rank.incomplete_steps.size() > 1 ? "s" : "", numbers);
  }
  if (split != nullptr) AppendComputingSplitText(*split, out);
  if (rank.definitions == StepDefinitions::kTorchNpu) {
    AppendTorchNpuTable(rank.steps, out);
  } else if (rank.total.bubble_ns > 0) {
    AppendGpuBubbleTable(rank.steps, rank.total, out);
  }
  // CPU work has no launches: only the per-thread gaps would be left, and they say little there.
  // A torch_npu rank read from its summaries has no launches or streams: the host side is unknown, not 0.
  const bool summaries_only = rank.definitions == StepDefinitions::kTorchNpu && rank.device_events == 0;
  if (summaries_only && !rank.steps.empty()) {
    *out +=
        "host side: unknown: no timeline to measure it on (the rank's warning says whether it is missing or "
        "cut off, and how to get it); memcpy and other are inside free\n";
  } else if (rank.work_on == WorkSource::kDevice) {
    AppendHostTable(rank.steps, rank.total, out);
  }
  for (const DeviceTimeBreakdown& device : rank.devices) {
    *out += fmt::format("  {}:\n", DeviceLabel(device));
    AppendStepTable(device.steps, device.total, out);
  }
  if (compute) AppendComputeText(*compute, rank.definitions == StepDefinitions::kTorchNpu, out);
  if (kernels) AppendKernelText(*kernels, wide, out);
  if (hta) AppendHtaText(*hta, out);
}

// `profile --by module`: each rank's modules and repeated layers, nothing else.
std::string RenderModuleText(const ProfileResult& result, bool wide_names) {
  std::string out;
  out += "modules: nn.Module ranges (with_modules=True), record_function, NVTX and mstx ranges; path = the\n";
  out += "ranges open on the thread when it starts; device = work launched inside (children included), fwd\n";
  out += "and bwd = launched by its forward and by their backward (fwdbwd flows), self = launched with it the\n";
  out += "innermost module; share = of the device work \"by work type\" counts (sums of durations, syncs and\n";
  out += "waits out; without device work: of the root modules' host time); repeated layers: siblings of one\n";
  out += "class rolled up (Class_*), outlier = the member furthest from the mean\n";
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    out += fmt::format("rank {}: {}\n", result.ranks[i].rank, EscapeText(result.ranks[i].path));
    AppendModuleViewText(i < result.modules.size() ? result.modules[i] : ModuleView(), wide_names, &out);
  }
  return EscapeTextKeepingLines(out);
}

}  // namespace

std::string RenderProfileText(const ProfileResult& result, bool wide_names) {
  if (result.by_module) return RenderModuleText(result, wide_names);
  std::string out;
  out += "times in ms; comm = communication, exposed = comm not overlapped by compute, memcpy = copies\n";
  out += "not hidden under compute/comm, other = syncs, free = no device work; host step = the ProfilerStep\n";
  out += "range on the host; span = first to last device work of the step (the parts add up to it); the\n";
  const bool any_npu = std::any_of(result.ranks.begin(), result.ranks.end(),
                                   [](const RankBreakdown& r) { return r.definitions == StepDefinitions::kTorchNpu; });
  const bool any_other = std::any_of(result.ranks.begin(), result.ranks.end(), [](const RankBreakdown& r) {
    return r.definitions != StepDefinitions::kTorchNpu;
  });
  // torch_npu ranks keep torch_npu's own step, as analyze, advise and compare time it.
  out += !any_npu    ? "step analyze, advise and compare time is the longer of the two;\n"
         : any_other ? "step analyze, advise and compare time is the longer of the two (torch_npu ranks: the\n"
                       "span, torch_npu's own step: Stage + Bubble);\n"
                     : "step analyze, advise and compare time is the span, torch_npu's own step: Stage + Bubble\n"
                       "(Bubble 0 off pipelines);\n";
  out += "host side: wait = device idle until the host launched (waits = how often), launch = mean\n";
  out += "launch-to-start latency, gaps = idle between work on each stream, queue = launched but unfinished\n";
  out += "work (max, time-weighted mean)";
  if (any_other) {
    out += "; compute: busy = any kernel running, SM eff and occup. = the\n";
    out += "TensorBoard plugin's estimates from launch configs, TC share = kernel time named tensor-core";
  }
  if (any_npu) {
    out += any_other ? ";\nAscend compute" : "; compute";
    out += ": Cube / Vector / Scalar = the AI Core pipes' busy ratios from kernel_details (PMU)";
  }
  out += "\n";
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    AppendRankText(result.ranks[i], i < result.hta.size() ? &result.hta[i] : nullptr,
                   i < result.compute.size() ? &result.compute[i] : nullptr,
                   i < result.kernels.size() ? &result.kernels[i] : nullptr,
                   i < result.splits.size() ? &result.splits[i] : nullptr, wide_names, &out);
    if (i < result.modules.size()) AppendTopModulesText(result.modules[i], wide_names, &out);
    if (i < result.moe.size() && result.moe[i].found()) AppendMoeText(result.moe[i], &out);
    if (i < result.hta.size()) AppendHtaExtrasText(result, i, &out);
  }
  if (result.critical_path) {
    AppendCriticalPathText(*result.critical_path, result.pipeline_path.has_value(), StagesBound(result), &out);
  }
  if (result.pipeline_path) AppendPipelinePathText(*result.pipeline_path, &out);
  return EscapeTextKeepingLines(out);
}

void WriteProfileJson(const ProfileResult& result, const std::vector<std::string>& warnings, JsonWriter* writer) {
  JsonWriter& w = *writer;
  w.BeginObject().Key("schema").String("tuneprof.profile/1");
  w.Key("semantics").String(result.hta_semantics ? "hta" : "tuneprof");
  w.Key("ranks").BeginArray();
  for (size_t i = 0; i < result.ranks.size(); ++i) {
    const RankBreakdown& rank = result.ranks[i];
    w.BeginObject().Key("rank").Int(rank.rank).Key("path").String(rank.path);
    w.Key("definitions").String(StepDefinitionsName(rank.definitions));
    w.Key("work_on").String(WorkSourceName(rank.work_on));
    w.Key("device_events").Uint(rank.device_events);
    w.Key("device_events_outside_steps").Uint(rank.device_events_outside_steps);
    w.Key("device_count").Uint(rank.device_count);
    WriteStepsJson(rank.steps, rank.incomplete_steps, rank.total, rank.definitions, &w);
    if (i < result.splits.size()) WriteComputingSplitJson(result.splits[i], &w);
    w.Key("devices").BeginArray();
    for (const DeviceTimeBreakdown& device : rank.devices) WriteDeviceJson(device, &w);
    w.EndArray();
    if (i < result.compute.size()) {
      w.Key("compute");
      WriteComputeJson(result.compute[i], &w);
    }
    if (i < result.kernels.size()) WriteKernelsJson(result.kernels[i], &w);
    if (i < result.moe.size() && result.moe[i].found()) WriteMoeJson(result.moe[i], &w);
    if (result.by_module) WriteModuleViewJson(i < result.modules.size() ? result.modules[i] : ModuleView(), &w);
    if (i < result.hta.size()) {
      w.Key("hta");
      WriteHtaJson(result.hta[i], &w, [&] { WriteHtaExtrasJson(result, i, &w); });
    }
    w.EndObject();
  }
  w.EndArray();
  if (result.hta_semantics) {  // HTA's own table: the kernel types summed over all ranks
    w.Key("hta_all_ranks").BeginObject().Key("kernel_type_breakdown");
    WriteKernelTypesJson(result.hta_kernels.types, &w);
    w.EndObject();
  }
  if (result.critical_path) WriteCriticalPathJson(*result.critical_path, StagesBound(result), &w);
  if (result.pipeline_path) WritePipelinePathJson(*result.pipeline_path, &w);
  WriteWarnings(warnings, &w);
  w.EndObject();
}

std::string RenderProfileJson(const ProfileResult& result, const std::vector<std::string>& warnings) {
  return JsonDocument([&](JsonWriter& w) { WriteProfileJson(result, warnings, &w); });
}

}  // namespace tuneprof

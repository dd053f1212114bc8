#pragma once
#include <optional>
// The sections `tuneprof profile` renders, one file each by concern (profile_*.cc): each section's text and
// JSON writer. Private to report/console; profile_report.h is the interface.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/json_writer.h"
#include "report/console/profile_report.h"

namespace tuneprof::profile_sections {

// ---- a rank's steps (profile_steps.cc)

std::string DeviceLabel(const DeviceTimeBreakdown& device);
void AppendStepTable(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, std::string* out);
void AppendHostTable(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, std::string* out);
void AppendGpuBubbleTable(const std::vector<StepBreakdown>& steps, const StepBreakdown& total, std::string* out);
void AppendTorchNpuTable(const std::vector<StepBreakdown>& steps, std::string* out);
void AppendHtaText(const HtaRankBreakdown& hta, std::string* out);
void AppendComputingSplitText(const TimeSplit& split, std::string* out);
void WriteComputingSplitJson(const TimeSplit& split, JsonWriter* w);
// With the rank's definitions, each step and the total also carry `step_us`, the step every command times.
void WriteStepsJson(const std::vector<StepBreakdown>& steps, const std::vector<StepBreakdown>& incomplete,
                    const StepBreakdown& total, std::optional<StepDefinitions> definitions, JsonWriter* w);
void WriteDeviceJson(const DeviceTimeBreakdown& device, JsonWriter* w);
// HTA's temporal breakdown; `extras` writes the rank's further HTA keys inside the same object.
void WriteHtaJson(const HtaRankBreakdown& hta, JsonWriter* w, const std::function<void()>& extras);

// ---- compute units and MoE load (profile_compute.cc)

void AppendComputeText(const RankComputeUnits& c, bool npu, std::string* out);
void WriteComputeJson(const RankComputeUnits& c, JsonWriter* w);
void AppendMoeText(const RankMoeLoad& moe, std::string* out);
void WriteMoeJson(const RankMoeLoad& moe, JsonWriter* w);

// ---- kernel / operator tables and HTA's extras (profile_kernels.cc)

void AppendKernelText(const KernelBreakdown& k, bool wide, std::string* out);
void AppendHtaExtrasText(const ProfileResult& result, size_t rank_index, std::string* out);
void WriteKernelsJson(const KernelBreakdown& k, JsonWriter* w);
void WriteKernelTypesJson(const std::vector<HtaKernelTypeShare>& types, JsonWriter* w);
void WriteHtaExtrasJson(const ProfileResult& result, size_t rank_index, JsonWriter* w);

// ---- --critical-path (profile_critical_path.cc)

void AppendCriticalPathText(const std::vector<CriticalPathStep>& steps, bool pipeline, bool stages_bound,
                            std::string* out);
void AppendPipelinePathText(const std::vector<PipelinePathStep>& steps, std::string* out);
void WritePipelinePathJson(const std::vector<PipelinePathStep>& steps, JsonWriter* w);
void WriteCriticalPathJson(const std::vector<CriticalPathStep>& steps, bool stages_bound, JsonWriter* w);

}  // namespace tuneprof::profile_sections

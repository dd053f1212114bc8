#pragma once
// Renders `tuneprof memory`: terminal tables (at most 100 columns) or one JSON document (schema
// tuneprof.memory/1: ranks[] -> devices[] with peaks, holders, waste, opportunities and copy traffic).
#include <optional>
#include <string>
#include <vector>

#include "analysis/hta/memory_hta_bw.h"
#include "analysis/memory/memory_timeline.h"

namespace tuneprof {

std::string RenderMemoryText(const std::vector<MemoryAnalysis>& ranks);
// `hta`: HTA's memory_bw_summary over all ranks (analysis/hta/memory_hta_bw.h), written beside ranks[].
std::string RenderMemoryJson(const std::vector<MemoryAnalysis>& ranks, const std::vector<HtaMemoryBwRow>& hta);

// The bandwidth of device-memory traffic (D2D copies and memsets) against the chip's memory peak,
// 0..1; nullopt when the peak or the traffic is unknown.
std::optional<double> DeviceMemoryUtilization(const DeviceMemory& device);

}  // namespace tuneprof

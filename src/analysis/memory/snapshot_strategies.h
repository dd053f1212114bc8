#pragma once
// What to try against a snapshot's memory, following what holds it: the category that holds most of the
// peak (activations, optimizer state, parameters, gradients), fragmentation inside the segments, and
// blocks that are never freed and grow per iteration.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/memory/snapshot_analysis.h"

namespace tuneprof {

// A category is worth a strategy from this share of the peak on; fragmentation from this share of the
// reserved bytes at the dump.
inline constexpr double kStrategyMinShare = 0.10;
inline constexpr double kFragmentationMinShare = 0.05;

// The strategies for one device: for the categories, the one that holds most of the peak first; then
// fragmentation and leak suspects by estimated saving. `npu`: an Ascend snapshot, whose allocator reads
// PYTORCH_NPU_ALLOC_CONF; `expandable`: expandable segments already on.
std::vector<SnapshotStrategy> SnapshotStrategies(const SnapshotDeviceMemory& device, bool npu, bool expandable);

}  // namespace tuneprof

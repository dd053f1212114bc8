#pragma once
// Renders `tuneprof memory SNAPSHOT.pickle`: a terminal summary per device (at most 100 columns) or one
// JSON document (schema tuneprof.memory_snapshot/1, docs/json/memory.md).
#include <string>

#include "analysis/memory/snapshot_analysis.h"

namespace tuneprof {

std::string RenderSnapshotText(const SnapshotAnalysis& analysis);
std::string RenderSnapshotJson(const SnapshotAnalysis& analysis);

}  // namespace tuneprof

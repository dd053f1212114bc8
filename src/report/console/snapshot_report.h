#pragma once
// Renders `tuneprof memory SNAPSHOT.pickle`: a terminal summary per device (at most 100 columns) or one
// JSON document (schema tuneprof.memory_snapshot/1, docs/json/memory.md).
#include <string>
#include <vector>

#include "analysis/memory/snapshot_analysis.h"
#include "base/json_writer.h"

namespace tuneprof {

std::string RenderSnapshotText(const SnapshotAnalysis& analysis);
std::string RenderSnapshotJson(const SnapshotAnalysis& analysis);

// The strategies as the snapshot output lists them (text: indented under a heading; JSON: an array),
// for the other outputs that give them.
void AppendSnapshotStrategies(const std::vector<SnapshotStrategy>& strategies, std::string* out);
void WriteSnapshotStrategies(JsonWriter& w, const std::vector<SnapshotStrategy>& strategies);

}  // namespace tuneprof

#pragma once
// Every command's --json carries the same top-level "warnings" array: what the input lacked and what
// was left out of it (files skipped, cut-off traces, rows or events dropped, incomplete steps), the
// lines also written to stderr. Added here once rather than by each renderer.
#include <string>
#include <vector>

#include "base/json_writer.h"

namespace tuneprof {

// Writes "warnings" (possibly empty) as the next key of the open object: what WithWarnings adds, for a
// document written piece by piece.
void WriteWarnings(const std::vector<std::string>& warnings, JsonWriter* w);

// `json` is one rendered JSON object; returns it with "warnings" (possibly empty) as its last key.
std::string WithWarnings(std::string json, const std::vector<std::string>& warnings);

}  // namespace tuneprof

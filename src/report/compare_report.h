#pragma once
// Renders `tuneprof compare`: the before/after table with each change's verdict (≤ 100 columns), the
// statistics behind the step-time verdict, the per-operator diff and the CI gate's outcome; or one JSON
// document (schema tuneprof.compare/1; `metrics` entries and `ops[]` fields are a contract checked from
// outside).
#include <span>
#include <string>

#include "analysis/compare.h"

namespace tuneprof {

constexpr size_t kCompareTextOps = 15;  // operator lines in the terminal table

std::string RenderCompareText(const CompareResult& result, std::span<const GateOutcome> gates);
std::string RenderCompareJson(const CompareResult& result, std::span<const GateOutcome> gates);

}  // namespace tuneprof

#pragma once
// Renders `tuneprof compare`: the before/after table with each change's verdict (≤ 100 columns), the
// statistics behind the step-time verdict, the per-operator diff and the CI gate's outcome; or one JSON
// document (schema tuneprof.compare/1; `metrics` entries and `ops[]` fields are a contract checked from
// outside); or GitHub Markdown for a PR comment (the case-study table, the top operators, categories).
// `advice`: the --advice checks (advice_check.h), empty when not asked for.
#include <span>
#include <string>

#include "analysis/compare/advice_check.h"
#include "analysis/compare/compare.h"

namespace tuneprof {

constexpr size_t kCompareTextOps = 15;  // operator lines in the terminal table

std::string RenderCompareText(const CompareResult& result, std::span<const GateOutcome> gates,
                              std::span<const AdviceCheck> advice = {});
// `advice_given`: whether --advice was passed (`advice` is null in the JSON otherwise).
std::string RenderCompareJson(const CompareResult& result, std::span<const GateOutcome> gates,
                              std::span<const AdviceCheck> advice = {}, bool advice_given = false);
std::string RenderCompareMarkdown(const CompareResult& result, std::span<const GateOutcome> gates,
                                  std::span<const AdviceCheck> advice = {});

}  // namespace tuneprof

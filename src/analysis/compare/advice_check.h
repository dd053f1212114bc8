#pragma once
// Predicted vs measured: `compare --advice BEFORE_ADVICE.json` reads the findings `advise --json` gave
// for the before side and puts next to each estimated gain the measured change of its evidence.
//
// What is measured, per finding (per step, after - before; negative = time saved):
// - a finding whose evidence names operators (`example`: "aten::matmul -> aten::div -> ...", at the
//   evidence's `level`: host operators or kernels): the time of those operators on each side, every
//   occurrence, outermost only (operator_diff.h OutermostOperators: an operator inside another named
//   one is not counted again). For fusion.* findings the operators that only the after side has and
//   that do the named operators' kind of work (their categories, operator_diff.h; attention too for
//   fusion.attention) count on the after side too, since a fusion replaces the named operators by new
//   ones (SDPA for hand-written attention). Unknown when a side has no operators at that level
//   (kernels against a CPU-only trace).
// - any other finding: the part of the step it saves time from (`saves_from`, the advisor's time
//   split, time_split.h) on the slowest rank of each side. Unknown when the part is not one the
//   advisor knows or a side was not analysed.
// The step time's change is shown beside every finding, and whether the after side still fires it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor/advisor.h"
#include "analysis/compare/operator_diff.h"
#include "base/status.h"
#include "model/trace.h"

namespace tuneprof {

struct PredictedFinding {
  std::string id;
  std::string category;
  std::optional<double> estimated_gain_us;  // per step, as in the file
  std::string saves_from;                   // TimePartName, "" when absent
  std::string level;                        // evidence "level": "host operators", "kernels" or ""
  std::vector<std::string> named_ops;       // evidence "example", split at " -> "
};

// Parses `advise --json` output (schema tuneprof.advise/*); errors name `origin`.
Result<std::vector<PredictedFinding>> ParseAdviceJson(std::string_view json, std::string_view origin);

struct AdviceSide {
  const Trace* trace = nullptr;  // the first rank (operators are compared there, compare.h)
  const AdvisorResult* advice = nullptr;
};

struct AdviceCheck {
  PredictedFinding finding;
  std::string measured_as;          // "operators: a, b (+ after only: c)" or "step part: memory_bound"
  std::optional<double> before_us;  // per step; nullopt: unknown
  std::optional<double> after_us;
  std::string unknown_reason;  // when before_us or after_us is unknown
  bool fires_after = false;    // the after side's advisor reports the same id
  std::optional<double> estimated_gain_after_us;

  std::optional<double> change_us() const {
    if (!before_us || !after_us) return std::nullopt;
    return *after_us - *before_us;
  }
};

std::vector<AdviceCheck> CheckAdvice(const std::vector<PredictedFinding>& findings, const AdviceSide& before,
                                     const AdviceSide& after);

}  // namespace tuneprof

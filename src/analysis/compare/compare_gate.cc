// `--fail-if`: a gate condition parsed from its text and evaluated on a comparison.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "analysis/compare/compare.h"

namespace tuneprof {
namespace {

std::string_view ResolveMetricName(std::string_view name) {
  if (name == "step_time") return "step_time_us";
  if (name == "ttft") return "ttft_us";
  if (name == "tpot") return "tpot_us";
  if (name == "peak_memory") return "peak_allocated_bytes";
  if (name == "peak_reserved") return "peak_reserved_bytes";
  return name;
}

const MetricComparison* FindGateMetric(const CompareResult& result, std::string_view metric) {
  if (metric == "throughput") {
    for (std::string_view key : {"throughput_tokens_per_s", "throughput_samples_per_s", "decode_tokens_per_s"}) {
      if (const MetricComparison* found = result.Find(key)) return found;
    }
    return nullptr;
  }
  return result.Find(ResolveMetricName(metric));
}

std::string_view TrimBlanks(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

Status GateUsage(const std::string& text, std::string_view why) {
  return Status(StatusCode::kUsage, "--fail-if \"" + text + "\": " + std::string(why));
}

// The limit of a gate: a finite percentage with its '%' (every gated metric is a relative change, so a
// bare number would leave the reader guessing whether 3 means 3 % or 300 %). NaN never compares true
// and an infinite limit is never crossed: either would make a gate that cannot fire.
Result<double> ParseGatePercent(const std::string& text, std::string_view limit) {
  limit = TrimBlanks(limit);
  if (!limit.ends_with('%')) {
    return GateUsage(text, fmt::format("\"{}\" has no '%'; the limit is a relative change, e.g. +3%", limit));
  }
  std::string_view number = TrimBlanks(limit.substr(0, limit.size() - 1));
  // One sign at most: "+-3%" reads as neither +3 % nor -3 %.
  if (number.starts_with('+') && !number.substr(1).starts_with('-')) number.remove_prefix(1);
  double pct = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), pct);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() || !std::isfinite(pct)) {
    return GateUsage(text, fmt::format("\"{}\" is not a finite percentage", limit));
  }
  return pct;
}

}  // namespace

Result<GateCondition> ParseGateCondition(std::string_view text) {
  GateCondition condition;
  condition.text = std::string(text);
  const size_t op = text.find_first_of("<>");
  const std::string_view metric = op == std::string_view::npos ? text : TrimBlanks(text.substr(0, op));
  if (op == std::string_view::npos || metric.empty()) {
    return GateUsage(condition.text, "expected METRIC>+PCT% or METRIC<-PCT%");
  }
  condition.metric = std::string(metric);
  const std::vector<std::string_view>& known = GateMetricNames();
  if (std::find(known.begin(), known.end(), condition.metric) == known.end()) {
    std::string names;
    for (std::string_view name : known) names += (names.empty() ? "" : ", ") + std::string(name);
    return GateUsage(condition.text, "unknown metric \"" + condition.metric + "\"; one of " + names);
  }
  condition.above = text[op] == '>';
  if (text.substr(op + 1).starts_with('=')) {
    return GateUsage(condition.text, std::string(1, text[op]) + "= is not a comparison a gate makes; use > or <");
  }
  TP_ASSIGN_OR_RETURN(condition.pct, ParseGatePercent(condition.text, text.substr(op + 1)));
  return condition;
}

GateOutcome EvaluateGate(const CompareResult& result, const GateCondition& condition) {
  GateOutcome outcome;
  outcome.condition = condition;
  const MetricComparison* metric = FindGateMetric(result, condition.metric);
  if (metric == nullptr) return outcome;
  outcome.metric_key = metric->key;
  outcome.delta_pct = metric->delta_pct;
  outcome.significant = metric->significant;
  if (!metric->delta_pct) return outcome;
  outcome.evaluated = true;
  const bool passes = condition.above ? *metric->delta_pct > condition.pct : *metric->delta_pct < condition.pct;
  outcome.fired = passes && metric->significant;
  return outcome;
}

}  // namespace tuneprof

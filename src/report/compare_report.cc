#include "report/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/json_writer.h"

namespace tuneprof {

namespace {

constexpr size_t kNameColumn = 46;

// "1,234,567.8": thousands grouped so that big numbers stay readable in a narrow column.
std::string Grouped(double value, int decimals) {
  const std::string digits = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const size_t integer_end = std::min(digits.find('.'), digits.size());
  std::string grouped = value < 0 && std::fabs(value) >= 0.5 * std::pow(10, -decimals) ? "-" : "";
  for (size_t i = 0; i < integer_end; ++i) {
    if (i > 0 && (integer_end - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  grouped.append(digits, integer_end, std::string::npos);
  return grouped;
}

std::string ValueCell(std::optional<double> value, const std::string& unit) {
  if (!value) return "unknown";
  return Grouped(*value, unit == "bytes" ? 0 : 1);
}

std::string PercentCell(std::optional<double> pct) {
  return pct ? fmt::format("{:+.1f}%", *pct) : std::string("unknown");
}

std::string Label(const MetricComparison& metric) {
  return metric.key;
}

bool IsBetter(const MetricComparison& metric) {
  return metric.delta && ((metric.better == Better::kLower) == (*metric.delta < 0));
}

std::string Verdict(const MetricComparison& metric) {
  if (metric.test == "unknown") return "unknown";
  if (metric.test == "not_tested") return "(not tested)";
  if (metric.test == "too_few_samples") {
    const SampleComparison& s = *metric.samples;
    return fmt::format("sample too small (n={}/{})", s.before ? s.before->count : 0, s.after ? s.after->count : 0);
  }
  if (metric.test == "exact" && !metric.significant) return "unchanged (exact)";
  if (!metric.significant) {
    return metric.samples && metric.samples->small_sample ? "no significant change (small n)" : "no significant change";
  }
  std::string verdict = IsBetter(metric) ? "better" : "worse";
  if (metric.test == "exact") return verdict + " (exact)";
  if (metric.samples && metric.samples->rank_test) {
    verdict += fmt::format(" (p={:.2g}{})", metric.samples->rank_test->p_value,
                           metric.samples->small_sample ? ", small n" : "");
  }
  return verdict;
}

std::string Shortened(std::string_view name, size_t width) {
  if (name.size() <= width) return std::string(name);
  return std::string(name.substr(0, width - 3)) + "...";
}

void AppendSide(std::string_view label, const CompareSide& side, std::string* out) {
  std::string paths;
  for (const std::string& path : side.paths) paths += (paths.empty() ? "" : ", ") + path;
  const std::string steps = side.has_steps ? fmt::format("{} step{}", side.step_ns.size(),
                                                         side.step_ns.size() == 1 ? "" : "s")
                                           : std::string("no steps: one window");
  *out += fmt::format("{:<7}{} ({} rank{}, {}, {} work)\n", label, Shortened(paths, 60), side.ranks,
                      side.ranks == 1 ? "" : "s", steps, WorkSourceName(side.work_on));
}

void AppendMetricTable(const CompareResult& result, std::string* out) {
  *out += fmt::format("\n{:<26} {:>14} {:>14} {:>8}  {}\n", "metric", "before", "after", "change", "verdict");
  for (const MetricComparison& metric : result.metrics) {
    *out += fmt::format("{:<26} {:>14} {:>14} {:>8}  {}\n", Shortened(Label(metric), 26),
                        ValueCell(metric.before, metric.unit), ValueCell(metric.after, metric.unit),
                        PercentCell(metric.delta_pct), Verdict(metric));
  }
}

void AppendIntervalLine(std::string_view label, const std::optional<ConfidenceInterval>& ci, std::string* out) {
  if (!ci) return;
  *out += fmt::format("  {} change, {:.0f}% CI: [{}, {}] us (bootstrap, {} resamples)\n", label,
                      ci->confidence * 100, Grouped(ci->low, 1), Grouped(ci->high, 1), ci->resamples);
}

void AppendStepStatistics(const CompareResult& result, std::string* out) {
  const MetricComparison* step = result.Find("step_time_us");
  if (step == nullptr || !step->samples) return;
  const SampleComparison& s = *step->samples;
  *out += fmt::format("\nstep time: n = {} before, {} after; alpha {}\n", s.before ? s.before->count : 0,
                      s.after ? s.after->count : 0, s.alpha);
  if (s.verdict == ChangeVerdict::kTooFewSamples) {
    *out += fmt::format("  sample too small: a side has fewer than {} steps, no test is possible; "
                        "profile more steps\n", kMinSamples);
    return;
  }
  AppendIntervalLine("mean", s.mean_change, out);
  AppendIntervalLine("median", s.median_change, out);
  *out += fmt::format("  Mann-Whitney U = {:.1f}, two-sided p = {:.4g} ({})\n", s.rank_test->u_after,
                      s.rank_test->p_value, s.rank_test->exact ? "exact" : "normal approximation");
  if (s.small_sample) {
    *out += fmt::format("  small sample (<= {} steps a side): read the verdict with care\n", kSmallSample);
  }
  *out += s.verdict == ChangeVerdict::kNoSignificantChange
              ? "  => no significant change\n"
              : fmt::format("  => significant {}\n", s.verdict == ChangeVerdict::kDecrease ? "decrease" : "increase");
}

std::string JoinNames(const std::vector<std::string>& names, size_t width) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : " + ") + name;
  return Shortened(joined, width);
}

void AppendOps(const OperatorDiff& diff, std::string* out) {
  if (diff.ops.empty()) return;
  const std::string window = diff.before_steps == 0 && diff.after_steps == 0
                                 ? std::string("whole traces")
                                 : fmt::format("per step over {} vs {} steps", diff.before_steps, diff.after_steps);
  *out += fmt::format("\noperators ({}, {}), by |time change|:\n", OperatorScopeName(diff.scope), window);
  if (diff.replaced) {
    const ReplacedPattern& r = *diff.replaced;
    *out += fmt::format("replaced: {} ({} us)\n       -> {} (+{} us)\n", JoinNames(r.removed, 70),
                        Grouped(-r.removed_ns / 1000, 1), JoinNames(r.added, 70), Grouped(r.added_ns / 1000, 1));
  }
  *out += fmt::format("{:<9} {:>12} {:>15} {:>13}  {}\n", "change", "delta us", "count", "after us", "name");
  for (size_t i = 0; i < diff.ops.size() && i < kCompareTextOps; ++i) {
    const OperatorDelta& op = diff.ops[i];
    *out += fmt::format("{:<9} {:>12} {:>15} {:>13}  {}\n", OperatorChangeName(op.change),
                        Grouped(op.delta_ns() / 1000, 1),
                        fmt::format("{:g} -> {:g}", op.before_count, op.after_count), Grouped(op.after_ns / 1000, 1),
                        Shortened(op.name, kNameColumn));
  }
  if (diff.ops.size() > kCompareTextOps) {
    *out += fmt::format("... {} more (--json lists all)\n", diff.ops.size() - kCompareTextOps);
  }
}

void AppendGates(std::span<const GateOutcome> gates, std::string* out) {
  if (gates.empty()) return;
  *out += "\ngate:\n";
  for (const GateOutcome& gate : gates) {
    if (!gate.evaluated) {
      *out += fmt::format("  {}: not evaluated ({} unknown)\n", gate.condition.text,
                          gate.metric_key.empty() ? gate.condition.metric : gate.metric_key);
      continue;
    }
    *out += fmt::format("  {}: {} {:+.1f}%, {} -> {}\n", gate.condition.text, gate.metric_key, *gate.delta_pct,
                        gate.significant ? "significant" : "not significant", gate.fired ? "FAIL" : "pass");
  }
}

void NullableDouble(JsonWriter* w, std::optional<double> value) { value ? w->Double(*value) : w->Null(); }

void WriteInterval(std::string_view key, const std::optional<ConfidenceInterval>& ci, JsonWriter* w) {
  w->Key(key);
  if (!ci) {
    w->Null();
    return;
  }
  w->BeginObject().Key("low").Double(ci->low).Key("high").Double(ci->high);
  w->Key("confidence").Double(ci->confidence).Key("resamples").Int(ci->resamples).EndObject();
}

void WriteSamples(const SampleComparison& s, JsonWriter* w) {
  w->BeginObject();
  w->Key("n_before").Uint(s.before ? s.before->count : 0).Key("n_after").Uint(s.after ? s.after->count : 0);
  w->Key("verdict").String(ChangeVerdictName(s.verdict)).Key("small_sample").Bool(s.small_sample);
  w->Key("alpha").Double(s.alpha);
  WriteInterval("mean_change_ci", s.mean_change, w);
  WriteInterval("median_change_ci", s.median_change, w);
  w->Key("mann_whitney");
  if (s.rank_test) {
    w->BeginObject().Key("u").Double(s.rank_test->u_after).Key("p_value").Double(s.rank_test->p_value);
    w->Key("exact").Bool(s.rank_test->exact).EndObject();
  } else {
    w->Null();
  }
  for (const auto& [key, summary] : {std::pair{"before_summary", &s.before}, std::pair{"after_summary", &s.after}}) {
    w->Key(key);
    if (!*summary) {
      w->Null();
      continue;
    }
    const SampleSummary& m = **summary;
    w->BeginObject().Key("mean").Double(m.mean).Key("median").Double(m.median).Key("p95").Double(m.p95);
    w->Key("min").Double(m.min).Key("max").Double(m.max).EndObject();
  }
  w->EndObject();
}

void WriteMetric(const MetricComparison& metric, JsonWriter* w) {
  w->Key(metric.key).BeginObject();
  w->Key("unit").String(metric.unit).Key("better").String(metric.better == Better::kLower ? "lower" : "higher");
  w->Key("before");
  NullableDouble(w, metric.before);
  w->Key("after");
  NullableDouble(w, metric.after);
  w->Key("delta");
  NullableDouble(w, metric.delta);
  w->Key("delta_pct");
  NullableDouble(w, metric.delta_pct);
  w->Key("significant").Bool(metric.significant).Key("test").String(metric.test);
  w->Key("statistics");
  metric.samples ? WriteSamples(*metric.samples, w) : static_cast<void>(w->Null());
  w->EndObject();
}

void WriteSide(std::string_view key, const CompareSide& side, JsonWriter* w) {
  w->Key(key).BeginObject().Key("paths").BeginArray();
  for (const std::string& path : side.paths) w->String(path);
  w->EndArray().Key("ranks").Uint(side.ranks).Key("steps").Uint(side.step_ns.size());
  w->Key("has_steps").Bool(side.has_steps).Key("work_on").String(WorkSourceName(side.work_on));
  w->Key("generation_requests").Uint(side.generation.requests.size()).EndObject();
}

void WriteOps(const OperatorDiff& diff, JsonWriter* w) {
  w->Key("ops_scope").String(OperatorScopeName(diff.scope));
  w->Key("ops_steps").BeginObject().Key("before").Uint(diff.before_steps).Key("after").Uint(diff.after_steps).EndObject();
  w->Key("replaced");
  if (diff.replaced) {
    w->BeginObject().Key("removed").BeginArray();
    for (const std::string& name : diff.replaced->removed) w->String(name);
    w->EndArray().Key("added").BeginArray();
    for (const std::string& name : diff.replaced->added) w->String(name);
    w->EndArray().Key("removed_us").Double(diff.replaced->removed_ns / 1000);
    w->Key("added_us").Double(diff.replaced->added_ns / 1000).EndObject();
  } else {
    w->Null();
  }
  w->Key("ops").BeginArray();
  for (const OperatorDelta& op : diff.ops) {
    w->BeginObject().Key("name").String(op.name).Key("change").String(OperatorChangeName(op.change));
    w->Key("before_count").Double(op.before_count).Key("after_count").Double(op.after_count);
    w->Key("before_us").Double(op.before_ns / 1000).Key("after_us").Double(op.after_ns / 1000);
    w->Key("delta_us").Double(op.delta_ns() / 1000).EndObject();
  }
  w->EndArray();
}

void WriteGates(std::span<const GateOutcome> gates, JsonWriter* w) {
  w->Key("gates").BeginArray();
  for (const GateOutcome& gate : gates) {
    w->BeginObject().Key("condition").String(gate.condition.text).Key("metric");
    gate.metric_key.empty() ? w->Null() : w->String(gate.metric_key);
    w->Key("delta_pct");
    NullableDouble(w, gate.delta_pct);
    w->Key("significant").Bool(gate.significant).Key("evaluated").Bool(gate.evaluated);
    w->Key("fired").Bool(gate.fired).EndObject();
  }
  w->EndArray();
}

}  // namespace

std::string RenderCompareText(const CompareResult& result, std::span<const GateOutcome> gates) {
  std::string out;
  AppendSide("before", result.before, &out);
  AppendSide("after", result.after, &out);
  AppendMetricTable(result, &out);
  AppendStepStatistics(result, &out);
  AppendOps(result.ops, &out);
  AppendGates(gates, &out);
  return out;
}

std::string RenderCompareJson(const CompareResult& result, std::span<const GateOutcome> gates) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("schema").String("tuneprof.compare/1");
  WriteSide("before", result.before, &w);
  WriteSide("after", result.after, &w);
  w.Key("alpha").Double(result.options.alpha);
  w.Key("metrics").BeginObject();
  for (const MetricComparison& metric : result.metrics) WriteMetric(metric, &w);
  w.EndObject();
  WriteOps(result.ops, &w);
  WriteGates(gates, &w);
  w.EndObject();
  out += '\n';
  return out;
}

}  // namespace tuneprof

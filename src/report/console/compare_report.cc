#include "report/console/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "base/enum_names.h"
#include "base/text_escape.h"
#include "base/json_writer.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"
#include "report/common/names.h"
#include "report/common/table.h"

namespace tuneprof {

namespace {

constexpr size_t kNameColumn = 41;

std::string ValueCell(std::optional<double> value, const std::string& unit) {
  if (!value) return std::string(kUnknownText);
  if (unit == "fraction") return fmt::format("{:.4f}", *value);  // MFU: small numbers
  return Grouped(*value, unit == "bytes" ? 0 : 1);
}

std::string OptionalUs(std::optional<double> us) { return us ? Grouped(*us, 1) : std::string(kUnknownText); }

std::string SignedUs(std::optional<double> us) {
  if (!us) return std::string(kUnknownText);
  return fmt::format("{}{}", *us > 0 ? "+" : "", Grouped(*us, 1));
}

std::string Label(const MetricComparison& metric) { return metric.key; }

std::string_view BetterName(Better better) {
  static constexpr std::array<std::string_view, 3> kNames = {"lower", "higher", "none"};
  return EnumName(better, kNames, "none");
}

// Each input once: the ranks of one file (an Nsight Systems export of several processes) share its path.
std::string JoinedPaths(const CompareSide& side) {
  std::string paths;
  for (size_t i = 0; i < side.paths.size(); ++i) {
    if (i > 0 && side.paths[i] == side.paths[i - 1]) continue;
    paths += (paths.empty() ? "" : ", ") + EscapeText(side.paths[i]);
  }
  return paths;
}

// `paths`: this side's paths as the header shows them (told apart from the other side's).
void AppendSide(std::string_view label, const CompareSide& side, std::string_view paths, std::string* out) {
  const std::string steps = side.has_steps
                                ? fmt::format("{} step{}", side.step_ns.size(), side.step_ns.size() == 1 ? "" : "s")
                                : std::string("no steps: one window");
  *out += fmt::format("{:<7}{} ({} rank{}, {}, {} work)\n", label, paths, side.ranks, side.ranks == 1 ? "" : "s", steps,
                      WorkSourceName(side.work_on));
}

// ", mean over 2 ranks" after a table's scope, where the figures combine several ranks.
std::string RanksNote(const RankPopulation& population) {
  if (!population.named || population.ranks.size() < 2) return "";
  return fmt::format(", mean over {} ranks", population.ranks.size());
}

// The metric table, the same in the terminal and in Markdown; the last row is the dominant bottleneck.
Table MetricTable(const CompareResult& result) {
  Table table({{"metric", 26, Align::kLeft, 1, true},
               {"before", 14, Align::kRight},
               {"after", 14, Align::kRight},
               {"change", 8, Align::kRight},
               {"verdict", 0, Align::kLeft, 2}});
  for (const MetricComparison& metric : result.metrics) {
    table.AddRow({Label(metric), ValueCell(metric.before, metric.unit), ValueCell(metric.after, metric.unit),
                  ChangePercent(metric.delta_pct), MetricVerdictText(metric)});
  }
  const std::string& before = result.before.verdict.dominant;
  const std::string& after = result.after.verdict.dominant;
  table.AddRow({"dominant_bottleneck", before, after, "",
                before == kUnknownText || after == kUnknownText ? std::string(kUnknownText)
                                                                : (before == after ? "same" : "changed")});
  return table;
}

void AppendCategories(const CompareResult& result, std::string* out) {
  if (result.categories.empty()) return;
  const std::string scope = result.before.op_scope == result.after.op_scope
                                ? std::string(OperatorScopeName(result.before.op_scope))
                                : fmt::format("{} vs {}", OperatorScopeName(result.before.op_scope),
                                              OperatorScopeName(result.after.op_scope));
  *out += fmt::format("\noperator categories ({}, outermost operators, per step{}):\n", scope,
                      RanksNote(result.population));
  *out += fmt::format("{:<14} {:>17} {:>14} {:>14} {:>13}\n", "category", "count", "before us", "after us", "delta us");
  for (const CategoryDelta& c : result.categories) {
    *out += fmt::format("{:<14} {:>17} {:>14} {:>14} {:>13}\n", OperatorCategoryName(c.category),
                        fmt::format("{:g} -> {:g}", c.before_count, c.after_count), Grouped(Micros(c.before_ns), 1),
                        Grouped(Micros(c.after_ns), 1), Grouped(Micros(c.after_ns - c.before_ns), 1));
  }
}

std::string StillFires(const AdviceCheck& check) {
  if (!check.fires_after) return "no";
  return fmt::format("yes (est. {} us)", Grouped(check.estimated_gain_after_us.value_or(0), 1));
}

void AppendAdvice(const CompareResult& result, std::span<const AdviceCheck> advice, std::string* out) {
  if (advice.empty()) return;
  const MetricComparison* step = result.Find("step_time_us");
  *out += fmt::format("\npredicted vs measured (per step; step time change {} us):\n",
                      SignedUs(step ? step->delta : std::nullopt));
  *out += fmt::format("{:<28} {:>12} {:>13} {:>13} {:>13}  {}\n", "finding", "est. gain us", "before us", "after us",
                      "measured us", "fires after");
  for (const AdviceCheck& check : advice) {
    const PredictedFinding& f = check.finding;
    *out += fmt::format("{:<28} {:>12} {:>13} {:>13} {:>13}  {}\n", Shortened(f.id, 28),
                        f.estimated_gain_us ? Grouped(-*f.estimated_gain_us, 1) : std::string("unknown"),
                        OptionalUs(check.before_us), OptionalUs(check.after_us), SignedUs(check.change_us()),
                        check.fires_after ? "yes" : "no");
    const std::string how =
        check.measured_as + (check.unknown_reason.empty() ? "" : "; unknown: " + check.unknown_reason);
    *out += fmt::format("  measured: {}\n", Shortened(how, 86));
  }
}

void AppendIntervalLine(std::string_view label, const std::optional<ConfidenceInterval>& ci, std::string* out) {
  if (!ci) return;
  *out += fmt::format("  {} change, {:.0f}% CI: [{}, {}] us (bootstrap, {} resamples)\n", label, ci->confidence * 100,
                      Grouped(ci->low, 1), Grouped(ci->high, 1), ci->resamples);
}

void AppendStepStatistics(const CompareResult& result, std::string* out) {
  const MetricComparison* step = result.Find("step_time_us");
  if (step == nullptr || !step->samples) return;
  const SampleComparison& s = *step->samples;
  *out += fmt::format("\nstep time: n = {} before, {} after; alpha {}\n", s.before ? s.before->count : 0,
                      s.after ? s.after->count : 0, s.alpha);
  if (s.verdict == ChangeVerdict::kTooFewSamples) {
    *out += fmt::format(
        "  sample too small: a side has fewer than {} steps, no test is possible; "
        "profile more steps\n",
        kMinSamples);
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

void AppendOps(const OperatorDiff& diff, const RankPopulation& population, std::string* out) {
  if (diff.ops.empty()) return;
  const std::string window = diff.before_steps == 0 && diff.after_steps == 0
                                 ? std::string("whole traces")
                                 : fmt::format("per step over {} vs {} steps", diff.before_steps, diff.after_steps);
  *out += fmt::format("\noperators ({}, {}{}), by |time change|:\n", OperatorScopeName(diff.scope), window,
                      RanksNote(population));
  if (diff.replaced) {
    const ReplacedPattern& r = *diff.replaced;
    *out += fmt::format("replaced: {} ({} us)\n       -> {} (+{} us)\n", JoinNames(r.removed, 70),
                        Grouped(Micros(-r.removed_ns), 1), JoinNames(r.added, 70), Grouped(Micros(r.added_ns), 1));
  }
  *out +=
      fmt::format("{:<6} {:<7} {:>12} {:>15} {:>13}  {}\n", "time", "calls", "delta us", "count", "after us", "name");
  std::vector<std::string> names;
  for (size_t i = 0; i < diff.ops.size() && i < kCompareTextOps; ++i) names.push_back(EscapeText(diff.ops[i].name));
  names = DistinctShortNames(names, kNameColumn);
  for (size_t i = 0; i < diff.ops.size() && i < kCompareTextOps; ++i) {
    const OperatorDelta& op = diff.ops[i];
    *out +=
        fmt::format("{:<6} {:<7} {:>12} {:>15} {:>13}  {}\n", TimeChangeWord(op.delta_ns()), CountChangeWord(op.change),
                    Grouped(Micros(op.delta_ns()), 1), fmt::format("{:g} -> {:g}", op.before_count, op.after_count),
                    Grouped(Micros(op.after_ns), 1), names[i]);
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
    *out += fmt::format("  {}: {} {}, {} -> {}\n", gate.condition.text, gate.metric_key, ChangePercent(gate.delta_pct),
                        gate.significant ? "significant" : "not significant", gate.fired ? "FAIL" : "pass");
  }
}

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
  w->Key("unit").String(metric.unit).Key("better").String(BetterName(metric.better));
  w->Key("before");
  JsonNumberOrNull(*w, metric.before);
  w->Key("after");
  JsonNumberOrNull(*w, metric.after);
  w->Key("delta");
  JsonNumberOrNull(*w, metric.delta);
  w->Key("delta_pct");
  JsonNumberOrNull(*w, metric.delta_pct);
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

// Present where the outputs name the population (RankPopulation::named).
void WritePopulation(const RankPopulation& population, JsonWriter* w) {
  if (!population.named) return;
  w->Key("population").BeginObject().Key("ranks").BeginArray();
  for (int64_t rank : population.ranks) w->Int(rank);
  w->EndArray().Key("aggregate").String(PopulationAggregate(population));
  const bool one = population.ranks.size() == 1;
  w->Key("step_time").String(one ? "one rank" : "slowest rank");
  w->Key("utilizations").String(one ? "one rank" : "slowest rank");
  w->Key("peak_memory").String(one ? "one rank" : "highest rank");
  w->Key("requested_rank");
  JsonIntOrNull(*w, population.requested);
  w->Key("left_out").BeginObject().Key("before").BeginArray();
  for (int64_t rank : population.only_before) w->Int(rank);
  w->EndArray().Key("after").BeginArray();
  for (int64_t rank : population.only_after) w->Int(rank);
  w->EndArray().EndObject().EndObject();
}

void WriteOps(const OperatorDiff& diff, JsonWriter* w) {
  w->Key("ops_scope").String(OperatorScopeName(diff.scope));
  w->Key("ops_steps")
      .BeginObject()
      .Key("before")
      .Uint(diff.before_steps)
      .Key("after")
      .Uint(diff.after_steps)
      .EndObject();
  w->Key("replaced");
  if (diff.replaced) {
    w->BeginObject().Key("removed").BeginArray();
    for (const std::string& name : diff.replaced->removed) w->String(name);
    w->EndArray().Key("added").BeginArray();
    for (const std::string& name : diff.replaced->added) w->String(name);
    w->EndArray().Key("removed_us").Double(Micros(diff.replaced->removed_ns));
    w->Key("added_us").Double(Micros(diff.replaced->added_ns)).EndObject();
  } else {
    w->Null();
  }
  w->Key("ops").BeginArray();
  for (const OperatorDelta& op : diff.ops) {
    w->BeginObject().Key("name").String(op.name).Key("change").String(OperatorChangeName(op.change));
    w->Key("time_change").String(TimeChangeName(op.delta_ns()));
    w->Key("before_count").Double(op.before_count).Key("after_count").Double(op.after_count);
    w->Key("before_us").Double(Micros(op.before_ns)).Key("after_us").Double(Micros(op.after_ns));
    w->Key("delta_us").Double(Micros(op.delta_ns())).EndObject();
  }
  w->EndArray();
}

void WriteDominant(const CompareResult& result, JsonWriter* w) {
  w->Key("dominant_bottleneck").BeginObject();
  w->Key("before").String(result.before.verdict.dominant).Key("after").String(result.after.verdict.dominant);
  w->EndObject();
}

void WriteCategories(const CompareResult& result, JsonWriter* w) {
  w->Key("categories_scope").BeginObject();
  w->Key("before").String(OperatorScopeName(result.before.op_scope));
  w->Key("after").String(OperatorScopeName(result.after.op_scope)).EndObject();
  w->Key("categories").BeginArray();
  for (const CategoryDelta& c : result.categories) {
    w->BeginObject().Key("name").String(OperatorCategoryName(c.category));
    w->Key("before_count").Double(c.before_count).Key("after_count").Double(c.after_count);
    w->Key("before_us").Double(Micros(c.before_ns)).Key("after_us").Double(Micros(c.after_ns));
    w->Key("delta_us").Double(Micros(c.after_ns - c.before_ns)).EndObject();
  }
  w->EndArray();
}

void WriteAdvice(std::span<const AdviceCheck> advice, bool given, JsonWriter* w) {
  w->Key("advice");
  if (!given) {
    w->Null();
    return;
  }
  w->BeginArray();
  for (const AdviceCheck& check : advice) {
    const PredictedFinding& f = check.finding;
    w->BeginObject().Key("id").String(f.id).Key("category").String(f.category);
    w->Key("estimated_gain_us");
    JsonNumberOrNull(*w, f.estimated_gain_us);
    w->Key("measured_as").String(check.measured_as);
    w->Key("before_us");
    JsonNumberOrNull(*w, check.before_us);
    w->Key("after_us");
    JsonNumberOrNull(*w, check.after_us);
    w->Key("measured_change_us");
    JsonNumberOrNull(*w, check.change_us());
    w->Key("unknown_reason");
    check.unknown_reason.empty() ? w->Null() : w->String(check.unknown_reason);
    w->Key("fires_after").Bool(check.fires_after);
    w->Key("estimated_gain_after_us");
    JsonNumberOrNull(*w, check.estimated_gain_after_us);
    w->EndObject();
  }
  w->EndArray();
}

void WriteGates(std::span<const GateOutcome> gates, JsonWriter* w) {
  w->Key("gates").BeginArray();
  for (const GateOutcome& gate : gates) {
    w->BeginObject().Key("condition").String(gate.condition.text).Key("metric");
    gate.metric_key.empty() ? w->Null() : w->String(gate.metric_key);
    w->Key("delta_pct");
    JsonNumberOrNull(*w, gate.delta_pct);
    w->Key("significant").Bool(gate.significant).Key("evaluated").Bool(gate.evaluated);
    w->Key("fired").Bool(gate.fired).EndObject();
  }
  w->EndArray();
}

}  // namespace

std::string RenderCompareText(const CompareResult& result, std::span<const GateOutcome> gates,
                              std::span<const AdviceCheck> advice) {
  std::string out;
  // Two long paths cut at the same width can print the same: show where they differ.
  const std::vector<std::string> paths = {JoinedPaths(result.before), JoinedPaths(result.after)};
  const std::vector<std::string> shown = DistinctShortNames(paths, 60);
  AppendSide("before", result.before, shown[0], &out);
  AppendSide("after", result.after, shown[1], &out);
  if (const std::string population = PopulationDescription(result.population); !population.empty()) {
    out += fmt::format("{:<7}{}\n", "ranks", population);
  }
  out += '\n';
  out += MetricTable(result).Text();
  AppendStepStatistics(result, &out);
  AppendOps(result.ops, result.population, &out);
  AppendCategories(result, &out);
  AppendAdvice(result, advice, &out);
  AppendGates(gates, &out);
  return EscapeTextKeepingLines(out);
}

std::string RenderCompareJson(const CompareResult& result, std::span<const GateOutcome> gates,
                              std::span<const AdviceCheck> advice, bool advice_given) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("schema").String("tuneprof.compare/1");
  WriteSide("before", result.before, &w);
  WriteSide("after", result.after, &w);
  WritePopulation(result.population, &w);
  w.Key("alpha").Double(result.options.alpha);
  w.Key("metrics").BeginObject();
  for (const MetricComparison& metric : result.metrics) WriteMetric(metric, &w);
  w.EndObject();
  WriteDominant(result, &w);
  WriteOps(result.ops, &w);
  WriteCategories(result, &w);
  WriteAdvice(advice, advice_given, &w);
  WriteGates(gates, &w);
  w.EndObject();
  out += '\n';
  return out;
}

namespace {

void AppendMarkdownOps(const OperatorDiff& diff, const RankPopulation& population, std::string* out) {
  if (diff.ops.empty()) return;
  *out += fmt::format("\n**Operators** ({}, per step{}, by time change; top {}):\n\n", OperatorScopeName(diff.scope),
                      RanksNote(population), std::min(diff.ops.size(), kCompareTextOps));
  *out += "| change | name | count | before us | after us | delta us |\n|---|---|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < diff.ops.size() && i < kCompareTextOps; ++i) {
    const OperatorDelta& op = diff.ops[i];
    *out += fmt::format("| {}, calls {} | `{}` | {:g} -> {:g} | {} | {} | {} |\n", TimeChangeWord(op.delta_ns()),
                        CountChangeWord(op.change), MarkdownCell(Shortened(op.name, 80)), op.before_count,
                        op.after_count, Grouped(Micros(op.before_ns), 1), Grouped(Micros(op.after_ns), 1),
                        Grouped(Micros(op.delta_ns()), 1));
  }
}

void AppendMarkdownCategories(const CompareResult& result, std::string* out) {
  if (result.categories.empty()) return;
  *out += fmt::format("\n**Operator categories** (outermost operators, per step{}):\n\n", RanksNote(result.population));
  *out += "| category | count | before us | after us | delta us |\n|---|---:|---:|---:|---:|\n";
  for (const CategoryDelta& c : result.categories) {
    *out += fmt::format("| {} | {:g} -> {:g} | {} | {} | {} |\n", OperatorCategoryName(c.category), c.before_count,
                        c.after_count, Grouped(Micros(c.before_ns), 1), Grouped(Micros(c.after_ns), 1),
                        Grouped(Micros(c.after_ns - c.before_ns), 1));
  }
}

void AppendMarkdownAdvice(std::span<const AdviceCheck> advice, std::string* out) {
  if (advice.empty()) return;
  *out += "\n**Predicted vs measured** (per step):\n\n";
  *out += "| finding | est. gain us | measured us | measured as | still fires |\n|---|---:|---:|---|---|\n";
  for (const AdviceCheck& check : advice) {
    const PredictedFinding& f = check.finding;
    *out +=
        fmt::format("| `{}` | {} | {} | {} | {} |\n", MarkdownCell(f.id),
                    f.estimated_gain_us ? Grouped(-*f.estimated_gain_us, 1) : std::string("unknown"),
                    SignedUs(check.change_us()), MarkdownCell(Shortened(check.measured_as, 120)), StillFires(check));
  }
}

}  // namespace

std::string RenderCompareMarkdown(const CompareResult& result, std::span<const GateOutcome> gates,
                                  std::span<const AdviceCheck> advice) {
  std::string out = "### tuneprof compare\n\n";
  for (const auto& [label, side] : {std::pair{"before", &result.before}, std::pair{"after", &result.after}}) {
    std::string paths;
    for (const std::string& path : side->paths) paths += (paths.empty() ? "" : ", ") + path;
    out += fmt::format("- {}: `{}` ({} rank{}, {} step{})\n", label, MarkdownCell(paths), side->ranks,
                       side->ranks == 1 ? "" : "s", side->step_ns.size(), side->step_ns.size() == 1 ? "" : "s");
  }
  if (const std::string population = PopulationDescription(result.population); !population.empty()) {
    out += fmt::format("- ranks: {}\n", population);
  }
  out += "\n";
  out += MetricTable(result).Markdown();
  AppendMarkdownOps(result.ops, result.population, &out);
  AppendMarkdownCategories(result, &out);
  AppendMarkdownAdvice(advice, &out);
  if (!gates.empty()) {
    out += "\n**Gate:**\n\n";
    for (const GateOutcome& gate : gates) {
      out += gate.evaluated
                 ? fmt::format("- `{}`: {}, {} -> **{}**\n", MarkdownCell(gate.condition.text),
                               ChangePercent(gate.delta_pct), gate.significant ? "significant" : "not significant",
                               gate.fired ? "FAIL" : "pass")
                 : fmt::format("- `{}`: not evaluated (unknown)\n", MarkdownCell(gate.condition.text));
    }
  }
  return EscapeTextKeepingLines(out);
}

}  // namespace tuneprof

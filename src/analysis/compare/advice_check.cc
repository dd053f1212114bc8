#include "analysis/compare/advice_check.h"

#include <simdjson.h>

#include <algorithm>
#include <set>

#include "analysis/core/json_document.h"

namespace tuneprof {
namespace {

// `analyze --json` writes the same findings under its own schema.
constexpr std::string_view kSchemaPrefixes[] = {"tuneprof.advise/", "tuneprof.analyze/"};
constexpr std::string_view kArrow = " -> ";

std::vector<std::string> SplitExample(std::string_view example) {
  std::vector<std::string> names;
  while (!example.empty()) {
    const size_t at = example.find(kArrow);
    const std::string_view name = example.substr(0, at);
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
    if (at == std::string_view::npos) break;
    example.remove_prefix(at + kArrow.size());
  }
  return names;
}

Result<PredictedFinding> ParseFinding(simdjson::dom::element element, size_t index, std::string_view origin) {
  auto fail = [&](const std::string& what) {
    return Status(StatusCode::kInvalidInput,
                  std::string(origin) + ": findings[" + std::to_string(index) + "]: " + what);
  };
  simdjson::dom::object object;
  if (element.get(object)) return fail("not an object");
  PredictedFinding finding;
  std::string_view text;
  if (object["id"].get(text) || text.empty()) return fail("\"id\" must be a non-empty string");
  finding.id = std::string(text);
  if (!object["category"].get(text)) finding.category = std::string(text);
  if (!object["saves_from"].get(text)) finding.saves_from = std::string(text);
  double gain = 0;
  simdjson::dom::element value;
  if (!object["estimated_gain_us"].get(value) && !value.is_null()) {
    if (value.get(gain)) return fail("\"estimated_gain_us\" must be a number");
    finding.estimated_gain_us = gain;
  }
  // advise writes 0 with a gain model "unknown: why" when it claims no gain: unknown, not zero.
  if (!object["gain_model"].get(text) && text.starts_with("unknown") && gain == 0) finding.estimated_gain_us.reset();
  simdjson::dom::object evidence;
  if (!object["evidence"].get(evidence)) {
    if (!evidence["level"].get(text)) finding.level = std::string(text);
    if (!evidence["example"].get(text)) finding.named_ops = SplitExample(text);
  }
  return finding;
}

std::optional<TimePart> PartNamed(std::string_view name) {
  for (size_t p = 0; p < static_cast<size_t>(TimePart::kCount); ++p) {
    if (TimePartName(static_cast<TimePart>(p)) == name) return static_cast<TimePart>(p);
  }
  return std::nullopt;
}

const RankAdvice* SlowestRank(const AdvisorResult* advice) {
  if (advice == nullptr) return nullptr;
  const RankAdvice* slowest = nullptr;
  for (const RankAdvice& rank : advice->ranks) {
    if (!slowest || rank.split.step_ns > slowest->split.step_ns) slowest = &rank;
  }
  return slowest;
}

bool CpuOnly(const AdviceSide& side) {
  return side.advice != nullptr && !side.advice->ranks.empty() && side.advice->ranks.front().split.cpu_only;
}

std::set<std::string, std::less<>> NamesOf(const Trace& trace, OperatorScope scope) {
  std::set<std::string, std::less<>> names;
  for (const OperatorTotals::Entry& entry : CollectOperators(trace, scope, StepSelection::kAll).entries) {
    names.insert(entry.name);
  }
  return names;
}

// Per step time of the outermost operators `names` (plus `extra`) holds; nullopt when the side has no
// operator at that scope at all.
std::optional<double> NamedTimeUs(const Trace& trace, OperatorScope scope,
                                  const std::set<std::string, std::less<>>& names) {
  if (OutermostOperators(trace, scope, StepSelection::kAll).empty()) return std::nullopt;
  int64_t total_ns = 0;
  const auto picked = OutermostOperators(trace, scope, StepSelection::kAll,
                                         [&](std::string_view name) { return names.contains(name); });
  for (uint32_t i : picked) total_ns += trace.events().dur_ns[i];
  const double steps = static_cast<double>(std::max<size_t>(trace.steps().size(), 1));
  return static_cast<double>(total_ns) / steps / 1e3;
}

std::string Joined(const std::set<std::string, std::less<>>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

// The operator rule (advice_check.h); false when it does not apply and the step part is measured instead.
bool MeasureOperators(const AdviceSide& before, const AdviceSide& after, AdviceCheck* check) {
  const PredictedFinding& f = check->finding;
  if (f.named_ops.empty() || before.trace == nullptr || after.trace == nullptr) return false;
  const bool kernels = f.level == "kernels";
  // Host operators of a GPU trace were timed by the device time they launch: their own host time would
  // measure something else, so such findings fall back to the step part.
  if (!kernels && (!CpuOnly(before) || !CpuOnly(after))) return false;
  const OperatorScope scope = kernels ? OperatorScope::kDevice : OperatorScope::kHostOperators;
  const std::set<std::string, std::less<>> named(f.named_ops.begin(), f.named_ops.end());
  std::set<std::string, std::less<>> after_names = named;
  std::set<std::string, std::less<>> after_only;
  if (f.id.starts_with("fusion.")) {
    // The replacement does the named operators' kind of work (attention's is its own category), so new
    // operators of other kinds, from other changes to the workload, stay out.
    std::set<OperatorCategory> kinds;
    for (const std::string& name : f.named_ops) kinds.insert(CategoryOf(name));
    if (f.id == "fusion.attention") kinds.insert(OperatorCategory::kAttention);
    const auto before_all = NamesOf(*before.trace, scope);
    for (const std::string& name : NamesOf(*after.trace, scope)) {
      if (!before_all.contains(name) && kinds.contains(CategoryOf(name))) after_only.insert(name);
    }
    after_names.insert(after_only.begin(), after_only.end());
  }
  check->measured_as = std::string(kernels ? "kernels: " : "operators: ") + Joined(named);
  if (!after_only.empty()) check->measured_as += " (+ after only: " + Joined(after_only) + ")";
  check->before_us = NamedTimeUs(*before.trace, scope, named);
  check->after_us = NamedTimeUs(*after.trace, scope, after_names);
  if (!check->before_us || !check->after_us) {
    check->unknown_reason = std::string(!check->before_us ? "the before" : "the after") + " side has no " +
                            (kernels ? "kernels" : "host operators");
  }
  return true;
}

void MeasureStepPart(const AdviceSide& before, const AdviceSide& after, AdviceCheck* check) {
  const std::optional<TimePart> part = PartNamed(check->finding.saves_from);
  check->measured_as = "step part: " + (check->finding.saves_from.empty() ? "?" : check->finding.saves_from);
  const RankAdvice* b = SlowestRank(before.advice);
  const RankAdvice* a = SlowestRank(after.advice);
  if (!part) {
    check->unknown_reason = "no operators named and no known part of the step";
    return;
  }
  if (!b || !a) {
    check->unknown_reason = "a side has no analysed rank";
    return;
  }
  check->before_us = b->split.part(*part) / 1e3;
  check->after_us = a->split.part(*part) / 1e3;
}

}  // namespace

Result<std::vector<PredictedFinding>> ParseAdviceJson(std::string_view json, std::string_view origin) {
  auto fail = [&](const std::string& what) { return JsonDocumentError(origin, what); };
  simdjson::dom::parser parser;
  TP_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJsonDocument(&parser, json, origin));
  std::string_view schema;
  const bool known =
      !root["schema"].get(schema) && std::any_of(std::begin(kSchemaPrefixes), std::end(kSchemaPrefixes),
                                                 [&](std::string_view prefix) { return schema.starts_with(prefix); });
  if (!known) return fail("not `tuneprof advise --json` output (\"schema\" must be tuneprof.advise/N)");
  simdjson::dom::array findings;
  if (root["findings"].get(findings)) return fail("\"findings\" must be an array");
  std::vector<PredictedFinding> out;
  size_t index = 0;
  for (simdjson::dom::element element : findings) {
    TP_ASSIGN_OR_RETURN(PredictedFinding finding, ParseFinding(element, index++, origin));
    out.push_back(std::move(finding));
  }
  return out;
}

std::vector<AdviceCheck> CheckAdvice(const std::vector<PredictedFinding>& findings, const AdviceSide& before,
                                     const AdviceSide& after) {
  std::vector<AdviceCheck> checks;
  for (const PredictedFinding& finding : findings) {
    AdviceCheck check;
    check.finding = finding;
    if (!MeasureOperators(before, after, &check)) MeasureStepPart(before, after, &check);
    if (after.advice != nullptr) {
      for (const Finding& f : after.advice->findings) {
        if (f.id != finding.id) continue;
        check.fires_after = true;
        check.estimated_gain_after_us = f.estimated_gain_ns / 1e3;
      }
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace tuneprof

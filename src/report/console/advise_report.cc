#include "report/console/advise_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "report/common/format.h"
#include "report/common/json_fields.h"
#include "report/console/warnings_json.h"
#include "base/text_escape.h"
#include "base/json_writer.h"

namespace tuneprof {
namespace {

constexpr size_t kTopStrategies = 5;
constexpr size_t kBarWidth = 20;
constexpr size_t kUtilizationWidth = 94;  // + the 4-column indent: 98 columns

struct PartLabel {
  TimePart part;
  std::string_view label;
};

constexpr std::array kParts = std::to_array<PartLabel>({
    {TimePart::kComputeBound, "compute-bound (matmul, conv, attention)"},
    {TimePart::kMemoryBound, "memory-bound (element-wise, norms, ...)"},
    {TimePart::kUnclassified, "unclassified (kernels of unknown kind)"},
    {TimePart::kFusedComm, "fused compute + communication (MC2 and alike)"},
    {TimePart::kCommunication, "communication not overlapped"},
    {TimePart::kMemcpy, "copies not overlapped"},
    {TimePart::kHostWait, "host (launch wait, framework overhead)"},
    {TimePart::kData, "data loading"},
    {TimePart::kIdle, "idle"},
    {TimePart::kPipelineBubble, "pipeline bubble (waits for other stages)"},
});

// The computing of a step without operators to class it (a summary-only torch_npu rank), in the
// unclassified part; the second where that part also holds kernels of unknown kind (a mean over ranks).
constexpr std::string_view kUnclassedComputing = "computing (no operators to class it)";
constexpr std::string_view kUnclassedOrUnknown = "unclassified (unknown or no operators)";

// The label of `part` in the split of `split`: the unclassified part says why where no operators class it.
std::string_view PartLabelOf(const TimeSplit& split, const PartLabel& p) {
  if (split.compute_classes_known || p.part != TimePart::kUnclassified) return p.label;
  const bool classed = split.part(TimePart::kComputeBound) > 0 || split.part(TimePart::kMemoryBound) > 0;
  return classed ? kUnclassedOrUnknown : kUnclassedComputing;
}

// " (mean over N ranks)", saying so where ranks without a complete step are left out of the mean.
std::string MeanOverRanksNote(const AdvisorResult& result) {
  return " (" + MeanOverRanks(result.mean_ranks, result.ranks.size()) + ")";
}

// No line of analyze or advise is wider than this.
constexpr size_t kColumns = 100;

// Where a line longer than kColumns is cut: at kColumns, or, with `at_punctuation`, after the last '(', ','
// or ';' before it past `indent` (an option's call splits between its arguments, not inside a name).
size_t CutAt(std::string_view line, size_t indent, bool at_punctuation) {
  if (at_punctuation) {
    for (size_t at = kColumns; at > indent + 1; --at) {
      const char c = line[at - 1];
      if (c == '(' || c == ',' || c == ';') return at;
    }
  }
  return kColumns;
}

// Wrapped lines as they are, but one longer than kColumns (a word longer than a line: a module path, a
// kernel's name) split across lines under `rest`, so that nothing runs past the terminal's edge.
std::string SplitLongLines(std::string_view wrapped, std::string_view rest, bool at_punctuation = false) {
  std::string out;
  size_t at = 0;
  while (at < wrapped.size()) {
    size_t end = wrapped.find('\n', at);
    if (end == std::string_view::npos) end = wrapped.size();
    std::string_view line = wrapped.substr(at, end - at);
    const size_t piece = std::max<size_t>(kColumns - std::min(rest.size(), kColumns - 1), 1);
    const size_t first = line.size() > kColumns ? CutAt(line, rest.size(), at_punctuation) : kColumns;
    out.append(line.substr(0, first));
    for (line.remove_prefix(std::min(line.size(), first)); !line.empty();
         line.remove_prefix(std::min(line.size(), piece))) {
      out += '\n';
      out.append(rest).append(line.substr(0, piece));
    }
    if (end < wrapped.size()) out += '\n';
    at = end + 1;
  }
  return out;
}

// `text` in lines of at most kColumns: broken at spaces, the first line after `first`, the others after
// `rest`.
std::string Lines(std::string_view text, std::string_view first, std::string_view rest) {
  return SplitLongLines(WrapText(text, kColumns - std::max(first.size(), rest.size()), first, rest), rest);
}

// Lines of at most `width` columns, broken at spaces, each indented by 4: a measured_as or how-to names
// a capture option in full, which a cut would lose.
std::string Wrapped(std::string_view raw, size_t width) {
  return SplitLongLines(WrapText(raw, width, "    ", "    "), "    ", true);
}

std::string Bar(double share) {
  const size_t filled = static_cast<size_t>(std::clamp(share, 0.0, 1.0) * kBarWidth + 0.5);
  return std::string(filled, '#') + std::string(kBarWidth - filled, '.');
}

const RankAdvice* SlowestRank(const AdvisorResult& result) {
  const RankAdvice* slowest = nullptr;
  for (const RankAdvice& rank : result.ranks) {
    if (!slowest || rank.split.step_ns > slowest->split.step_ns) slowest = &rank;
  }
  return slowest;
}

// Ranks whose mean steps differ by less than kTiedStepShare of the slowest's tie: a pipeline or a collective
// every step ends with makes every rank's step the same, and the first rank of a tie is slowest by no
// measure. The headline then says the ranks are equal, and names the rank that bounds the step where the
// advisor found one (bounding_rank.h).

size_t RanksTiedWithSlowest(const AdvisorResult& result, const RankAdvice& slowest) {
  return static_cast<size_t>(std::count_if(result.ranks.begin(), result.ranks.end(), [&](const RankAdvice& r) {
    return r.split.step_ns >= slowest.split.step_ns * (1 - kTiedStepShare);
  }));
}

// On a tie (steps within kTiedStepShare, said in the docs rather than on the lines, which must stay narrow),
// "all ranks equal" / "ranks 0,2 equal slowest"; else empty.
std::string TiedSlowest(const AdvisorResult& result, const RankAdvice& slowest) {
  const size_t tied = RanksTiedWithSlowest(result, slowest);
  if (tied < 2) return "";
  if (tied == result.ranks.size()) return "all ranks equal";
  std::vector<int64_t> ranks;
  for (const RankAdvice& r : result.ranks) {
    if (r.split.step_ns >= slowest.split.step_ns * (1 - kTiedStepShare)) ranks.push_back(r.rank);
  }
  return fmt::format("ranks {} equal slowest", RankRanges(ranks));
}

const RankAdvice* RankWithId(const AdvisorResult& result, int64_t id) {
  for (const RankAdvice& rank : result.ranks) {
    if (rank.rank == id) return &rank;
  }
  return nullptr;
}

// The rank that bounds the step (AdvisorResult::bounding_rank); nullptr where the advisor names none.
const RankAdvice* BoundingRankOf(const AdvisorResult& result) {
  return result.bounding_rank ? RankWithId(result, result.bounding_rank->rank) : nullptr;
}

// The rank the headline's figures are of: the slowest, or on a tie the rank that bounds the step.
const RankAdvice& HeadlineRank(const AdvisorResult& result, const RankAdvice& slowest) {
  const RankAdvice* bounding = BoundingRankOf(result);
  if (bounding == nullptr || TiedSlowest(result, slowest).empty()) return slowest;
  return bounding->split.step_ns >= slowest.split.step_ns * (1 - kTiedStepShare) ? *bounding : slowest;
}

// "slowest rank 3", or on a tie "all ranks equal, rank 2 (stage 1 computes most per step)" / "ranks 0,2 equal
// slowest, rank 0": the rank whose figures follow (HeadlineRank).
std::string SlowestRankName(const AdvisorResult& result, const RankAdvice& slowest) {
  const std::string tie = TiedSlowest(result, slowest);
  if (tie.empty()) return fmt::format("slowest rank {}", slowest.rank);
  const RankAdvice& named = HeadlineRank(result, slowest);
  if (&named == &slowest) return fmt::format("{}, rank {}", tie, slowest.rank);
  return fmt::format("{}, rank {} ({})", tie, named.rank, result.bounding_rank->reason);
}

// The utilization table speaks for one rank. The slowest is the natural one, but a rank slowest by a hair
// that lacks counters its peers have says nothing of the job's units: among the ranks whose step is within
// this share of the slowest's, the one with the most utilizations measured is shown (the slowest on a tie).
constexpr double kNearlySlowestShare = 0.01;

size_t MeasuredUtilizations(const RankAdvice& rank) {
  size_t known = 0;
  for (const UtilizationCheck& check : rank.utilizations) known += check.value_pct.has_value() ? 1 : 0;
  return known;
}

const RankAdvice* UtilizationRank(const AdvisorResult& result, const RankAdvice& slowest) {
  const RankAdvice* chosen = &slowest;
  for (const RankAdvice& rank : result.ranks) {
    if (rank.split.step_ns < slowest.split.step_ns * (1 - kNearlySlowestShare)) continue;
    if (MeasuredUtilizations(rank) > MeasuredUtilizations(*chosen)) chosen = &rank;
  }
  return chosen;
}

// Says of the slowest rank what the headline says: on a tie, that the ranks are equal, not which is slowest;
// of the rank that bounds the step, why.
std::string UtilizationPopulation(const AdvisorResult& result, const RankAdvice& shown, const RankAdvice& slowest) {
  const std::string tie = TiedSlowest(result, slowest);
  if (&shown == BoundingRankOf(result)) {
    const std::string longer = !tie.empty()         ? "; " + tie
                               : &shown != &slowest ? fmt::format("; the longest step is rank {}'s", slowest.rank)
                                                    : "";
    return fmt::format(" (rank {}, which bounds the step: {}{})", shown.rank, result.bounding_rank->reason, longer);
  }
  if (&shown == &slowest) {
    return tie.empty() ? fmt::format(" (rank {}, the slowest)", shown.rank)
                       : fmt::format(" (rank {}; {})", shown.rank, tie);
  }
  const std::string step =
      tie.empty() ? fmt::format("the slowest rank {}'s step", slowest.rank) : fmt::format("the slowest step ({})", tie);
  return fmt::format(" (rank {}, within {:.0f} % of {}: {} figures measured, rank {} has {})", shown.rank,
                     100 * kNearlySlowestShare, step, MeasuredUtilizations(shown), slowest.rank,
                     MeasuredUtilizations(slowest));
}

// The pipeline bubble is a part only of ranks in a pipeline: elsewhere it is left out, not shown as 0.
// The pipeline bubble shows only on pipelines; the unclassified and fused comm parts only where the text
// has some, and always in the JSON, whose readers look them up by name.
bool ShownPart(const TimeSplit& split, TimePart part) {
  const bool where_some =
      part == TimePart::kPipelineBubble || part == TimePart::kUnclassified || part == TimePart::kFusedComm;
  return !where_some || split.part(part) > 0;
}
bool ShownInJson(const TimeSplit& split, TimePart part) {
  return part == TimePart::kUnclassified || part == TimePart::kFusedComm || ShownPart(split, part);
}

// The width of the split's label column: 40, or the longest label shown where one is longer (the fused
// comm part's), so that the figures stay in one column.
size_t SplitLabelWidth(const TimeSplit& split) {
  size_t width = 40;
  for (const PartLabel& p : kParts) {
    if (ShownPart(split, p.part)) width = std::max(width, PartLabelOf(split, p).size());
  }
  return width;
}

void AppendSplit(const TimeSplit& split, std::string_view population, std::string* out) {
  const size_t width = SplitLabelWidth(split);
  *out += fmt::format("{:<{}}{:>12}{:>9}\n", fmt::format("Where the step goes{}", population), width + 2, "ms/step",
                      "share");
  for (const PartLabel& p : kParts) {
    const double ns = split.part(p.part);
    if (!ShownPart(split, p.part)) continue;
    // Where no operators class the computing, the classed parts show only where another rank has some.
    const bool classed_part = p.part == TimePart::kComputeBound || p.part == TimePart::kMemoryBound;
    if (!split.compute_classes_known && classed_part && ns <= 0) continue;
    const std::string_view label = PartLabelOf(split, p);
    *out += fmt::format("  {:<{}}{:>12.3f}{:>8.1f}%  {}\n", label, width, ns / 1e6, 100 * split.Share(p.part),
                        Bar(split.Share(p.part)));
  }
}

// The headline rank's own largest part (HeadlineRank: the slowest, or on a tie the one that bounds the
// step), under a table of the mean over ranks: where a straggler differs.
void AppendSlowestRankPart(const AdvisorResult& result, const RankAdvice& slowest, std::string* out) {
  const RankAdvice& rank = HeadlineRank(result, slowest);
  const PartLabel* largest = &kParts.front();
  for (const PartLabel& p : kParts) {
    if (rank.split.part(p.part) > rank.split.part(largest->part)) largest = &p;
  }
  // Unclassed computing (a rank with only torch_npu's step table) is in the unclassified part: said as it is.
  const std::string_view label = PartLabelOf(rank.split, *largest);
  *out += Lines(fmt::format("{}: mean step {:.3f} ms, largest part {} {}", SlowestRankName(result, slowest),
                            rank.split.step_ns / 1e6, label, PercentCell(rank.split.Share(largest->part))),
                "  ", "    ");
}

// `wrap_heading`: the heading names the rank that bounds the step with its reason, wrapped where that runs
// past the edge.
void AppendUtilizations(const RankAdvice& rank, std::string_view population, bool wrap_heading, std::string* out) {
  const std::string heading = fmt::format("Utilization against the tuning guide's thresholds{}", population);
  *out += wrap_heading && heading.size() > kColumns ? Lines(heading, "", "    ") : heading + "\n";
  for (const UtilizationCheck& check : rank.utilizations) {
    // As the guide reads it: "Cube 65.0 % < 70 %", "memory bandwidth 55.0 % < 60 %".
    std::string label = check.label.empty() ? check.name : check.label;
    if (label == "Cube" || label == "Vector" || label == "SM efficiency" || label == "SMs active") {
      label += " (compute units)";
    }
    const std::string reading = check.value_pct
                                    ? fmt::format("{:>6.1f} % {:<2} {:.0f} %", *check.value_pct,
                                                  check.Below() ? "<" : ">=", check.threshold_pct)
                                    : fmt::format("{:>8} (threshold {:.0f} %)", kUnknownText, check.threshold_pct);
    const std::string verdict =
        !check.value_pct ? ""
        : check.Bottleneck()
            ? "  -> bottleneck"
            : (check.Below()
                   ? fmt::format("  but {} only {:.1f} % of the step: not the bottleneck",
                                 check.immaterial_part == "compute" ? "compute holds" : check.immaterial_part + " hold",
                                 100 * *check.immaterial_share)
                   : "  ok");
    // A long verdict goes on under the reading rather than past the edge.
    const std::string line = fmt::format("  {:<28}{}{}", label, reading, verdict);
    *out += line.size() <= kColumns ? line + "\n" : Lines(line, "", "      ");
    *out += Wrapped(check.value_pct ? "measured as: " + check.measured_as : check.measured_as, kUtilizationWidth);
    if (!check.how_to_measure.empty())
      *out += Wrapped("how to measure: " + check.how_to_measure.str(), kUtilizationWidth);
  }
}

// The share is of the slowest rank's step on a run of several ranks (`of_slowest`), said so beside it.
std::string GainText(const Finding& finding, double step_ns, bool of_slowest) {
  if (finding.estimated_gain_ns <= 0) {
    // A rule that estimated a gain whose time the findings above already claim.
    if (finding.gain_unknown()) return "gain unknown";
    // A pipeline stage that waits for the bounding one: the cut says why (advisor.h).
    if (finding.gain_cut.starts_with("no step gain")) return finding.gain_cut;
    return finding.uncapped_gain_ns > 0 ? "no gain left (its time is counted above)" : "no time gain claimed";
  }
  return fmt::format("-{:.3f} ms/step ({:.1f} %{}{})", finding.estimated_gain_ns / 1e6,
                     step_ns > 0 ? 100 * finding.estimated_gain_ns / step_ns : 0,
                     of_slowest ? " of the slowest step" : "",
                     finding.gain_capped() ? fmt::format("; of -{:.3f}{}{}", finding.uncapped_gain_ns / 1e6,
                                                         finding.gain_cut.empty() ? "" : ": ", finding.gain_cut)
                                           : std::string());
}

// Where a finding fired, on a run of several ranks: " [rank 3]", " [ranks 0,1; figures of rank 1]",
// " [all 1024 ranks; figures of rank 3; the other ranks' median -0.331 ms]". Its numbers are one rank's,
// which need not be the rank a table beside it shows, and one that fired on a single rank, or whose quoted
// rank stands out, is that rank's, not the job's.
std::string RanksText(const Finding& finding, size_t run_ranks) {
  if (run_ranks <= 1 || finding.ranks.empty()) return "";
  if (finding.ranks.size() == 1) return fmt::format(" [rank {}]", finding.ranks.front());
  const std::string where =
      finding.ranks.size() == run_ranks ? fmt::format("all {} ranks", run_ranks) : "ranks " + RankRanges(finding.ranks);
  std::string others;
  if (finding.others_median_gain_ns) {
    others = *finding.others_median_gain_ns > 0
                 ? fmt::format("; the other ranks' median -{:.3f} ms", *finding.others_median_gain_ns / 1e6)
                 : std::string("; no gain left on most other ranks");
  }
  return fmt::format(" [{}; figures of rank {}{}]", where, finding.evidence_rank, others);
}

// The value as recorded; the caller escapes it.
std::string RawEvidenceValue(const Evidence& e) {
  if (!e.number) return std::string(e.text);
  const double v = *e.number;
  const std::string number = v == static_cast<double>(static_cast<int64_t>(v)) && std::abs(v) < 1e15
                                 ? fmt::format("{}", static_cast<int64_t>(v))
                                 : fmt::format("{:.3f}", v);
  if (e.unit == "rank") return "rank " + number;  // an id, not an amount: "straggler_rank: rank 3"
  return e.unit.empty() || e.unit == "count" ? number : number + " " + e.unit.str();
}

// "78 % in `a.b_*.c`, 21 % in `d`": the modules holding most of a finding's evidence; "" when none.
std::string ModulesText(const Finding& finding) {
  std::string text;
  for (const ModuleShare& m : finding.modules) {
    text += fmt::format("{}{:.0f} % in `{}`", text.empty() ? "" : ", ", 100 * m.share, EscapeText(m.path));
  }
  return text;
}

}  // namespace

std::string RenderAnalyzeText(const AdvisorResult& result) {
  std::string out;
  const RankAdvice* rank = SlowestRank(result);
  if (!rank) return "no ranks\n";
  const RankAdvice& named = HeadlineRank(result, *rank);
  // Wrapped: the rank that bounds a tie comes with its reason.
  out +=
      Lines(fmt::format("tuneprof analyze: {} rank{}; {}: {} step{}, mean step {:.3f} ms{}", result.ranks.size(),
                        result.ranks.size() == 1 ? "" : "s",
                        result.ranks.size() > 1 ? SlowestRankName(result, *rank) : fmt::format("rank {}", rank->rank),
                        named.split.steps, named.split.steps == 1 ? "" : "s", named.split.step_ns / 1e6,
                        named.split.cpu_only ? " (CPU-only trace)" : ""),
            "", "  ");
  if (!result.bounded_by.empty()) out += fmt::format("  {}\n", result.bounded_by);
  out += "\n";
  const bool several = result.ranks.size() > 1;
  AppendSplit(result.mean_split, several ? MeanOverRanksNote(result) : "", &out);
  if (several) AppendSlowestRankPart(result, *rank, &out);
  out += "\n";
  const RankAdvice* shown = UtilizationRank(result, *rank);
  // The rank that bounds the step speaks for the run, unless it lacks figures the other choice has.
  if (const RankAdvice* bounding = BoundingRankOf(result);
      bounding != nullptr && MeasuredUtilizations(*bounding) >= MeasuredUtilizations(*shown)) {
    shown = bounding;
  }
  AppendUtilizations(*shown, several ? UtilizationPopulation(result, *shown, *rank) : "",
                     shown == BoundingRankOf(result), &out);
  out += "\n";
  // Wrapped, not cut: the reason ends with the population it speaks of ("mean over 1024 ranks").
  out += fmt::format("Dominant bottleneck: {}\n", BottleneckName(result.dominant));
  out += Lines(result.dominant_reason, "  ", "  ") + "\n";
  out += result.findings.empty() ? "No findings.\n" : "Top strategies (estimated gain per step)\n";
  for (size_t i = 0; i < result.findings.size() && i < kTopStrategies; ++i) {
    const Finding& f = result.findings[i];
    // A long gain text and population go on their own line rather than past the 100 columns.
    const std::string head =
        fmt::format("{:>2}. {:<28} {}", i + 1, f.id, GainText(f, result.step_ns, result.ranks.size() > 1));
    const std::string ranks = RanksText(f, result.ranks.size());
    if (ranks.empty() || head.size() + ranks.size() <= kColumns) {
      out += head.size() + ranks.size() <= kColumns ? head + ranks + "\n" : Lines(head, "", "    ");
    } else {
      out += (head.size() <= kColumns ? head + "\n" : Lines(head, "", "    ")) + Lines(ranks.substr(1), "    ", "    ");
    }
    // Wrapped, not cut: a title's last clause (whose figures, which rule disagrees) and an API to copy
    // are what a cut loses.
    out += Lines(f.title, "    ", "    ");
    if (!f.modules.empty()) out += Lines("modules: " + ModulesText(f), "    ", "      ");
    if (!f.apis.empty()) out += Lines(f.apis.front(), "    -> ", "       ");
  }
  if (result.findings.size() > kTopStrategies) {
    out += fmt::format("({} more: tuneprof advise)\n", result.findings.size() - kTopStrategies);
  }
  return EscapeTextKeepingLines(out);
}

// The straggler finding's slowest / fastest rank are the ranks computing most / least per step, not the late
// rank nor the waiting one: the text says so beside the key, which JSON readers keep.
std::string EvidenceLabel(const Finding& f, const Evidence& e) {
  if (f.id != "communication.straggler") return std::string(e.label);
  if (e.label == "slowest_rank") return "slowest_rank (computes most per step)";
  if (e.label == "fastest_rank") return "fastest_rank (computes least per step)";
  return std::string(e.label);
}

std::string RenderAdviseText(const AdvisorResult& result) {
  std::string out = Lines(
      fmt::format("Dominant bottleneck: {} ({})", BottleneckName(result.dominant), result.dominant_reason), "", "  ");
  out += "\n";
  if (result.findings.empty()) out += "No findings.\n";
  for (size_t i = 0; i < result.findings.size(); ++i) {
    const Finding& f = result.findings[i];
    out += Lines(fmt::format("{}. {} [{}] {}{}", i + 1, f.id, FindingCategoryName(f.category),
                             GainText(f, result.step_ns, result.ranks.size() > 1), RanksText(f, result.ranks.size())),
                 "", "   ");
    out += Lines(f.title, "   ", "   ");
    for (const Evidence& e : f.evidence) {
      out += Lines(fmt::format("{}: {}", EvidenceLabel(f, e), RawEvidenceValue(e)), "   - ", "     ");
    }
    if (!f.modules.empty()) out += Lines("modules: " + ModulesText(f), "   ", "     ");
    out += Lines("strategy: " + std::string(f.strategy), "   ", "     ");
    for (const SharedText& api : f.apis) out += Lines("api: " + std::string(api), "   ", "     ");
    out += Lines("gain model: " + std::string(f.gain_model), "   ", "     ");
    out += "\n";
  }
  return EscapeTextKeepingLines(out);
}

namespace {

void WriteSplit(JsonWriter* w, const TimeSplit& split) {
  w->Key("split_us").BeginObject();
  for (const PartLabel& p : kParts) {
    if (ShownInJson(split, p.part)) w->Key(TimePartName(p.part)).Double(Micros(split.part(p.part)));
  }
  w->EndObject();
  w->Key("compute_bound_share").Double(split.compute_bound_share);
  w->Key("unclassified_share").Double(split.unclassified_share);
  w->Key("fused_comm_share").Double(split.fused_comm_share);
  w->Key("compute_classes_known").Bool(split.compute_classes_known);
  w->Key("dataloader_us").Double(Micros(split.dataloader_ns));
}

void WriteRank(JsonWriter* w, const RankAdvice& rank) {
  w->BeginObject();
  w->Key("rank").Int(rank.rank);
  w->Key("path").String(rank.path);
  w->Key("steps").Uint(rank.split.steps);
  w->Key("step_us").Double(Micros(rank.split.step_ns));
  w->Key("cpu_only").Bool(rank.split.cpu_only);
  WriteSplit(w, rank.split);
  w->Key("dominant_bottleneck").String(BottleneckName(rank.dominant));
  w->Key("utilizations").BeginArray();
  for (const UtilizationCheck& check : rank.utilizations) {
    w->BeginObject();
    w->Key("name").String(check.name);
    w->Key("label").String(check.label.empty() ? check.name : check.label);
    JsonNumberField(*w, "value_pct", check.value_pct);
    w->Key("threshold_pct").Double(check.threshold_pct);
    w->Key("below_threshold");
    check.value_pct ? w->Bool(check.Below()) : w->Null();
    w->Key("bottleneck");
    check.value_pct ? w->Bool(check.Bottleneck()) : w->Null();
    JsonTextField(*w, "source", check.source);
    w->Key("measured_as").String(check.measured_as);
    JsonTextField(*w, "how_to_measure", check.how_to_measure);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteFinding(JsonWriter* w, const Finding& f, double step_ns) {
  w->BeginObject();
  w->Key("id").String(f.id);
  w->Key("category").String(FindingCategoryName(f.category));
  w->Key("title").String(f.title);
  w->Key("metric").String(f.metric);
  JsonNumberField(*w, "value", f.value);
  JsonNumberField(*w, "threshold", f.threshold);
  w->Key("unit").String(f.unit);
  w->Key("estimated_gain_us").Double(Micros(f.estimated_gain_ns));
  w->Key("estimated_gain_pct").Double(step_ns > 0 ? 100 * f.estimated_gain_ns / step_ns : 0);
  // The cut is named only where it cut the gain.
  JsonTextField(*w, "gain_cut",
                f.estimated_gain_ns < 0.995 * f.uncapped_gain_ns ? std::string_view(f.gain_cut) : std::string_view());
  w->Key("uncapped_gain_us").Double(Micros(f.uncapped_gain_ns));
  w->Key("saves_from").String(TimePartName(f.saves_from));
  w->Key("gain_model").String(f.gain_model);
  w->Key("evidence").BeginObject();
  for (const Evidence& e : f.evidence) {
    w->Key(e.label);
    e.number ? w->Double(*e.number) : w->String(e.text);
  }
  w->EndObject();
  w->Key("evidence_units").BeginObject();
  for (const Evidence& e : f.evidence) {
    if (e.number) w->Key(e.label).String(e.unit);
  }
  w->EndObject();
  // Only where some module holds enough of the evidence, so that documents of traces without module
  // ranges keep their form.
  if (!f.modules.empty()) {
    w->Key("modules").BeginArray();
    for (const ModuleShare& m : f.modules) {
      w->BeginObject().Key("path").String(m.path).Key("share").Double(m.share).EndObject();
    }
    w->EndArray();
  }
  w->Key("strategy").String(f.strategy);
  w->Key("apis").BeginArray();
  for (const SharedText& api : f.apis) w->String(api);
  w->EndArray();
  w->Key("ranks").BeginArray();
  for (int64_t rank : f.ranks) w->Int(rank);
  w->EndArray();
  w->Key("evidence_rank").Int(f.evidence_rank);
  JsonNumberField(*w, "others_median_gain_us",
                  f.others_median_gain_ns ? std::optional<double>(Micros(*f.others_median_gain_ns)) : std::nullopt);
  w->EndObject();
}

}  // namespace

void WriteAdviseJson(const AdvisorResult& result, std::string_view schema, const std::vector<std::string>& warnings,
                     JsonWriter* writer) {
  JsonWriter& w = *writer;
  w.BeginObject();
  w.Key("schema").String(schema);
  w.Key("dominant_bottleneck").String(BottleneckName(result.dominant));
  w.Key("dominant_reason").String(result.dominant_reason);
  if (!result.bounded_by.empty()) w.Key("bounded_by").String(result.bounded_by);
  if (result.bounding_rank) {
    w.Key("bounding_rank").Int(result.bounding_rank->rank);
    w.Key("bounding_rank_reason").String(result.bounding_rank->reason);
  }
  w.Key("step_us").Double(Micros(result.step_ns));
  w.Key("mean_step_us").Double(Micros(result.mean_split.step_ns));
  w.Key("mean_split_us").BeginObject();
  for (const PartLabel& p : kParts) {
    if (ShownInJson(result.mean_split, p.part)) {
      w.Key(TimePartName(p.part)).Double(Micros(result.mean_split.part(p.part)));
    }
  }
  w.EndObject();
  w.Key("ranks").BeginArray();
  for (const RankAdvice& rank : result.ranks) WriteRank(&w, rank);
  w.EndArray();
  w.Key("findings").BeginArray();
  for (const Finding& f : result.findings) WriteFinding(&w, f, result.step_ns);
  w.EndArray();
  WriteWarnings(warnings, &w);
  w.EndObject();
}

std::string RenderAdviseJson(const AdvisorResult& result, std::string_view schema,
                             const std::vector<std::string>& warnings) {
  std::string out;
  JsonWriter w(&out);
  WriteAdviseJson(result, schema, warnings, &w);
  out += "\n";
  return out;
}

}  // namespace tuneprof

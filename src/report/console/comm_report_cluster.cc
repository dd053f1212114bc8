// The cluster view: the per-rank step table with its spread, the pipeline bubble it holds, and the
// slow-rank outlier tests.
#include "report/console/comm_report_sections.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::comm_sections {
namespace {

std::string OutlierLine(const RankOutlierTest& t) {
  std::string line =
      fmt::format("  {:<14}{:<9} {} ranks, ", t.metric, SuspectEndName(t.test.suspect_end), t.ranks.size());
  if (!t.test.statistic) return line + fmt::format("not tested: {}\n", t.test.why_not);
  line += fmt::format("{} {} = {:.4f} vs critical {:.3f}: ", OutlierTestName(t.test.test), t.test.ratio,
                      *t.test.statistic, *t.test.critical_value);
  if (t.outlier_ranks.empty()) return line + "no outlier\n";
  return line + fmt::format("outlier rank {}\n", fmt::join(t.outlier_ranks, ", "));
}

bool AnyBubble(const CommAnalysis& a) {
  return std::any_of(a.ranks.begin(), a.ranks.end(),
                     [&](const RankCommunication& r) { return SplitBubble(a, r).bubble_ns >= kShownBubbleNs; });
}

// max − min of `value` over the ranks, and that spread's share of the ranks' mean step (as the other
// columns' shares), as cells.
template <typename Value>
std::pair<std::string, std::string> SpreadCells(const CommAnalysis& a, Value value, int width) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const RankCommunication& r : a.ranks) {
    lo = std::min(lo, value(r));
    hi = std::max(hi, value(r));
  }
  const double step = MeanReportedStepsNs(a.ranks);
  const double share = step > 0 ? static_cast<double>(hi - lo) / step : 0;
  return {
      fmt::format("{:>{}.3f}", Millis(hi - lo), width),
      fmt::format("{:>{}}",
                  step > 0 ? PercentCell(share) + (share > kStepSpreadThreshold ? "!" : "") : std::string(kEmptyCell),
                  width)};
}

void WriteOutlierTest(JsonWriter* w, const RankOutlierTest& t) {
  w->BeginObject();
  w->Key("metric").String(t.metric);
  w->Key("suspect").String(SuspectEndName(t.test.suspect_end));
  w->Key("test").String(OutlierTestName(t.test.test));
  JsonTextField(*w, "ratio", t.test.ratio);
  w->Key("samples").Uint(t.test.samples);
  JsonNumberField(*w, "statistic", t.test.statistic);
  JsonNumberField(*w, "critical_value", t.test.critical_value);
  JsonNumberField(*w, "confidence",
                  t.test.test == OutlierTestKind::kDixonQ ? std::optional<double>(kDixonConfidence) : std::nullopt);
  JsonTextField(*w, "why_not", t.test.why_not);
  w->Key("ranks");
  JsonInts(*w, t.ranks);
  w->Key("values_ms").BeginArray();
  for (double v : t.values_ms) w->Double(v);
  w->EndArray();
  w->Key("outlier_ranks");
  JsonInts(*w, t.outlier_ranks);
  w->EndObject();
}

// The table's last two rows: each column's max − min over the ranks, and that spread's share of the step.
void AppendSpreadRows(const CommAnalysis& a, bool bubbles, std::string* out) {
  const CrossRankCommunication& x = a.cross_rank;
  std::string spread = fmt::format("  {:<8}", "max-min");
  std::string share = fmt::format("  {:<8}", "% step");
  for (size_t k = 0; k < x.step_spread.size(); ++k) {
    const StepSpread& s = x.step_spread[k];
    const int width = k == 1 ? 16 : 14;
    if (k == 1 && bubbles) {  // the exposed column less the bubble
      const auto [range, part] = SpreadCells(
          a, [&](const RankCommunication& r) { return SplitBubble(a, r).exposed_ns; }, width);
      spread += range;
      share += part;
      continue;
    }
    spread += fmt::format("{:>{}.3f}", Millis(s.max_ns - s.min_ns), width);
    share += fmt::format(
        "{:>{}}", s.share_of_step ? PercentCell(s.share_of_step) + (s.uneven ? "!" : "") : std::string(kEmptyCell),
        width);
  }
  if (bubbles) {
    const auto [range, part] = SpreadCells(
        a, [&](const RankCommunication& r) { return SplitBubble(a, r).bubble_ns; }, 14);
    spread += range;
    share += part;
  }
  *out += spread + "\n" + share + "   (! = above 5 % of the step)\n";
}

// The slow-rank outlier tests, then the ranks the per-collective votes named.
void AppendOutlierTests(const CrossRankCommunication& x, const ShownRanks& shown, std::string* out) {
  *out += "slow-rank outlier tests (msprof-analyze slow_rank: Dixon Q at 99.5 % up to 100 ranks, 3-sigma above):\n";
  for (const RankOutlierTest& t : x.outliers) *out += OutlierLine(t);
  if (x.vote_collectives > 0) {
    std::string votes;
    size_t votes_left_out = 0;
    for (const RankWait& w : x.ranks) {
      if (w.slow_affect_count == 0) continue;
      if (shown.Shows(w.rank)) {
        votes += fmt::format(" rank {} x{}", w.rank, w.slow_affect_count);
      } else {
        ++votes_left_out;
      }
    }
    if (votes_left_out > 0) votes += fmt::format(" and {} more ranks", votes_left_out);
    *out += fmt::format("  per collective: {} matched collectives tested; shortest-rank outliers:{}\n",
                        x.vote_collectives, votes.empty() ? std::string(" none") : votes);
  }
}

}  // namespace

BubbleSplit SplitBubble(const CommAnalysis& a, const RankCommunication& r) { return SplitBubble(a.cross_rank, r); }

// The per-rank step table with its max − min spread, and the slow-rank outlier tests (comm_outliers.h). On
// pipeline runs a bubble column holds the pipeline's waits, so computing + exposed + free + bubble is the step.
void AppendClusterView(const CommAnalysis& a, const ShownRanks& shown, std::string* out) {
  const CrossRankCommunication& x = a.cross_rank;
  if (x.step_spread.empty()) return;
  const bool bubbles = AnyBubble(a);
  *out +=
      fmt::format("\nper-rank step table (ms, all steps):\n  {:<8}{:>14}{:>16}{:>14}{}{:>12}\n", "rank", "computing",
                  "exposed comm", "free", bubbles ? fmt::format("{:>14}", "bubble") : "", "slow votes");
  size_t left_out = 0;
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    const RankCommunication& r = a.ranks[i];
    if (!shown.Shows(r.rank)) {
      ++left_out;
      continue;
    }
    const BubbleSplit split = SplitBubble(a, r);
    *out += fmt::format("  {:<8}{:>14.3f}{:>16.3f}{:>14.3f}{}{:>12}\n", r.rank, Millis(r.computing_ns),
                        Millis(split.exposed_ns), Millis(r.free_ns),
                        bubbles ? fmt::format("{:>14.3f}", Millis(split.bubble_ns)) : "",
                        i < x.ranks.size() && x.ranks[i].matched ? fmt::format("{}", x.ranks[i].slow_affect_count)
                                                                 : std::string(kEmptyCell));
  }
  *out += LeftOut(left_out, "  ");
  AppendSpreadRows(a, bubbles, out);
  AppendOutlierTests(x, shown, out);
}

void WriteClusterView(JsonWriter* w, const CrossRankCommunication& x) {
  w->Key("step_spread").BeginArray();
  for (const StepSpread& s : x.step_spread) {
    w->BeginObject();
    w->Key("metric").String(s.metric);
    w->Key("min_us").Double(Micros(s.min_ns));
    w->Key("min_rank").Int(s.min_rank);
    w->Key("max_us").Double(Micros(s.max_ns));
    w->Key("max_rank").Int(s.max_rank);
    JsonNumberField(*w, "share_of_step", s.share_of_step);
    w->Key("uneven").Bool(s.uneven);
    w->EndObject();
  }
  w->EndArray();
  w->Key("outliers").BeginArray();
  for (const RankOutlierTest& t : x.outliers) WriteOutlierTest(w, t);
  w->EndArray();
  w->Key("vote_collectives").Uint(x.vote_collectives);
}

}  // namespace tuneprof::comm_sections

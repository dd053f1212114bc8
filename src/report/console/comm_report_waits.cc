// Matched collectives across ranks: wait vs transfer per rank, the clocks' offsets, the straggler and what
// late ranks did.
#include "report/console/comm_report_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <utility>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::comm_sections {
namespace {

// One line when the ranks share a clock; the offsets taken out otherwise.
void AppendClocks(const ClockAlignment& clocks, const ShownRanks& shown, std::string* out) {
  if (!clocks.reference_rank) return;
  if (!clocks.spread_ns) {  // no rank but the reference placed
    *out +=
        "  clocks: not checked (no matched collective that ends on all its ranks together; send/recv do not), so "
        "arrivals are compared as the traces wrote them\n";
    return;
  }
  if (!clocks.applied) {
    int64_t largest = 0;  // the offset farthest from the reference's clock
    for (const RankClockOffset& r : clocks.ranks) largest = std::max(largest, r.offset_ns ? std::abs(*r.offset_ns) : 0);
    // Offsets the estimate could not support stay in the starts: saying "one clock" would contradict the
    // straggler line, which counts them as doubt.
    *out += largest < kMinAppliedOffsetNs
                ? fmt::format(
                      "  clocks: one clock (offsets from the ends of matched collectives within {:.3f} ms of "
                      "rank {})\n",
                      Millis(*clocks.spread_ns), *clocks.reference_rank)
                : fmt::format(
                      "  clocks: offsets of up to {:.3f} ms from rank {}'s clock (ends of matched collectives) "
                      "left in: none of {:.3f} ms or more rests on {} collectives or more and exceeds three "
                      "times its uncertainty, so arrivals are compared as the traces wrote them\n",
                      Millis(largest), *clocks.reference_rank, Millis(kMinAppliedOffsetNs), kMinAlignmentSamples);
    return;
  }
  *out += fmt::format(
      "  clocks: offsets taken out before comparing arrivals (rank {}'s clock, from the ends of matched "
      "collectives; spread {:.3f} ms):\n",
      *clocks.reference_rank, Millis(*clocks.spread_ns));
  size_t left_out = 0;
  std::optional<std::pair<int64_t, int64_t>> left_out_range;  // smallest and largest offset left out
  for (const RankClockOffset& r : clocks.ranks) {
    if (!r.applied) continue;
    if (!shown.Shows(r.rank)) {
      ++left_out;
      left_out_range = left_out_range ? std::pair{std::min(left_out_range->first, *r.offset_ns),
                                                  std::max(left_out_range->second, *r.offset_ns)}
                                      : std::pair{*r.offset_ns, *r.offset_ns};
      continue;
    }
    *out += fmt::format("    rank {}: {:+.3f} ms +- {:.3f} ms over {} collectives\n", r.rank, Millis(*r.offset_ns),
                        Millis(r.uncertainty_ns), r.collectives);
  }
  if (left_out_range) {
    const auto same_clock =
        std::count_if(clocks.ranks.begin(), clocks.ranks.end(), [](const RankClockOffset& r) { return !r.applied; });
    *out += fmt::format(
        "    ... {} more ranks, offsets {:+.3f} to {:+.3f} ms; {} ranks on rank {}'s clock (tuneprof comm --json lists "
        "every rank)\n",
        left_out, Millis(left_out_range->first), Millis(left_out_range->second), same_clock, *clocks.reference_rank);
  }
}

// The cause columns of one row (ms per step), in the causes' order.
std::string CauseCells(const RankWait& w, double steps) {
  std::string cells;
  for (size_t c = 0; c < kWaitCauseCount; ++c) cells += fmt::format("{:>13.3f}", Millis(w.held_up_by_cause[c]) / steps);
  return cells;
}

std::string CauseHeader() {
  std::string header;
  for (size_t c = 0; c < kWaitCauseCount; ++c)
    header += fmt::format("{:>13}", WaitCauseName(static_cast<WaitCause>(c)));
  return header;
}

// Where the pipeline's hand-offs held ranks up: one line that they are left out, and where they are charged.
std::string HandOffsLeftOut(const CrossRankCommunication& x) {
  uint64_t late = 0;
  for (const RankWait& w : x.ranks) late += w.late_hand_offs;
  if (late == 0) return "";
  return fmt::format(
      "  ({} late arrivals at the pipeline's hand-offs between stages left out: the pipeline stages above charge "
      "their wait once, to the slowest stage's compute and the schedule's fill / drain)\n",
      late);
}

// Per rank that held collectives up beyond launch jitter: by how much per step and what it was doing.
void AppendWaitCauses(const CommAnalysis& a, const ShownRanks& shown, std::string* out) {
  const CrossRankCommunication& x = a.cross_rank;
  if (!x.wait_causes_known) return;
  std::string rows;
  size_t left_out = 0;
  for (size_t i = 0; i < x.ranks.size() && i < a.ranks.size(); ++i) {
    const RankWait& w = x.ranks[i];
    if (w.late_collectives == 0) continue;
    if (!shown.Shows(w.rank)) {
      ++left_out;
      continue;
    }
    const double steps = static_cast<double>(std::max<uint64_t>(a.ranks[i].steps, 1));
    rows += fmt::format("  {:<8}{:>7}{:>12.3f}", w.rank, w.late_collectives, Millis(w.held_up_ns) / steps);
    rows += CauseCells(w, steps) + "\n";
    for (size_t k = 0; k < w.late_operator_extra.size() && k < 3; ++k) {
      // Operators far below the lateness are the ranks' own noise, not its cause.
      if (w.late_operator_extra[k].ns * 10 < w.held_up_ns) break;
      rows += fmt::format("           +{:.3f} ms/step in {} (vs the median rank, before its late arrivals)\n",
                          Millis(w.late_operator_extra[k].ns) / steps, EscapeText(w.late_operator_extra[k].name));
    }
  }
  const std::string hand_offs = HandOffsLeftOut(x);
  if (rows.empty()) {
    if (!hand_offs.empty()) *out += "\nwhy ranks wait: no collective held up beyond launch jitter\n" + hand_offs;
    return;
  }
  *out +=
      "\nwhy ranks wait: what each late rank did more than the median rank before the collectives it held up "
      "(ms per step; held up: from the others' median arrival to its own, at most the median rank's wait, "
      "less what is unexplained)\n";
  *out += fmt::format("  {:<8}{:>7}{:>12}", "rank", "late", "held up") + CauseHeader();
  *out += "\n" + rows + LeftOut(left_out, "  ") + hand_offs;
}

}  // namespace

// The matched collectives per rank: wait vs transfer, the clocks, the straggler and why ranks waited.
void AppendRankWaits(const CommAnalysis& a, const ShownRanks& shown, std::string* out) {
  const CrossRankCommunication& x = a.cross_rank;
  if (x.matched_collectives == 0) return;
  *out += fmt::format("\nacross ranks: {} collectives matched (group + sequence; send / recv by peer), {} unmatched\n",
                      x.matched_collectives, x.unmatched_collectives);
  *out += fmt::format("  {:<8}{:>9}{:>13}{:>13}{:>13}{:>8}{:>8}{:>14}\n", "rank", "matched", "comm ms", "wait ms",
                      "transfer ms", "wait%", "last", "caused ms");
  size_t left_out = 0;
  for (const RankWait& w : x.ranks) {
    if (!shown.Shows(w.rank)) {
      ++left_out;
      continue;
    }
    *out += fmt::format("  {:<8}{:>9}{:>13.3f}{:>13.3f}{:>13.3f}{:>8}{:>8}{:>14.3f}\n", w.rank, w.matched,
                        Millis(w.communication_ns), Millis(w.wait_ns), Millis(w.transfer_ns),
                        PercentNumberCell(w.wait_ratio), w.times_last, Millis(w.wait_caused_ns));
  }
  *out += LeftOut(left_out, "  ");
  AppendClocks(x.clocks, shown, out);
  if (!x.straggler_rank) {
    // Without a straggler the reason says why, where the pipeline's hand-offs held the waits.
    *out += x.straggler_reason.empty() ? std::string("  straggler: none (no rank made the others wait)\n")
                                       : fmt::format("  straggler: none: {}\n", x.straggler_reason);
  } else if (x.straggler_within_clock_uncertainty) {
    *out +=
        fmt::format("  straggler: not named: rank {} ({}); align the hosts' clocks (PTP, chrony) and profile again\n",
                    *x.straggler_rank, x.straggler_reason);
  } else if (x.straggler_stands_out) {
    *out += fmt::format("  straggler: rank {} ({})\n", *x.straggler_rank, x.straggler_reason);
  } else {
    *out += fmt::format("  straggler: none stands out: rank {} made the others wait longest ({})\n", *x.straggler_rank,
                        x.straggler_reason);
  }
  AppendWaitCauses(a, shown, out);
}

void WriteClocks(JsonWriter* w, const ClockAlignment& clocks) {
  w->Key("clocks").BeginObject();
  w->Key("reference_rank");
  JsonIntOrNull(*w, clocks.reference_rank);
  w->Key("applied").Bool(clocks.applied);
  JsonMicrosField(*w, "spread_us", clocks.spread_ns);
  w->Key("ranks").BeginArray();
  for (const RankClockOffset& r : clocks.ranks) {
    w->BeginObject();
    w->Key("rank").Int(r.rank);
    JsonMicrosField(*w, "offset_us", r.offset_ns);
    JsonMicrosField(*w, "uncertainty_us", r.offset_ns ? std::optional<int64_t>(r.uncertainty_ns) : std::nullopt);
    w->Key("collectives").Uint(r.collectives);
    w->Key("applied").Bool(r.applied);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace tuneprof::comm_sections

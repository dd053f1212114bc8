#include "report/console/comm_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/comm/comm_links.h"
#include "analysis/core/comm_kernel_rules.h"
#include "base/json_writer.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/console/warnings_json.h"

namespace tuneprof {
namespace {

// ---- text

// Above kRanksListedOneByOne ranks, the text shows per-rank sections and table rows only for the ranks
// that stand out (NotableRanks) and folds the verdict's reasons over ranks: a thousand alike lines hide
// the verdict.
class ShownRanks {
 public:
  explicit ShownRanks(const CommAnalysis& a) : all_(a.ranks.size() <= kRanksListedOneByOne) {
    if (!all_) notable_ = NotableRanks(a);
  }
  bool all() const { return all_; }
  bool Shows(int64_t rank) const { return all_ || std::binary_search(notable_.begin(), notable_.end(), rank); }
  const std::vector<int64_t>& notable() const { return notable_; }

 private:
  bool all_;
  std::vector<int64_t> notable_;
};

// "ranks 0-2,4-63: exposed communication above 20.0 % of the step's device span: 2.786-2.804 ms per step,
// 58.0-58.3 %".
std::string FoldedReason(const ReasonGroup& group) {
  std::vector<std::string> figures;
  for (const ReasonFigure& f : group.figures) figures.push_back(ValueRange(f.min, f.max, f.decimals, f.unit));
  return FoldedOverRanks(group.ranks, group.what, figures);
}

// The line that stands for the rows a table left out.
std::string LeftOut(size_t left_out, std::string_view indent) {
  return left_out == 0 ? std::string()
                       : fmt::format("{}... {} more ranks (tuneprof comm --json lists every rank)\n", indent, left_out);
}

// Megabytes (10^6) in the collectives table's MB column; empty when no collective of the row had a size.
std::string MegabytesCell(int64_t bytes, uint64_t known) {
  if (known == 0) return std::string(kEmptyCell);
  return fmt::format("{:.3f}", static_cast<double>(bytes) / 1e6);
}

void AppendTypeRow(std::string_view label, const CollectiveTypeSummary& s, std::string* out) {
  *out += fmt::format("  {:<14}{:>7}{:>12}{:>11.3f}{:>10}{:>10}{:>8}{:>8}\n", label, s.count,
                      MegabytesCell(s.bytes, s.count_with_bytes), Millis(s.duration_ns), NumberCell(s.algbw_gbps, 2),
                      NumberCell(s.busbw_gbps, 2), PercentCell(s.utilization),
                      s.count_with_bytes ? fmt::format("{}", s.small_count) : std::string(kEmptyCell));
}

void AppendCollectives(const RankCommunication& r, std::string* out) {
  if (r.collectives.empty()) {
    *out += "  no collectives on the timeline\n";
    return;
  }
  *out += fmt::format("  {:<14}{:>7}{:>12}{:>11}{:>10}{:>10}{:>8}{:>8}\n", "type", "count", "MB", "sum ms", "algbw",
                      "busbw", "util", "small");
  for (const CollectiveTypeSummary& s : r.by_type) AppendTypeRow(CollectiveTypeName(s.type), s, out);
  if (r.by_type.size() > 1) AppendTypeRow("all", r.total, out);
  if (r.total.count_with_bytes > 0 && r.total.count_with_bytes < r.total.count) {
    // The rows' time is every collective's; their bandwidths can only be those with a size.
    *out += fmt::format("  algbw and busbw: over the {} of {} collectives with sizes ({:.3f} of {:.3f} ms)\n",
                        r.total.count_with_bytes, r.total.count, Millis(r.total.duration_with_bytes_ns),
                        Millis(r.total.duration_ns));
  }
  *out += r.link.transport.empty()
              ? fmt::format("  link: unknown ({})\n", EscapeText(r.link.why))
              : fmt::format("  link: {} {:.1f} GB/s per direction ({} profile; util = busbw / this)\n",
                            r.link.transport, *r.link.peak_gb_per_s, r.link.profile);
  if (r.small_message_share) {
    *out +=
        fmt::format("  small messages (< 1 MB): {:.1f}% of {} with known size\n  sizes:", *r.small_message_share * 100,
                    r.total.count_with_bytes);
    for (size_t b = 0; b < r.size_histogram.size(); ++b) {
      if (r.size_histogram[b] > 0) *out += fmt::format(" {} {}", SizeBucketLabel(b), r.size_histogram[b]);
    }
    *out += "\n";
  }
}

// The kernels that compute and communicate at once (Ascend MC2) of a rank, together.
struct FusedCommTotals {
  uint64_t count = 0;
  int64_t time_ns = 0;
  uint64_t with_bytes = 0;  // kernels whose message kernel_details' shapes give
  int64_t bytes = 0;
  int64_t time_with_bytes_ns = 0;
};

FusedCommTotals SumFusedComm(const RankCommunication& r) {
  FusedCommTotals t;
  std::unordered_map<std::string_view, bool> fused_by_name;  // names repeat: each is matched once
  for (const Collective& c : r.collectives) {
    if (c.source != CollectiveSource::kNcclKernel) continue;
    auto [it, added] = fused_by_name.try_emplace(c.name, false);
    if (added) {
      const CommKernelRule* rule = MatchCommKernel(c.name);
      it->second = rule != nullptr && rule->kind == CommKernelKind::kFusedComm;
    }
    if (!it->second) continue;
    ++t.count;
    t.time_ns += c.duration_ns;
    if (c.bytes < 0) continue;
    ++t.with_bytes;
    if (__builtin_add_overflow(t.bytes, c.bytes, &t.bytes)) t.bytes = std::numeric_limits<int64_t>::max();
    t.time_with_bytes_ns += c.duration_ns;
  }
  return t;
}

// Kernels that compute and communicate at once (Ascend MC2): listed above, counted as compute in the split.
// Their bytes are estimated from the operators' shapes (fused_comm_bytes.h), which the line says.
void AppendFusedComm(const RankCommunication& r, std::string* out) {
  const FusedCommTotals t = SumFusedComm(r);
  if (t.count == 0) return;
  std::string volume;
  if (t.with_bytes > 0) {
    volume = fmt::format(", {:.3f} MB over {} of them, estimated from kernel_details shapes",
                         static_cast<double>(t.bytes) / 1e6, t.with_bytes);
    if (t.time_with_bytes_ns > 0) {
      volume += fmt::format(" ({:.2f} GB/s algbw)",
                            static_cast<double>(t.bytes) / static_cast<double>(t.time_with_bytes_ns));
    }
  }
  *out += fmt::format(
      "  fused compute + communication kernels: {}, {:.3f} ms{} (counted as compute in the split, "
      "never exposed)\n",
      t.count, Millis(t.time_ns), volume);
}

void WriteFusedComm(JsonWriter* w, const RankCommunication& r) {
  const FusedCommTotals t = SumFusedComm(r);
  if (t.count == 0) return;  // the key only where fused kernels ran
  w->Key("fused_comm").BeginObject();
  w->Key("kernels").Uint(t.count);
  w->Key("time_us").Double(Micros(t.time_ns));
  w->Key("kernels_with_bytes").Uint(t.with_bytes);
  w->Key("bytes");
  t.with_bytes > 0 ? w->Int(t.bytes) : w->Null();
  w->Key("bytes_source");
  t.with_bytes > 0 ? w->String("kernel_details shapes") : w->Null();
  w->EndObject();
}

// Rows of the expert-parallel table the text shows; --json lists every step.
constexpr size_t kExpertParallelTextRows = 8;

std::string StepCell(const std::optional<int64_t>& step) { return step ? fmt::format("{}", *step) : "all"; }

// DeepEP / MC2 dispatch and combine per step: their time, what compute hides of it, bytes, share of step.
void AppendExpertParallel(const RankCommunication& r, std::string* out) {
  if (r.expert_parallel.empty()) return;
  int64_t all = 0, exposed = 0, steps_ns = 0;
  for (const ExpertParallelStep& s : r.expert_parallel) {
    all += s.all_to_all_ns;
    exposed += s.exposed_ns;
    steps_ns += s.step_ns;
  }
  const double n = static_cast<double>(r.expert_parallel.size());
  // The step is the one profile and analyze report (the longer of the host step and the device span,
  // StepTimeNs), said here because the line above it measures the device span alone.
  *out += fmt::format(
      "  expert-parallel all-to-all (dispatch / combine): {:.3f} ms a step, exposed {:.3f}, {} of "
      "the step{}; the step {:.3f} ms, as profile and analyze time it\n",
      Millis(all) / n, Millis(exposed) / n,
      PercentCell(steps_ns > 0 ? std::optional<double>(static_cast<double>(all) / static_cast<double>(steps_ns))
                               : std::nullopt),
      r.expert_parallel.size() > 1 ? fmt::format(" (mean over {} steps)", r.expert_parallel.size()) : std::string(),
      Millis(steps_ns) / n);
  *out += fmt::format("    {:<8}{:>9}{:>12}{:>10}{:>10}{:>10}{:>8}\n", "step", "kernels", "all-to-all", "exposed",
                      "hidden", "MB", "share");
  const size_t shown = std::min(r.expert_parallel.size(), kExpertParallelTextRows);
  for (size_t i = 0; i < shown; ++i) {
    const ExpertParallelStep& s = r.expert_parallel[i];
    *out += fmt::format("    {:<8}{:>9}{:>12.3f}{:>10.3f}{:>10.3f}{:>10}{:>8}\n", StepCell(s.step), s.kernels,
                        Millis(s.all_to_all_ns), Millis(s.exposed_ns), Millis(s.hidden_ns),
                        MegabytesCell(s.bytes, s.bytes >= 0 ? 1 : 0), PercentCell(s.share_of_step));
  }
  if (shown < r.expert_parallel.size()) {
    *out += fmt::format("    ... {} more steps (tuneprof comm --json lists every step)\n",
                        r.expert_parallel.size() - shown);
  }
}

void WriteExpertParallel(JsonWriter* w, const RankCommunication& r) {
  if (r.expert_parallel.empty()) return;  // the key only where dispatch / combine kernels ran
  w->Key("expert_parallel").BeginArray();
  for (const ExpertParallelStep& s : r.expert_parallel) {
    w->BeginObject();
    w->Key("step");
    s.step ? w->Int(*s.step) : w->Null();
    w->Key("step_us").Double(Micros(s.step_ns));
    w->Key("kernels").Uint(s.kernels);
    w->Key("all_to_all_us").Double(Micros(s.all_to_all_ns));
    w->Key("exposed_us").Double(Micros(s.exposed_ns));
    w->Key("hidden_us").Double(Micros(s.hidden_ns));
    w->Key("bytes");
    s.bytes >= 0 ? w->Int(s.bytes) : w->Null();
    w->Key("share_of_step");
    s.share_of_step ? w->Double(*s.share_of_step) : w->Null();
    w->EndObject();
  }
  w->EndArray();
}

void AppendAscend(const RankCommunication& r, std::string* out) {
  if (r.ascend_ops.empty() && r.ascend_links.empty()) return;
  uint64_t ops = 0, split_dropped = 0;
  double elapse = 0, transit = 0, wait = 0, sync = 0, idle = 0;
  for (const AscendCommOp& op : r.ascend_ops) {
    if (op.total) continue;
    ++ops;
    elapse += op.elapse_ms;
    if (!SplitKnown(op)) {
      ++split_dropped;
      continue;
    }
    transit += op.transit_ms;
    wait += op.wait_ms;
    sync += op.synchronization_ms;
    idle += op.idle_ms;
  }
  // No op with a known split: its sums are unknown, not 0.
  const bool any_split = split_dropped < ops || ops == 0;
  const auto split = [any_split](double ms) { return any_split ? fmt::format("{:.3f}", ms) : std::string("-"); };
  *out += fmt::format("  HCCL ops (communication.json / analysis.db): {}  elapse {:.3f} ms  transit {}  wait {}\n",
                      ops, elapse, split(transit), split(wait));
  *out += fmt::format("  sync {} ms  idle {}  wait ratio {}  sync ratio {}\n", split(sync), split(idle),
                      NumberCell(r.ascend_wait_ratio, 4), NumberCell(r.ascend_synchronization_ratio, 4));
  if (split_dropped > 0) {
    *out += fmt::format("  (transit, wait, sync, idle and ratios leave out {} of the {} ops: their steps' split is "
                        "impossible, see the warning)\n",
                        split_dropped, ops);
  }
  if (!r.ascend_transports.empty()) {
    *out += fmt::format("  {:<10}{:>12}{:>12}{:>10}{:>8}{:>10}\n", "transport", "MB", "ms", "GB/s", "util", "small pk");
    for (const AscendTransportTotal& t : r.ascend_transports) {
      *out += fmt::format("  {:<10}{:>12.3f}{:>12.3f}{:>10}{:>8}{:>10}\n", EscapeText(t.transport), t.size_mb,
                          t.time_ms, NumberCell(t.bandwidth_gbps, 2), PercentCell(t.utilization),
                          fmt::format("{}/{}", t.small_packets, t.packets));
    }
  }
  uint64_t slow = 0;
  for (const AscendMatrixLink& link : r.ascend_links) slow += link.slow ? 1 : 0;
  if (r.ascend_links.empty()) return;
  *out += fmt::format(
      "  matrix: {} links over op types, {} slow (< 20% of their transport's mean; links of under {} MB never are), "
      "global rank ids, each link once under its source rank:\n",
      r.ascend_links.size(), slow, kTinyLinkMb);
  *out += fmt::format("    {:<12}{:<10}{:>12}{:>12}{:>10}\n", "src->dst", "transport", "MB", "ms", "GB/s");
  bool unknown_end = false;
  for (const AscendMatrixLink& cell : r.ascend_rank_matrix) {
    unknown_end = unknown_end || cell.src_rank == kNoId || cell.dst_rank == kNoId;
    const std::string ends =
        fmt::format("{}->{}", LinkEndName(cell.src_rank, cell.src_local), LinkEndName(cell.dst_rank, cell.dst_local));
    *out += fmt::format("    {:<12}{:<10}{:>12.3f}{:>12.3f}{:>10}\n", ends, cell.transport, cell.size_mb, cell.time_ms,
                        NumberCell(cell.bandwidth_gbps, 2));
  }
  if (unknown_end) {
    *out += fmt::format(
        "    (?N = member N of a group whose global ranks are unknown: no other input rank holds the group and "
        "profiler_metadata.json does not list it; links under {} MB are never slow)\n",
        kTinyLinkMb);
  }
}

std::string OutlierLine(const RankOutlierTest& t) {
  std::string line =
      fmt::format("  {:<14}{:<9} {} ranks, ", t.metric, SuspectEndName(t.test.suspect_end), t.ranks.size());
  if (!t.test.statistic) return line + fmt::format("not tested: {}\n", t.test.why_not);
  line += fmt::format("{} {} = {:.4f} vs critical {:.3f}: ", OutlierTestName(t.test.test), t.test.ratio,
                      *t.test.statistic, *t.test.critical_value);
  if (t.outlier_ranks.empty()) return line + "no outlier\n";
  return line + fmt::format("outlier rank {}\n", fmt::join(t.outlier_ranks, ", "));
}

// A rank's pipeline bubble over all its steps: torch_npu's Bubble (or its p2p wait), else on GPUs the wait of
// its p2p kernels. The GPU wait sits inside the exposed communication; the split takes it out so the parts
// add up to the step and the bubble is never counted as exposed.
struct BubbleSplit {
  int64_t bubble_ns = 0;
  int64_t exposed_ns = 0;  // exposed communication less the bubble it held
};

BubbleSplit SplitBubble(const CommAnalysis& a, const RankCommunication& r) {
  BubbleSplit out{r.bubble_ns, r.exposed_communication_ns};
  if (out.bubble_ns > 0 || !a.cross_rank.pipeline) return out;
  const double wait = GpuPipelineWaitNsPerStep(*a.cross_rank.pipeline, r.rank) * static_cast<double>(r.steps);
  out.bubble_ns = std::clamp<int64_t>(std::llround(wait), 0, std::max<int64_t>(r.exposed_communication_ns, 0));
  out.exposed_ns -= out.bubble_ns;
  return out;
}

// Below this a bubble prints as 0.000 ms: a few ns of rounding in torch_npu's step split, not a pipeline.
constexpr int64_t kShownBubbleNs = 500;

bool AnyBubble(const CommAnalysis& a) {
  return std::any_of(a.ranks.begin(), a.ranks.end(),
                     [&](const RankCommunication& r) { return SplitBubble(a, r).bubble_ns >= kShownBubbleNs; });
}

// max − min of `value` over the ranks, and that spread's share of the ranks' mean wall time, as cells.
template <typename Value>
std::pair<std::string, std::string> SpreadCells(const CommAnalysis& a, Value value, int width) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  double wall = 0;
  for (const RankCommunication& r : a.ranks) {
    lo = std::min(lo, value(r));
    hi = std::max(hi, value(r));
    wall += static_cast<double>(r.wall_ns);
  }
  wall /= static_cast<double>(a.ranks.size());
  const double share = wall > 0 ? static_cast<double>(hi - lo) / wall : 0;
  return {fmt::format("{:>{}.3f}", Millis(hi - lo), width),
          fmt::format("{:>{}}",
                      wall > 0 ? fmt::format("{:.1f}%{}", share * 100, share > kStepSpreadThreshold ? "!" : "")
                               : std::string(kEmptyCell),
                      width)};
}

// The per-rank step table with its max − min spread, and the slow-rank outlier tests (comm_outliers.h). On
// pipeline runs a bubble column holds the pipeline's waits, so computing + exposed + free + bubble is the step.
void AppendClusterView(const CommAnalysis& a, const ShownRanks& shown, std::string* out) {
  const CrossRankCommunication& x = a.cross_rank;
  if (x.step_spread.empty()) return;
  const bool bubbles = AnyBubble(a);
  *out += fmt::format("\nper-rank step table (ms, all steps):\n  {:<8}{:>14}{:>16}{:>14}{}{:>12}\n", "rank", "computing",
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
  std::string spread = fmt::format("  {:<8}", "max-min");
  std::string share = fmt::format("  {:<8}", "% step");
  for (size_t k = 0; k < x.step_spread.size(); ++k) {
    const StepSpread& s = x.step_spread[k];
    const int width = k == 1 ? 16 : 14;
    if (k == 1 && bubbles) {  // the exposed column less the bubble
      const auto [range, part] =
          SpreadCells(a, [&](const RankCommunication& r) { return SplitBubble(a, r).exposed_ns; }, width);
      spread += range;
      share += part;
      continue;
    }
    spread += fmt::format("{:>{}.3f}", Millis(s.max_ns - s.min_ns), width);
    share += fmt::format("{:>{}}",
                         s.share_of_step ? fmt::format("{:.1f}%{}", *s.share_of_step * 100, s.uneven ? "!" : "")
                                         : std::string(kEmptyCell),
                         width);
  }
  if (bubbles) {
    const auto [range, part] =
        SpreadCells(a, [&](const RankCommunication& r) { return SplitBubble(a, r).bubble_ns; }, 14);
    spread += range;
    share += part;
  }
  *out += spread + "\n" + share + "   (! = above 5 % of the step)\n";
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

std::string RankList(const std::vector<int64_t>& ranks) {
  if (ranks.empty()) return std::string(kEmptyCell);
  const std::string text = RankRanges(ranks);  // "0-1023", not the first four of 1,024 ids
  return text.size() <= 14 ? text : text.substr(0, 11) + "...";
}

std::string RoleCell(const CommGroupSummary& g) {
  if (g.role.empty()) return std::string(kEmptyCell);
  return g.role + (g.role_inferred ? "~" : "");
}

// One line per process group: label, members, collectives, MB, time, bandwidth, exposed share, slowest.
void AppendGroups(const CrossRankCommunication& x, std::string* out) {
  if (x.groups.empty()) return;
  *out += fmt::format("\nper group:\n  {:<20}{:<6}{:<15}{:>7}{:>11}{:>11}{:>8}{:>8}{:>8}{:>9}{:>8}\n", "group", "role",
                      "ranks", "count", "MB", "sum ms", "algbw", "busbw", "util", "exposed", "slowest");
  for (const CommGroupSummary& g : x.groups) {
    std::string name = EscapeText(g.label.empty() ? (g.group.empty() ? "(unnamed)" : g.group) : g.label);
    const std::string_view mark = g.source != "timeline" ? "*" : "";  // kept when a long name is cut
    if (name.size() + mark.size() > 19) name = name.substr(0, 16 - mark.size()) + "...";
    name += mark;
    *out += fmt::format("  {:<20}{:<6}{:<15}{:>7}{:>11}{:>11.3f}{:>8}{:>8}{:>8}{:>9}{:>8}\n", name, RoleCell(g),
                        RankList(g.global_ranks.empty() ? g.ranks : g.global_ranks), g.collectives,
                        MegabytesCell(g.bytes, g.count_with_bytes), Millis(g.duration_ns), NumberCell(g.algbw_gbps, 2),
                        NumberCell(g.busbw_gbps, 2), PercentCell(g.utilization), PercentCell(g.exposed_share),
                        g.slowest_rank ? fmt::format("{}", *g.slowest_rank) : std::string(kEmptyCell));
  }
  *out +=
      "  (role: the parallel dimension, tp / pp / dp / cp / ep, from the group's name; ~ = inferred from its members' "
      "layout or its primitive; - = none)\n";
  if (std::any_of(x.groups.begin(), x.groups.end(), [](const CommGroupSummary& g) { return g.source != "timeline"; })) {
    *out +=
        "  (* = from communication.json / analysis.db: MB over HCCS/PCIE/RDMA/SIO, algbw = size / transit time, util = "
        "each transport's bandwidth / its standard bandwidth, weighted by transit time)\n";
  }
  for (const CommGroupSummary& g : x.groups) {
    if (g.missing_ranks.empty() || x.ranks.size() < 2) continue;  // one rank alone matches nothing anyway
    *out += fmt::format(
        "  {}: member{} {} not in the input: its collectives are matched over the {} members present only, and "
        "waits for the missing ones count as transfer; pass every rank\n",
        EscapeText(g.label.empty() ? (g.group.empty() ? "(unnamed)" : g.group) : g.label),
        g.missing_ranks.size() == 1 ? "" : "s", RankRanges(g.missing_ranks),
        g.global_ranks.size() - g.missing_ranks.size());
  }
  for (const CommGroupSummary& g : x.groups) {
    if (!g.slowest_link) continue;
    const AscendMatrixLink& l = *g.slowest_link;
    *out +=
        fmt::format("  {}: slowest link {}->{} {} {:.2f} GB/s ({})\n", EscapeText(g.label.empty() ? g.group : g.label),
                    LinkEndName(l.src_rank, l.src_local), LinkEndName(l.dst_rank, l.dst_local), EscapeText(l.transport),
                    *l.bandwidth_gbps, EscapeText(l.op_key));
  }
  *out += "  (count, MB and sum ms add up over the group's ranks; sum ms adds collectives that ran at once)\n";
}

// One line per parallel dimension: its groups together.
void AppendDomains(const CrossRankCommunication& x, std::string* out) {
  if (x.domains.empty()) return;
  *out += fmt::format(
      "\nparallel domains (each role's groups together; ~ = role inferred):\n  {:<6}{:<9}{:>7} {:<15}{:>7}{:>11}"
      "{:>11}{:>8}{:>8}{:>8}{:>9}{:>8}  {}\n",
      "role", "source", "groups", "ranks", "count", "MB", "sum ms", "algbw", "busbw", "util", "exposed", "slowest",
      "slowest link");
  for (const ParallelDomain& d : x.domains) {
    std::string link(kEmptyCell);
    if (d.slowest_link && d.slowest_link->bandwidth_gbps) {
      const AscendMatrixLink& l = *d.slowest_link;
      link = fmt::format("{}->{} {} {:.2f} GB/s", LinkEndName(l.src_rank, l.src_local),
                         LinkEndName(l.dst_rank, l.dst_local), EscapeText(l.transport), *l.bandwidth_gbps);
    }
    *out += fmt::format("  {:<6}{:<9}{:>7} {:<15}{:>7}{:>11.3f}{:>11.3f}{:>8}{:>8}{:>8}{:>9}{:>8}  {}\n",
                        d.role + (d.inferred ? "~" : ""), d.source == "timeline" ? "timeline" : "hccl", d.groups,
                        RankList(d.ranks), d.collectives, static_cast<double>(d.bytes) / 1e6, Millis(d.duration_ns),
                        NumberCell(d.algbw_gbps, 2), NumberCell(d.busbw_gbps, 2), PercentCell(d.utilization),
                        PercentCell(d.exposed_share),
                        d.slowest_rank ? fmt::format("{}", *d.slowest_rank) : std::string(kEmptyCell), link);
  }
}

// Where the stages come from: the groups that name them, or the p2p pattern.
std::string PipelineSource(const PipelineAnalysis& p) {
  return p.inferred ? fmt::format("{} stages inferred from the p2p pattern, as no group names them: each stage's "
                                  "ranks only send to the next stage's, which only receive from them",
                                  p.stages.size())
                    : fmt::format("\"{}\" groups of {} ranks", EscapeText(p.group_name), p.pipeline_size);
}

// Where a stage's waiting comes from: the p2p wait, with the transfer its bubble also holds named, or the
// bubble where the input has no per-operation wait.
std::string WaitingSource(const PipelineStage& s) {
  if (s.p2p_wait_measure == P2pWaitMeasure::kNone) {
    return " (taken from Bubble: the input has no per-operation p2p wait)";
  }
  const double transfer = s.bubble_ns_per_step - s.waiting_ns_per_step;
  if (!s.p2p_wait_known || transfer <= 0) return "";
  return fmt::format(" (its p2p wait; the other {:.3f} ms of its {:.3f} ms bubble is the p2p transfer)", transfer / 1e6,
                     s.bubble_ns_per_step / 1e6);
}

// Each stage's waiting charged once: to the slowest stage's compute, the rest to the schedule's fill and
// drain; then the what-if of balanced stages.
void AppendStageWaits(const PipelineAnalysis& p, std::string* out) {
  for (const PipelineStage& s : p.stages) {
    if (s.waiting_ns_per_step <= 0) continue;
    *out += fmt::format("  stage {} (ranks {}) waits {:.3f} ms a step{}", s.stage, RankRanges(s.ranks),
                        s.waiting_ns_per_step / 1e6, WaitingSource(s));
    if (s.wait_for_slowest_ns_per_step > 0) {
      *out += fmt::format(": {:.3f} ms for stage {}'s compute, {:.3f} ms", s.wait_for_slowest_ns_per_step / 1e6,
                          p.slowest_stage, s.fill_drain_ns_per_step / 1e6);
    } else {
      *out += ", all of it";
    }
    *out += " the schedule's fill / drain\n";
  }
  if (p.balanced_gain_ns_per_step > 0) {
    *out += fmt::format("  what-if stages balanced (each computing the mean stage's {:.3f} ms): the step -{:.3f} ms\n",
                        p.mean_work_ns_per_step / 1e6, p.balanced_gain_ns_per_step / 1e6);
  }
}

void AppendPipeline(const std::optional<PipelineAnalysis>& p, std::string* out) {
  if (!p) return;
  *out += fmt::format(
      "\npipeline stages ({}; per step, mean over each stage's ranks; step = Stage + Bubble; "
      "p2p wait = communication.json's Wait Time of the send / receive / batchSendRecv operations (GPU: the part of "
      "each send / recv kernel before its peer's matching kernel starts); bubble = torch_npu's Bubble, else that "
      "wait; recomputed from trace_view.json where the rank has it, else step_trace_time.csv's):\n",
      PipelineSource(*p));
  if (!p->p2p_wait_note.empty()) {
    *out += fmt::format("  p2p wait on some GPU ranks is their send / recv time not hidden under compute (wait and "
                        "transfer), not the peer's start: {}\n",
                        EscapeText(p->p2p_wait_note));
  }
  *out += fmt::format("  {:<7}{:<18}{:>14}{:>14}{:>14}{:>14}\n", "stage", "ranks", "computing ms", "p2p wait ms",
                      "bubble ms", "step ms");
  for (const PipelineStage& s : p->stages) {
    std::string ranks = RankRanges(s.ranks);
    if (ranks.size() > 16) ranks = ranks.substr(0, 15) + "~";
    // No per-operation wait in the input (a cluster CSV): not a measured 0.
    const std::string wait = s.p2p_wait_measure == P2pWaitMeasure::kNone
                                 ? std::string("-")
                                 : fmt::format("{:.3f}", s.p2p_wait_ns_per_step / 1e6);
    *out += fmt::format("  {:<7}{:<18}{:>14.3f}{:>14}{:>14.3f}{:>14.3f}\n", s.stage, ranks,
                        s.computing_ns_per_step / 1e6, wait, s.bubble_ns_per_step / 1e6, s.step_ns_per_step / 1e6);
  }
  const PipelineStage& slowest = StageNumbered(*p, p->slowest_stage);
  const PipelineStage& fastest = StageNumbered(*p, p->fastest_stage);
  *out += fmt::format(
      "  stage {} bounds the step: {:.3f} ms of {} a step against {:.3f} ms on stage {} and {:.3f} ms on the mean "
      "stage (imbalance {:.1f} %, (slowest - fastest) / slowest){}; bubbles are {:.1f} % of the staged ranks' "
      "steps\n",
      slowest.stage, slowest.work_ns_per_step / 1e6, p->work_is_computing ? "computing" : "Stage time",
      fastest.work_ns_per_step / 1e6, fastest.stage, p->mean_work_ns_per_step / 1e6, 100 * p->imbalance,
      p->uneven ? ": uneven, move layers off the slowest stage" : "", 100 * p->bubble_share);
  AppendStageWaits(*p, out);
}

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
    *out +=
        fmt::format("  clocks: one clock (offsets from the ends of matched collectives within {:.3f} ms of rank {})\n",
                    Millis(*clocks.spread_ns), *clocks.reference_rank);
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
    for (size_t c = 0; c < kWaitCauseCount; ++c) rows += fmt::format("{:>13.3f}", Millis(w.held_up_by_cause[c]) / steps);
    rows += "\n";
    for (size_t k = 0; k < w.late_operator_extra.size() && k < 3; ++k) {
      // Operators far below the lateness are the ranks' own noise, not its cause.
      if (w.late_operator_extra[k].ns * 10 < w.held_up_ns) break;
      rows += fmt::format("           +{:.3f} ms/step in {} (vs the median rank, before its late arrivals)\n",
                          Millis(w.late_operator_extra[k].ns) / steps, EscapeText(w.late_operator_extra[k].name));
    }
  }
  if (rows.empty()) return;
  *out += "\nwhy ranks wait: what each late rank did more than the median rank before the collectives it held up "
          "(ms per step; held up: from the others' median arrival to its own, less what is unexplained)\n";
  *out += fmt::format("  {:<8}{:>7}{:>12}", "rank", "late", "held up");
  for (size_t c = 0; c < kWaitCauseCount; ++c) *out += fmt::format("{:>13}", WaitCauseName(static_cast<WaitCause>(c)));
  *out += "\n" + rows + LeftOut(left_out, "  ");
}

void AppendCrossRank(const CommAnalysis& a, const ShownRanks& shown, std::string* out) {
  AppendClusterView(a, shown, out);
  AppendGroups(a.cross_rank, out);
  AppendDomains(a.cross_rank, out);
  AppendPipeline(a.cross_rank.pipeline, out);
  const CrossRankCommunication& x = a.cross_rank;
  if (x.matched_collectives > 0) {
    *out += fmt::format("\nacross ranks: {} collectives matched (group + sequence), {} unmatched\n",
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
                          NumberCell(AsPercent(w.wait_ratio), 1), w.times_last, Millis(w.wait_caused_ns));
    }
    *out += LeftOut(left_out, "  ");
    AppendClocks(x.clocks, shown, out);
    if (!x.straggler_rank) {
      *out += "  straggler: none (no rank made the others wait)\n";
    } else if (x.straggler_within_clock_uncertainty) {
      *out +=
          fmt::format("  straggler: not named: rank {} ({}); align the hosts' clocks (PTP, chrony) and profile again\n",
                      *x.straggler_rank, x.straggler_reason);
    } else if (x.straggler_stands_out) {
      *out += fmt::format("  straggler: rank {} ({})\n", *x.straggler_rank, x.straggler_reason);
    } else {
      *out += fmt::format("  straggler: none stands out: rank {} made the others wait longest ({})\n",
                          *x.straggler_rank, x.straggler_reason);
    }
    AppendWaitCauses(a, shown, out);
  }
  if (!x.ascend_verdict.empty()) {
    const std::string verdict =
        x.ascend_slow_rank ? fmt::format("slow rank: {}", *x.ascend_slow_rank)
        : x.ascend_verdict == "slow link"
            ? std::string("its synchronization is short: a slow link, not a slow rank")
            : std::string("the ranks' wait ratios are within 0.05 of each other: no rank stands out");
    *out += fmt::format("\nHCCL (msprof rule): most wait on rank {}; {}\n", *x.ascend_max_wait_rank, verdict);
    if (x.slow_rank_rules_disagree()) {
      *out += fmt::format(
          "  the two rules disagree: the timeline's arrivals name rank {}, the wait ratios rank {}; the arrivals "
          "are measured per collective, the ratios are totals\n",
          *x.straggler_rank, *x.ascend_slow_rank);
    }
  }
}

// ---- JSON

void OptionalDouble(JsonWriter* w, std::string_view key, std::optional<double> value) {
  w->Key(key);
  value ? w->Double(*value) : w->Null();
}

void OptionalInt(JsonWriter* w, std::string_view key, int64_t value) {
  w->Key(key);
  value == kNoId ? w->Null() : w->Int(value);
}

void WriteSummary(JsonWriter* w, const CollectiveTypeSummary& s) {
  w->Key("count").Uint(s.count);
  w->Key("count_with_bytes").Uint(s.count_with_bytes);
  w->Key("bytes");
  s.count_with_bytes ? w->Int(s.bytes) : w->Null();
  w->Key("time_us").Double(Micros(s.duration_ns));
  OptionalDouble(w, "algbw_gbps", s.algbw_gbps);
  OptionalDouble(w, "busbw_gbps", s.busbw_gbps);
  OptionalDouble(w, "utilization", s.utilization);
  w->Key("small_count").Uint(s.small_count);
}

void WriteCollective(JsonWriter* w, int64_t rank, const Collective& c) {
  w->BeginObject();
  w->Key("rank").Int(rank);
  w->Key("type").String(CollectiveTypeName(c.type));
  w->Key("source").String(CollectiveSourceName(c.source));
  w->Key("name").String(c.name);
  w->Key("group");
  c.group.empty() ? w->Null() : w->String(c.group);
  OptionalInt(w, "group_size", c.group_size);
  w->Key("sequence").Int(c.sequence);
  w->Key("step");
  c.step ? w->Int(*c.step) : w->Null();
  OptionalInt(w, "bytes", c.bytes);
  w->Key("start_ns").Int(c.start_ns);
  w->Key("duration_us").Double(Micros(c.duration_ns));
  OptionalDouble(w, "algbw_gbps", c.algbw_gbps);
  OptionalDouble(w, "busbw_gbps", c.busbw_gbps);
  OptionalDouble(w, "utilization", c.utilization);
  w->Key("exposed_us");
  c.exposed_ns == kNoId ? w->Null() : w->Double(Micros(c.exposed_ns));
  w->EndObject();
}

void WriteAscendTransport(JsonWriter* w, const AscendTransport& t) {
  w->BeginObject();
  w->Key("transport").String(t.transport);
  w->Key("size_mb").Double(t.size_mb);
  w->Key("time_ms").Double(t.time_ms);
  OptionalDouble(w, "bandwidth_gbps", t.bandwidth_gbps);
  w->Key("bandwidth_recomputed").Bool(t.bandwidth_recomputed);
  OptionalDouble(w, "large_packet_ratio", t.large_packet_ratio);
  w->Key("packets").Uint(t.packets);
  w->Key("small_packets").Uint(t.small_packets);
  OptionalDouble(w, "utilization", t.utilization);
  w->EndObject();
}

void WriteAscendOp(JsonWriter* w, const AscendCommOp& op) {
  w->BeginObject();
  w->Key("step").String(op.step);
  w->Key("section").String(op.p2p ? "p2p" : "collective");
  w->Key("total").Bool(op.total);
  w->Key("op_name").String(op.op_name);
  w->Key("group").String(op.group);
  w->Key("type").String(op.total ? "total" : CollectiveTypeName(op.type));
  w->Key("elapse_ms").Double(op.elapse_ms);
  w->Key("transit_ms").Double(op.transit_ms);
  w->Key("wait_ms").Double(op.wait_ms);
  w->Key("synchronization_ms").Double(op.synchronization_ms);
  w->Key("idle_ms").Double(op.idle_ms);
  OptionalDouble(w, "wait_ratio", op.wait_ratio);
  OptionalDouble(w, "synchronization_ratio", op.synchronization_ratio);
  OptionalDouble(w, "file_wait_ratio", op.file_wait_ratio);
  w->Key("transports").BeginArray();
  for (const AscendTransport& t : op.transports) WriteAscendTransport(w, t);
  w->EndArray();
  w->EndObject();
}

// Global ids (null where the group's numbering is unknown) and the group-local ids as the file writes them.
void WriteLinkEnds(JsonWriter* w, const AscendMatrixLink& link) {
  w->Key("src_rank");
  link.src_rank == kNoId ? w->Null() : w->Int(link.src_rank);
  w->Key("dst_rank");
  link.dst_rank == kNoId ? w->Null() : w->Int(link.dst_rank);
  w->Key("src_local");
  link.src_local == kNoId ? w->Null() : w->Int(link.src_local);
  w->Key("dst_local");
  link.dst_local == kNoId ? w->Null() : w->Int(link.dst_local);
}

void WriteAscend(JsonWriter* w, const RankCommunication& r) {
  w->Key("ascend");
  if (r.ascend_ops.empty() && r.ascend_links.empty()) {
    w->Null();
    return;
  }
  w->BeginObject();
  OptionalDouble(w, "wait_ratio", r.ascend_wait_ratio);
  OptionalDouble(w, "synchronization_ratio", r.ascend_synchronization_ratio);
  w->Key("transports").BeginArray();
  for (const AscendTransportTotal& t : r.ascend_transports) {
    w->BeginObject();
    w->Key("transport").String(t.transport);
    w->Key("size_mb").Double(t.size_mb);
    w->Key("time_ms").Double(t.time_ms);
    OptionalDouble(w, "bandwidth_gbps", t.bandwidth_gbps);
    OptionalDouble(w, "utilization", t.utilization);
    w->Key("packets").Uint(t.packets);
    w->Key("small_packets").Uint(t.small_packets);
    w->EndObject();
  }
  w->EndArray();
  w->Key("ops").BeginArray();
  for (const AscendCommOp& op : r.ascend_ops) WriteAscendOp(w, op);
  w->EndArray();
  w->Key("rank_matrix").BeginArray();
  for (const AscendMatrixLink& cell : r.ascend_rank_matrix) {
    w->BeginObject();
    WriteLinkEnds(w, cell);
    w->Key("group");
    cell.group.empty() ? w->Null() : w->String(cell.group);
    w->Key("transport").String(cell.transport);
    w->Key("size_mb").Double(cell.size_mb);
    w->Key("time_ms").Double(cell.time_ms);
    OptionalDouble(w, "bandwidth_gbps", cell.bandwidth_gbps);
    w->EndObject();
  }
  w->EndArray();
  w->Key("matrix").BeginArray();
  for (const AscendMatrixLink& link : r.ascend_links) {
    w->BeginObject();
    w->Key("step").String(link.step);
    w->Key("op").String(link.op_key);
    WriteLinkEnds(w, link);
    w->Key("transport").String(link.transport);
    w->Key("size_mb").Double(link.size_mb);
    w->Key("time_ms").Double(link.time_ms);
    OptionalDouble(w, "bandwidth_gbps", link.bandwidth_gbps);
    w->Key("slow").Bool(link.slow);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

double PerStepUs(int64_t ns, uint64_t steps) { return Micros(ns) / static_cast<double>(std::max<uint64_t>(steps, 1)); }

// Why the others waited for this rank: what it did in the windows it held collectives up.
void WriteWaitCauses(JsonWriter* w, const RankCommunication& r, const RankWait& wait) {
  w->BeginObject();
  w->Key("held_up_us").Double(Micros(wait.held_up_ns));
  w->Key("held_up_us_per_step").Double(PerStepUs(wait.held_up_ns, r.steps));
  w->Key("late_collectives").Uint(wait.late_collectives);
  w->Key("by_cause_us_per_step").BeginObject();
  for (size_t c = 0; c < kWaitCauseCount; ++c) {
    w->Key(WaitCauseName(static_cast<WaitCause>(c))).Double(PerStepUs(wait.held_up_by_cause[c], r.steps));
  }
  w->EndObject();
  w->Key("late_operators").BeginArray();
  for (const LeadOperator& op : wait.late_operator_extra) {
    w->BeginObject();
    w->Key("name").String(op.name);
    w->Key("extra_us_per_step").Double(PerStepUs(op.ns, r.steps));
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteRank(JsonWriter* w, const RankCommunication& r, const RankWait* wait, bool causes_known) {
  w->BeginObject();
  w->Key("rank").Int(r.rank);
  w->Key("path").String(r.path);
  w->Key("device");
  r.device_name.empty() ? w->Null() : w->String(r.device_name);
  w->Key("link").BeginObject();
  w->Key("transport");
  r.link.transport.empty() ? w->Null() : w->String(r.link.transport);
  OptionalDouble(w, "peak_gbps", r.link.peak_gb_per_s);
  w->Key("profile");
  r.link.profile.empty() ? w->Null() : w->String(r.link.profile);
  w->Key("why").String(r.link.why);
  w->EndObject();
  w->Key("collectives").BeginObject();
  WriteSummary(w, r.total);
  w->EndObject();
  w->Key("by_type").BeginArray();
  for (const CollectiveTypeSummary& s : r.by_type) {
    w->BeginObject();
    w->Key("type").String(CollectiveTypeName(s.type));
    WriteSummary(w, s);
    w->EndObject();
  }
  w->EndArray();
  OptionalDouble(w, "small_message_share", r.small_message_share);
  w->Key("size_histogram").BeginObject();
  for (size_t b = 0; b < r.size_histogram.size(); ++b) w->Key(SizeBucketLabel(b)).Uint(r.size_histogram[b]);
  w->EndObject();
  w->Key("wall_us").Double(Micros(r.wall_ns));
  w->Key("comm_us").Double(Micros(r.communication_ns));
  w->Key("exposed_comm_us").Double(Micros(r.exposed_communication_ns));
  w->Key("hidden_comm_us").Double(Micros(r.hidden_communication_ns));
  OptionalDouble(w, "exposed_share_of_wall", r.exposed_share_of_wall);
  w->Key("computing_us").Double(Micros(r.computing_ns));
  w->Key("free_us").Double(Micros(r.free_ns));
  w->Key("steps").Uint(r.steps);
  WriteExpertParallel(w, r);
  WriteFusedComm(w, r);
  w->Key("parallel_groups").BeginArray();
  for (const ParallelGroupInfo& g : r.parallel_groups) {
    w->BeginObject();
    w->Key("id").String(g.id);
    w->Key("name").String(g.name);
    w->Key("global_ranks").BeginArray();
    for (int64_t rank : g.global_ranks) w->Int(rank);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
  w->Key("wait");
  if (wait == nullptr || wait->matched == 0) {
    w->Null();
  } else {
    w->BeginObject();
    w->Key("matched").Uint(wait->matched);
    w->Key("comm_us").Double(Micros(wait->communication_ns));
    w->Key("wait_us").Double(Micros(wait->wait_ns));
    w->Key("transfer_us").Double(Micros(wait->transfer_ns));
    OptionalDouble(w, "wait_ratio", wait->wait_ratio);
    w->Key("times_last").Uint(wait->times_last);
    w->Key("wait_caused_us").Double(Micros(wait->wait_caused_ns));
    w->Key("slow_affect_count").Uint(wait->slow_affect_count);
    w->Key("causes");
    if (causes_known) {
      WriteWaitCauses(w, r, *wait);
    } else {
      w->Null();
    }
    w->EndObject();
  }
  WriteAscend(w, r);
  w->EndObject();
}

void WriteOutlierTest(JsonWriter* w, const RankOutlierTest& t) {
  w->BeginObject();
  w->Key("metric").String(t.metric);
  w->Key("suspect").String(SuspectEndName(t.test.suspect_end));
  w->Key("test").String(OutlierTestName(t.test.test));
  w->Key("ratio");
  t.test.ratio.empty() ? w->Null() : w->String(t.test.ratio);
  w->Key("samples").Uint(t.test.samples);
  OptionalDouble(w, "statistic", t.test.statistic);
  OptionalDouble(w, "critical_value", t.test.critical_value);
  w->Key("confidence");
  t.test.test == OutlierTestKind::kDixonQ ? w->Double(kDixonConfidence) : w->Null();
  w->Key("why_not");
  t.test.why_not.empty() ? w->Null() : w->String(t.test.why_not);
  w->Key("ranks").BeginArray();
  for (int64_t rank : t.ranks) w->Int(rank);
  w->EndArray();
  w->Key("values_ms").BeginArray();
  for (double v : t.values_ms) w->Double(v);
  w->EndArray();
  w->Key("outlier_ranks").BeginArray();
  for (int64_t rank : t.outlier_ranks) w->Int(rank);
  w->EndArray();
  w->EndObject();
}

// A group's or domain's slowest link (null when it has none); groups also name the op type it was read from.
void WriteSlowestLink(JsonWriter* w, const AscendMatrixLink* link, bool with_op_key) {
  w->Key("slowest_link");
  if (link == nullptr) {
    w->Null();
    return;
  }
  w->BeginObject();
  WriteLinkEnds(w, *link);
  w->Key("transport").String(link->transport);
  w->Key("bandwidth_gbps").Double(*link->bandwidth_gbps);
  if (with_op_key) w->Key("op_key").String(link->op_key);
  w->EndObject();
}

void WriteGroups(JsonWriter* w, const CrossRankCommunication& x) {
  w->Key("groups").BeginArray();
  for (const CommGroupSummary& g : x.groups) {
    w->BeginObject();
    w->Key("source").String(g.source);
    w->Key("group").String(g.group);
    w->Key("label");
    g.label.empty() ? w->Null() : w->String(g.label);
    w->Key("role");
    g.role.empty() ? w->Null() : w->String(g.role);
    w->Key("role_inferred").Bool(g.role_inferred);
    w->Key("role_why").String(g.role_why);
    w->Key("global_ranks");
    if (g.global_ranks.empty()) {
      w->Null();
    } else {
      w->BeginArray();
      for (int64_t rank : g.global_ranks) w->Int(rank);
      w->EndArray();
    }
    w->Key("ranks").BeginArray();
    for (int64_t rank : g.ranks) w->Int(rank);
    w->EndArray();
    w->Key("missing_ranks");
    if (g.global_ranks.empty()) {
      w->Null();  // the members are unknown: so is who is missing
    } else {
      w->BeginArray();
      for (int64_t rank : g.missing_ranks) w->Int(rank);
      w->EndArray();
    }
    w->Key("collectives").Uint(g.collectives);
    w->Key("count_with_bytes").Uint(g.count_with_bytes);
    w->Key("bytes");
    g.count_with_bytes ? w->Int(g.bytes) : w->Null();
    w->Key("time_us").Double(Micros(g.duration_ns));
    OptionalDouble(w, "algbw_gbps", g.algbw_gbps);
    OptionalDouble(w, "busbw_gbps", g.busbw_gbps);
    OptionalDouble(w, "utilization", g.utilization);
    w->Key("exposed_us").Double(Micros(g.exposed_ns));
    OptionalDouble(w, "exposed_share", g.exposed_share);
    w->Key("slowest_rank");
    g.slowest_rank ? w->Int(*g.slowest_rank) : w->Null();
    w->Key("slowest_why").String(g.slowest_why);
    WriteSlowestLink(w, g.slowest_link ? &*g.slowest_link : nullptr, true);
    w->Key("busiest_primitive");
    g.busiest_type_ms > 0 ? w->String(CollectiveTypeName(g.busiest_type)) : w->Null();
    w->Key("transports").BeginArray();
    for (const GroupTransport& t : g.transports) {
      w->BeginObject();
      w->Key("transport").String(t.transport);
      w->Key("bytes").Int(t.bytes);
      w->Key("transit_ms").Double(t.time_ms);
      OptionalDouble(w, "bandwidth_gbps", t.bandwidth_gbps);
      OptionalDouble(w, "utilization", t.utilization);
      w->EndObject();
    }
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

void WriteDomains(JsonWriter* w, const CrossRankCommunication& x) {
  w->Key("domains").BeginArray();
  for (const ParallelDomain& d : x.domains) {
    w->BeginObject();
    w->Key("role").String(d.role);
    w->Key("source").String(d.source);
    w->Key("inferred").Bool(d.inferred);
    w->Key("groups").Uint(d.groups);
    w->Key("ranks").BeginArray();
    for (int64_t rank : d.ranks) w->Int(rank);
    w->EndArray();
    w->Key("collectives").Uint(d.collectives);
    w->Key("bytes").Int(d.bytes);
    w->Key("time_us").Double(Micros(d.duration_ns));
    OptionalDouble(w, "algbw_gbps", d.algbw_gbps);
    OptionalDouble(w, "busbw_gbps", d.busbw_gbps);
    OptionalDouble(w, "utilization", d.utilization);
    w->Key("exposed_us").Double(Micros(d.exposed_ns));
    OptionalDouble(w, "exposed_share", d.exposed_share);
    w->Key("slowest_rank");
    d.slowest_rank ? w->Int(*d.slowest_rank) : w->Null();
    WriteSlowestLink(w, d.slowest_link && d.slowest_link->bandwidth_gbps ? &*d.slowest_link : nullptr, false);
    w->EndObject();
  }
  w->EndArray();
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
    OptionalDouble(w, "share_of_step", s.share_of_step);
    w->Key("uneven").Bool(s.uneven);
    w->EndObject();
  }
  w->EndArray();
  w->Key("outliers").BeginArray();
  for (const RankOutlierTest& t : x.outliers) WriteOutlierTest(w, t);
  w->EndArray();
  w->Key("vote_collectives").Uint(x.vote_collectives);
}

void WritePipeline(JsonWriter* w, const std::optional<PipelineAnalysis>& pipeline) {
  w->Key("pipeline");
  if (!pipeline) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->Key("group_name").String(pipeline->group_name);
  w->Key("inferred").Bool(pipeline->inferred);
  w->Key("pipeline_size").Int(pipeline->pipeline_size);
  w->Key("slowest_stage").Int(pipeline->slowest_stage);
  w->Key("fastest_stage").Int(pipeline->fastest_stage);
  w->Key("imbalance").Double(pipeline->imbalance);
  w->Key("uneven").Bool(pipeline->uneven);
  w->Key("bubble_share").Double(pipeline->bubble_share);
  w->Key("work_is_computing").Bool(pipeline->work_is_computing);
  w->Key("mean_work_us_per_step").Double(pipeline->mean_work_ns_per_step / 1e3);
  w->Key("p2p_wait_note");
  if (pipeline->p2p_wait_note.empty()) {
    w->Null();
  } else {
    w->String(pipeline->p2p_wait_note);
  }
  w->Key("balanced_gain_us_per_step").Double(pipeline->balanced_gain_ns_per_step / 1e3);
  w->Key("stages").BeginArray();
  for (const PipelineStage& s : pipeline->stages) {
    w->BeginObject();
    w->Key("stage").Int(s.stage);
    w->Key("ranks").BeginArray();
    for (int64_t r : s.ranks) w->Int(r);
    w->EndArray();
    w->Key("computing_us_per_step").Double(s.computing_ns_per_step / 1e3);
    w->Key("p2p_wait_us_per_step");
    if (s.p2p_wait_measure == P2pWaitMeasure::kNone) {
      w->Null();
    } else {
      w->Double(s.p2p_wait_ns_per_step / 1e3);
    }
    w->Key("p2p_wait_measure").String(P2pWaitMeasureName(s.p2p_wait_measure));
    w->Key("stage_us_per_step").Double(s.stage_ns_per_step / 1e3);
    w->Key("bubble_us_per_step").Double(s.bubble_ns_per_step / 1e3);
    w->Key("step_us_per_step").Double(s.step_ns_per_step / 1e3);
    w->Key("waiting_us_per_step").Double(s.waiting_ns_per_step / 1e3);
    w->Key("wait_for_slowest_us_per_step").Double(s.wait_for_slowest_ns_per_step / 1e3);
    w->Key("fill_drain_us_per_step").Double(s.fill_drain_ns_per_step / 1e3);
    w->Key("holds_up_us_per_step").Double(s.holds_up_ns_per_step / 1e3);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteClocks(JsonWriter* w, const ClockAlignment& clocks) {
  auto us = [&](std::optional<int64_t> ns) { ns ? w->Double(static_cast<double>(*ns) / 1e3) : w->Null(); };
  w->Key("clocks").BeginObject();
  w->Key("reference_rank");
  clocks.reference_rank ? w->Int(*clocks.reference_rank) : w->Null();
  w->Key("applied").Bool(clocks.applied);
  w->Key("spread_us");
  us(clocks.spread_ns);
  w->Key("ranks").BeginArray();
  for (const RankClockOffset& r : clocks.ranks) {
    w->BeginObject();
    w->Key("rank").Int(r.rank);
    w->Key("offset_us");
    us(r.offset_ns);
    w->Key("uncertainty_us");
    r.offset_ns ? w->Double(static_cast<double>(r.uncertainty_ns) / 1e3) : w->Null();
    w->Key("collectives").Uint(r.collectives);
    w->Key("applied").Bool(r.applied);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

// "comm X ms: exposed, hidden under compute", with the pipeline's bubble as its own term where the rank has
// one: the p2p wait is neither exposed communication nor hidden.
std::string CommSummaryLine(const CommAnalysis& a, const RankCommunication& r) {
  // Fused compute + communication kernels (MC2) communicate inside kernels counted as computing.
  const FusedCommTotals fused = SumFusedComm(r);
  const std::string inside =
      fused.count == 0 ? std::string() : fmt::format(", inside fused kernels {:.3f}", Millis(fused.time_ns));
  const BubbleSplit split = SplitBubble(a, r);
  if (split.bubble_ns < kShownBubbleNs) {
    return fmt::format("  comm {:.3f} ms: exposed {:.3f}, hidden under compute {:.3f}{}{}\n",
                       Millis(r.communication_ns + fused.time_ns), Millis(r.exposed_communication_ns),
                       Millis(r.hidden_communication_ns), inside,
                       r.exposed_share_of_wall ? fmt::format("; exposed {:.1f}% of wall {:.3f} ms",
                                                             *r.exposed_share_of_wall * 100, Millis(r.wall_ns))
                                               : std::string());
  }
  const double wall = static_cast<double>(r.wall_ns);
  return fmt::format("  comm {:.3f} ms: exposed {:.3f}, pipeline bubble {:.3f}, hidden under compute {:.3f}{}{}\n",
                     Millis(r.communication_ns + fused.time_ns), Millis(split.exposed_ns), Millis(split.bubble_ns),
                     Millis(r.hidden_communication_ns), inside,
                     wall > 0 ? fmt::format("; exposed {:.1f}%, bubble {:.1f}% of wall {:.3f} ms",
                                            100 * static_cast<double>(split.exposed_ns) / wall,
                                            100 * static_cast<double>(split.bubble_ns) / wall, Millis(r.wall_ns))
                              : std::string());
}

}  // namespace

std::string RenderCommText(const CommAnalysis& a) {
  std::string out;
  const ShownRanks shown(a);
  if (!shown.all()) {
    out += WrapText(fmt::format("{} ranks: per-rank detail below only for ranks {} (the straggler, outliers, the "
                                "least and most exposed communication and wait, the first rank); tuneprof comm "
                                "--json lists every rank",
                                a.ranks.size(), RankRanges(shown.notable())),
                    100, "", "  ") +
           "\n";
  }
  size_t left_out = 0;
  for (const RankCommunication& r : a.ranks) {
    if (!shown.Shows(r.rank)) {
      ++left_out;
      continue;
    }
    out += fmt::format("rank {}  {}{}\n", r.rank, EscapeText(r.path),
                       r.device_name.empty() ? "" : "  (" + EscapeText(r.device_name) + ")");
    AppendCollectives(r, &out);
    out += CommSummaryLine(a, r);
    AppendFusedComm(r, &out);
    AppendExpertParallel(r, &out);
    AppendAscend(r, &out);
  }
  out += LeftOut(left_out, "");
  AppendCrossRank(a, shown, &out);
  out += a.bottleneck ? "\ncommunication bottleneck:\n" : "\nno communication bottleneck found\n";
  if (shown.all()) {
    for (const std::string& reason : a.reasons) out += "  - " + EscapeText(reason) + "\n";
  } else {
    for (const ReasonGroup& group : a.reason_groups) out += "  - " + EscapeText(FoldedReason(group)) + "\n";
  }
  return EscapeTextKeepingLines(out);
}

void WriteCommJson(const CommAnalysis& a, const std::vector<std::string>& warnings, JsonWriter* writer) {
  JsonWriter& w = *writer;
  w.BeginObject();
  w.Key("schema").String("tuneprof.comm/1");
  w.Key("thresholds").BeginObject();
  w.Key("utilization").Double(a.thresholds.utilization);
  w.Key("exposed_share_of_wall").Double(a.thresholds.exposed_share_of_wall);
  w.Key("wait_ratio").Double(a.thresholds.wait_ratio);
  w.Key("small_message_bytes").Int(kSmallMessageBytes);
  w.EndObject();
  w.Key("bottleneck").Bool(a.bottleneck);
  w.Key("reasons").BeginArray();
  for (const std::string& reason : a.reasons) w.String(reason);
  w.EndArray();
  const CrossRankCommunication& x = a.cross_rank;
  w.Key("cross_rank").BeginObject();
  w.Key("matched_collectives").Uint(x.matched_collectives);
  w.Key("unmatched_collectives").Uint(x.unmatched_collectives);
  w.Key("straggler_rank");
  x.straggler_rank ? w.Int(*x.straggler_rank) : w.Null();
  w.Key("straggler_reason").String(x.straggler_reason);
  w.Key("straggler_stands_out").Bool(x.straggler_stands_out);
  w.Key("straggler_lateness_us");
  x.straggler_lateness_ns ? w.Double(static_cast<double>(*x.straggler_lateness_ns) / 1e3) : w.Null();
  w.Key("straggler_within_clock_uncertainty").Bool(x.straggler_within_clock_uncertainty);
  w.Key("straggler_clock_doubt_us");
  x.straggler_clock_doubt_ns ? w.Double(static_cast<double>(*x.straggler_clock_doubt_ns) / 1e3) : w.Null();
  WriteClocks(&w, x.clocks);
  WritePipeline(&w, x.pipeline);
  w.Key("ascend_max_wait_rank");
  x.ascend_max_wait_rank ? w.Int(*x.ascend_max_wait_rank) : w.Null();
  w.Key("ascend_slow_rank");
  x.ascend_slow_rank ? w.Int(*x.ascend_slow_rank) : w.Null();
  w.Key("ascend_verdict");
  x.ascend_verdict.empty() ? w.Null() : w.String(x.ascend_verdict);
  WriteClusterView(&w, x);
  w.EndObject();
  w.Key("ranks").BeginArray();
  for (size_t i = 0; i < a.ranks.size(); ++i) WriteRank(&w, a.ranks[i], i < x.ranks.size() ? &x.ranks[i] : nullptr, x.wait_causes_known);
  w.EndArray();
  WriteGroups(&w, x);
  WriteDomains(&w, x);
  w.Key("collectives").BeginArray();
  for (const RankCommunication& r : a.ranks) {
    for (const Collective& c : r.collectives) WriteCollective(&w, r.rank, c);
  }
  w.EndArray();
  WriteWarnings(warnings, &w);
  w.EndObject();
}

std::string RenderCommJson(const CommAnalysis& a, const std::vector<std::string>& warnings) {
  std::string out;
  JsonWriter w(&out);
  WriteCommJson(a, warnings, &w);
  out += "\n";
  return out;
}

}  // namespace tuneprof

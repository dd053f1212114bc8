// A rank's own section: its collectives by type, the communication summary line, and its JSON object.
#include "report/console/comm_report_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::comm_sections {
namespace {

void AppendTypeRow(std::string_view label, const CollectiveTypeSummary& s, std::string* out) {
  *out += fmt::format("  {:<14}{:>7}{:>12}{:>11.3f}{:>10}{:>10}{:>8}{:>8}\n", label, s.count,
                      MegabytesCell(s.bytes, s.count_with_bytes), Millis(s.duration_ns), NumberCell(s.algbw_gbps, 2),
                      NumberCell(s.busbw_gbps, 2), PercentCell(s.utilization),
                      s.count_with_bytes ? fmt::format("{}", s.small_count) : std::string(kEmptyCell));
}

void WriteSummary(JsonWriter* w, const CollectiveTypeSummary& s) {
  w->Key("count").Uint(s.count);
  w->Key("count_with_bytes").Uint(s.count_with_bytes);
  w->Key("bytes");
  s.count_with_bytes ? w->Int(s.bytes) : w->Null();
  w->Key("time_us").Double(Micros(s.duration_ns));
  JsonNumberField(*w, "algbw_gbps", s.algbw_gbps);
  JsonNumberField(*w, "busbw_gbps", s.busbw_gbps);
  JsonNumberField(*w, "utilization", s.utilization);
  w->Key("small_count").Uint(s.small_count);
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
  // Only where the rank was late at a pipeline hand-off, so that runs without stages keep their keys.
  if (wait.late_hand_offs > 0) w->Key("late_hand_offs_left_out").Uint(wait.late_hand_offs);
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

// The link measured against, the collectives' totals by type and the message sizes.
void WriteLinkAndSizes(JsonWriter* w, const RankCommunication& r) {
  w->Key("link").BeginObject();
  w->Key("transport");
  r.link.transport.empty() ? w->Null() : w->String(r.link.transport);
  JsonNumberField(*w, "peak_gbps", r.link.peak_gb_per_s);
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
  JsonNumberField(*w, "small_message_share", r.small_message_share);
  w->Key("size_histogram").BeginObject();
  for (size_t b = 0; b < r.size_histogram.size(); ++b) w->Key(SizeBucketLabel(b)).Uint(r.size_histogram[b]);
  w->EndObject();
}

void WriteParallelGroups(JsonWriter* w, const RankCommunication& r) {
  w->Key("parallel_groups").BeginArray();
  for (const ParallelGroupInfo& g : r.parallel_groups) {
    w->BeginObject();
    w->Key("id").String(g.id);
    w->Key("name").String(g.name);
    w->Key("global_ranks");
    JsonInts(*w, g.global_ranks);
    w->EndObject();
  }
  w->EndArray();
}

// The rank's matched collectives across ranks; null where none matched.
void WriteRankWait(JsonWriter* w, const RankCommunication& r, const RankWait* wait, bool causes_known) {
  w->Key("wait");
  if (wait == nullptr || wait->matched == 0) {
    w->Null();
  } else {
    w->BeginObject();
    w->Key("matched").Uint(wait->matched);
    w->Key("comm_us").Double(Micros(wait->communication_ns));
    w->Key("wait_us").Double(Micros(wait->wait_ns));
    w->Key("transfer_us").Double(Micros(wait->transfer_ns));
    JsonNumberField(*w, "wait_ratio", wait->wait_ratio);
    w->Key("times_last").Uint(wait->times_last);
    w->Key("wait_caused_us").Double(Micros(wait->wait_caused_ns));
    w->Key("wait_for_straggler_us").Double(Micros(wait->wait_for_straggler_ns));
    w->Key("slow_affect_count").Uint(wait->slow_affect_count);
    w->Key("causes");
    if (causes_known) {
      WriteWaitCauses(w, r, *wait);
    } else {
      w->Null();
    }
    w->EndObject();
  }
}

}  // namespace

std::string MegabytesCell(int64_t bytes, uint64_t known) {
  if (known == 0) return std::string(kEmptyCell);
  return fmt::format("{:.3f}", static_cast<double>(bytes) / 1e6);
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
        fmt::format("  small messages (< 1 MB): {} of {} with known size\n  sizes:", PercentCell(r.small_message_share),
                    r.total.count_with_bytes);
    for (size_t b = 0; b < r.size_histogram.size(); ++b) {
      if (r.size_histogram[b] > 0) *out += fmt::format(" {} {}", SizeBucketLabel(b), r.size_histogram[b]);
    }
    *out += "\n";
  }
}

// "comm X ms: exposed, hidden under compute", with the pipeline's bubble as its own term where the rank has
// one: the p2p wait is neither exposed communication nor hidden.
std::string CommSummaryLine(const CommAnalysis& a, const RankCommunication& r) {
  // Fused compute + communication kernels (MC2) communicate inside kernels counted as computing.
  const FusedCommTotals fused = SumFusedComm(r);
  const std::string inside =
      fused.count == 0 ? std::string() : fmt::format(", inside fused kernels {:.3f}", Millis(fused.time_ns));
  const BubbleSplit split = SplitBubble(a, r);
  // The share is of the steps profile and analyze report where they are known, which the line says.
  const int64_t steps_ns = ReportedStepsNs(r);
  if (split.bubble_ns < kShownBubbleNs) {
    const std::string share =
        !r.exposed_share_of_wall ? std::string()
        : steps_ns > 0
            ? fmt::format("; exposed {} of the steps {:.3f} ms, as profile and analyze time them",
                          PercentCell(r.exposed_share_of_wall), Millis(steps_ns))
            : fmt::format("; exposed {} of wall {:.3f} ms", PercentCell(r.exposed_share_of_wall), Millis(r.wall_ns));
    return fmt::format("  comm {:.3f} ms: exposed {:.3f}, hidden under compute {:.3f}{}{}\n",
                       Millis(r.communication_ns + fused.time_ns), Millis(r.exposed_communication_ns),
                       Millis(r.hidden_communication_ns), inside, share);
  }
  const double step = static_cast<double>(steps_ns > 0 ? steps_ns : r.wall_ns);
  const std::string of = steps_ns > 0
                             ? fmt::format("the steps {:.3f} ms, as profile and analyze time them", Millis(steps_ns))
                             : fmt::format("wall {:.3f} ms", Millis(r.wall_ns));
  return fmt::format("  comm {:.3f} ms: exposed {:.3f}, pipeline bubble {:.3f}, hidden under compute {:.3f}{}{}\n",
                     Millis(r.communication_ns + fused.time_ns), Millis(split.exposed_ns), Millis(split.bubble_ns),
                     Millis(r.hidden_communication_ns), inside,
                     step > 0 ? fmt::format("; exposed {:.1f}%, bubble {:.1f}% of {}",
                                            100 * static_cast<double>(split.exposed_ns) / step,
                                            100 * static_cast<double>(split.bubble_ns) / step, of)
                              : std::string());
}

void WriteCollective(JsonWriter* w, int64_t rank, const Collective& c) {
  w->BeginObject();
  w->Key("rank").Int(rank);
  w->Key("type").String(CollectiveTypeName(c.type));
  w->Key("source").String(CollectiveSourceName(c.source));
  w->Key("name").String(c.name);
  w->Key("group");
  c.group.empty() ? w->Null() : w->String(c.group);
  JsonIdField(*w, "group_size", c.group_size);
  w->Key("sequence").Int(c.sequence);
  w->Key("step");
  JsonIntOrNull(*w, c.step);
  JsonIdField(*w, "bytes", c.bytes);
  w->Key("start_ns").Int(c.start_ns);
  w->Key("duration_us").Double(Micros(c.duration_ns));
  JsonNumberField(*w, "algbw_gbps", c.algbw_gbps);
  JsonNumberField(*w, "busbw_gbps", c.busbw_gbps);
  JsonNumberField(*w, "utilization", c.utilization);
  w->Key("exposed_us");
  c.exposed_ns == kNoId ? w->Null() : w->Double(Micros(c.exposed_ns));
  w->EndObject();
}

void WriteRank(JsonWriter* w, const RankCommunication& r, const RankWait* wait, bool causes_known) {
  w->BeginObject();
  w->Key("rank").Int(r.rank);
  w->Key("path").String(r.path);
  w->Key("device");
  r.device_name.empty() ? w->Null() : w->String(r.device_name);
  WriteLinkAndSizes(w, r);
  w->Key("wall_us").Double(Micros(r.wall_ns));
  w->Key("comm_us").Double(Micros(r.communication_ns));
  w->Key("exposed_comm_us").Double(Micros(r.exposed_communication_ns));
  w->Key("hidden_comm_us").Double(Micros(r.hidden_communication_ns));
  JsonNumberField(*w, "exposed_share_of_wall", r.exposed_share_of_wall);
  w->Key("steps_us");
  ReportedStepsNs(r) > 0 ? w->Double(Micros(ReportedStepsNs(r))) : w->Null();
  w->Key("computing_us").Double(Micros(r.computing_ns));
  w->Key("free_us").Double(Micros(r.free_ns));
  w->Key("steps").Uint(r.steps);
  WriteExpertParallel(w, r);
  WriteFusedComm(w, r);
  WriteParallelGroups(w, r);
  WriteRankWait(w, r, wait, causes_known);
  WriteAscend(w, r);
  w->EndObject();
}

}  // namespace tuneprof::comm_sections

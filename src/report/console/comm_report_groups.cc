// Per process group and per parallel domain (each role's groups together).
#include "report/console/comm_report_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "analysis/comm/comm_links.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"
#include "report/common/table.h"

namespace tuneprof::comm_sections {
namespace {

std::string RankList(const std::vector<int64_t>& ranks) {
  if (ranks.empty()) return std::string(kEmptyCell);
  const std::string text = RankRanges(ranks);  // "0-1023", not the first four of 1,024 ids
  return Shortened(text, 14);
}

std::string RoleCell(const CommGroupSummary& g) {
  if (g.role.empty()) return std::string(kEmptyCell);
  return g.role + (g.role_inferred ? "~" : "");
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

// The group's members: global ids and who is missing are null where the group's numbering is unknown.
void WriteMembers(JsonWriter* w, const CommGroupSummary& g) {
  const bool numbered = !g.global_ranks.empty();
  w->Key("global_ranks");
  numbered ? JsonInts(*w, g.global_ranks) : void(w->Null());
  w->Key("ranks");
  JsonInts(*w, g.ranks);
  w->Key("missing_ranks");
  numbered ? JsonInts(*w, g.missing_ranks) : void(w->Null());
}

void WriteGroupTransports(JsonWriter* w, const CommGroupSummary& g) {
  w->Key("transports").BeginArray();
  for (const GroupTransport& t : g.transports) {
    w->BeginObject();
    w->Key("transport").String(t.transport);
    w->Key("bytes").Int(t.bytes);
    w->Key("transit_ms").Double(t.time_ms);
    JsonNumberField(*w, "bandwidth_gbps", t.bandwidth_gbps);
    JsonNumberField(*w, "utilization", t.utilization);
    w->EndObject();
  }
  w->EndArray();
}

// What a group and a parallel domain both say of their traffic: time, bandwidths, exposure, slowest rank.
template <typename Traffic>
void WriteTraffic(JsonWriter* w, const Traffic& t) {
  w->Key("time_us").Double(Micros(t.duration_ns));
  JsonNumberField(*w, "algbw_gbps", t.algbw_gbps);
  JsonNumberField(*w, "busbw_gbps", t.busbw_gbps);
  JsonNumberField(*w, "utilization", t.utilization);
  w->Key("exposed_us").Double(Micros(t.exposed_ns));
  JsonNumberField(*w, "exposed_share", t.exposed_share);
  w->Key("slowest_rank");
  JsonIntOrNull(*w, t.slowest_rank);
}

}  // namespace

// One line per process group: label, members, collectives, MB, time, bandwidth, exposed share, slowest.
void AppendGroups(const CrossRankCommunication& x, std::string* out) {
  if (x.groups.empty()) return;
  *out += fmt::format("\nper group:\n  {:<20}{:<6}{:<15}{:>7}{:>11}{:>11}{:>8}{:>8}{:>8}{:>9}{:>8}\n", "group", "role",
                      "ranks", "count", "MB", "sum ms", "algbw", "busbw", "util", "exposed", "slowest");
  for (const CommGroupSummary& g : x.groups) {
    const std::string_view mark = g.source != "timeline" ? "*" : "";  // kept when a long name is cut
    const std::string name =
        Fit(g.label.empty() ? (g.group.empty() ? "(unnamed)" : g.group) : g.label, 19 - mark.size()) +
        std::string(mark);
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
    WriteMembers(w, g);
    w->Key("collectives").Uint(g.collectives);
    w->Key("count_with_bytes").Uint(g.count_with_bytes);
    w->Key("bytes");
    g.count_with_bytes ? w->Int(g.bytes) : w->Null();
    WriteTraffic(w, g);
    w->Key("slowest_why").String(g.slowest_why);
    WriteSlowestLink(w, g.slowest_link ? &*g.slowest_link : nullptr, true);
    w->Key("busiest_primitive");
    g.busiest_type_ms > 0 ? w->String(CollectiveTypeName(g.busiest_type)) : w->Null();
    WriteGroupTransports(w, g);
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
    w->Key("ranks");
    JsonInts(*w, d.ranks);
    w->Key("collectives").Uint(d.collectives);
    w->Key("bytes").Int(d.bytes);
    WriteTraffic(w, d);
    WriteSlowestLink(w, d.slowest_link && d.slowest_link->bandwidth_gbps ? &*d.slowest_link : nullptr, false);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace tuneprof::comm_sections

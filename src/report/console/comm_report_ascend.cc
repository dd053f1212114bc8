// torch_npu's own communication figures: HCCL ops' transit / wait split, transports and the link matrix.
#include "report/console/comm_report_sections.h"

#include <fmt/format.h>

#include "analysis/comm/comm_links.h"
#include "base/text_escape.h"
#include "report/common/format.h"
#include "report/common/json_fields.h"

namespace tuneprof::comm_sections {
namespace {

void WriteAscendTransport(JsonWriter* w, const AscendTransport& t) {
  w->BeginObject();
  w->Key("transport").String(t.transport);
  w->Key("size_mb").Double(t.size_mb);
  w->Key("time_ms").Double(t.time_ms);
  JsonNumberField(*w, "bandwidth_gbps", t.bandwidth_gbps);
  w->Key("bandwidth_recomputed").Bool(t.bandwidth_recomputed);
  JsonNumberField(*w, "large_packet_ratio", t.large_packet_ratio);
  w->Key("packets").Uint(t.packets);
  w->Key("small_packets").Uint(t.small_packets);
  JsonNumberField(*w, "utilization", t.utilization);
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
  JsonNumberField(*w, "wait_ratio", op.wait_ratio);
  JsonNumberField(*w, "synchronization_ratio", op.synchronization_ratio);
  JsonNumberField(*w, "file_wait_ratio", op.file_wait_ratio);
  w->Key("transit_from_bandwidth").Bool(op.transit_from_bandwidth);
  w->Key("transports").BeginArray();
  for (const AscendTransport& t : op.transports) WriteAscendTransport(w, t);
  w->EndArray();
  w->EndObject();
}

// The rank's HCCL ops summed, totals left out; transit, wait, sync and idle over the ops whose split is known.
struct AscendOpSums {
  uint64_t ops = 0, split_dropped = 0;
  double elapse = 0, transit = 0, estimated = 0, wait = 0, sync = 0, idle = 0;
};

AscendOpSums SumAscendOps(const RankCommunication& r) {
  AscendOpSums sums;
  for (const AscendCommOp& op : r.ascend_ops) {
    if (op.total) continue;
    ++sums.ops;
    sums.elapse += op.elapse_ms;
    if (!SplitKnown(op)) {
      ++sums.split_dropped;
      continue;
    }
    sums.transit += op.transit_ms;
    sums.estimated += op.transit_from_bandwidth ? op.transit_ms : 0;
    sums.wait += op.wait_ms;
    sums.sync += op.synchronization_ms;
    sums.idle += op.idle_ms;
  }
  return sums;
}

}  // namespace

void AppendAscend(const RankCommunication& r, std::string* out) {
  if (r.ascend_ops.empty() && r.ascend_links.empty()) return;
  const auto [ops, split_dropped, elapse, transit, estimated, wait, sync, idle] = SumAscendOps(r);
  // No op with a known split: its sums are unknown, not 0.
  const bool any_split = split_dropped < ops || ops == 0;
  const auto split = [any_split](double ms) { return any_split ? fmt::format("{:.3f}", ms) : std::string("-"); };
  // Transit the time info wrote as 0, taken from the bandwidth info instead, is said to be an estimate.
  const std::string from_bandwidth =
      estimated > 0 ? fmt::format(" ({:.3f} from the bandwidth info where the time info has 0)", estimated) : "";
  *out += fmt::format("  HCCL ops (communication.json / analysis.db): {}  elapse {:.3f} ms  transit {}{}  wait {}\n",
                      ops, elapse, split(transit), from_bandwidth, split(wait));
  *out += fmt::format("  sync {} ms  idle {}  wait ratio {}  sync ratio {}\n", split(sync), split(idle),
                      NumberCell(r.ascend_wait_ratio, 4), NumberCell(r.ascend_synchronization_ratio, 4));
  if (split_dropped > 0) {
    *out += fmt::format(
        "  (transit, wait, sync, idle and ratios leave out {} of the {} ops: their steps' split is "
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

// The msprof slow-rank rule's verdict, and where it and the timeline's arrivals disagree.
void AppendAscendVerdict(const CrossRankCommunication& x, std::string* out) {
  if (x.ascend_verdict.empty()) return;
  if (x.ascend_verdict == "no wait") {
    *out += x.pipeline ? "\nHCCL (msprof rule): no rank waits outside the pipeline's send / receive hand-offs, "
                         "whose waits are the bubble (see the pipeline stages): no slow rank\n"
                       : "\nHCCL (msprof rule): no rank's HCCL operations wait: no slow rank, no slow link\n";
    return;
  }
  if (x.ascend_verdict == "pipeline bubble") {
    *out +=
        "\nHCCL (msprof rule): no slow rank; the pipeline's send / receive waits are its bubble (see the pipeline "
        "stages), and the other operations' synchronization is short\n";
    return;
  }
  const bool named = x.ascend_max_wait_rank.has_value();
  const std::string verdict =
      x.ascend_slow_rank ? fmt::format("slow rank: {}", *x.ascend_slow_rank)
      : x.ascend_verdict == "slow link"
          ? fmt::format("{} synchronization is short: a slow link, not a slow rank", named ? "its" : "their")
          : std::string("the ranks' wait ratios are within 0.05 of each other: no rank stands out");
  const std::string most = named ? fmt::format("most wait on rank {}", *x.ascend_max_wait_rank)
                                 : std::string("the ranks that wait most wait alike (within 1 %)");
  *out += fmt::format("\nHCCL (msprof rule): {}; {}\n", most, verdict);
  if (x.pipeline) {
    *out +=
        "  over the other operations: the pipeline's send / receive waits are its bubble (see the pipeline "
        "stages), left out\n";
  }
  if (x.slow_rank_rules_disagree()) {
    *out += fmt::format(
        "  the two rules disagree: the timeline's arrivals name rank {}, the wait ratios rank {}; the arrivals "
        "are measured per collective, the ratios are totals\n",
        *x.straggler_rank, *x.ascend_slow_rank);
  }
}

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
  JsonNumberField(*w, "wait_ratio", r.ascend_wait_ratio);
  JsonNumberField(*w, "synchronization_ratio", r.ascend_synchronization_ratio);
  double from_bandwidth = 0;
  for (const AscendCommOp& op : r.ascend_ops) {
    if (!op.total && op.transit_from_bandwidth) from_bandwidth += op.transit_ms;
  }
  w->Key("transit_from_bandwidth_ms").Double(from_bandwidth);
  w->Key("transports").BeginArray();
  for (const AscendTransportTotal& t : r.ascend_transports) {
    w->BeginObject();
    w->Key("transport").String(t.transport);
    w->Key("size_mb").Double(t.size_mb);
    w->Key("time_ms").Double(t.time_ms);
    JsonNumberField(*w, "bandwidth_gbps", t.bandwidth_gbps);
    JsonNumberField(*w, "utilization", t.utilization);
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
    JsonNumberField(*w, "bandwidth_gbps", cell.bandwidth_gbps);
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
    JsonNumberField(*w, "bandwidth_gbps", link.bandwidth_gbps);
    w->Key("slow").Bool(link.slow);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace tuneprof::comm_sections

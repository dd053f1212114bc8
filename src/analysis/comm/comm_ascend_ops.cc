#include "analysis/comm/comm_ascend_ops.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "analysis/comm/comm_links.h"

namespace tuneprof {
namespace {

std::optional<double> Finite(double value) {
  return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

double Or0(double value) { return std::isfinite(value) ? value : 0.0; }

std::optional<double> Ratio(double part, double other) {
  const double whole = part + other;
  return whole > 0 ? std::optional<double>(part / whole) : std::nullopt;
}

// RDMA packets under 1 MB are small, on-node (SDMA, HCCS, PCIE, SIO) under 16 MB.
double SmallPacketMb(std::string_view transport) { return transport == "RDMA" ? 1.0 : 16.0; }

// The profile's standard bandwidth for an Ascend transport (msprof compares to it directly).
std::optional<double> AscendPeak(std::string_view transport, const HardwareSelection& hardware) {
  if (hardware.profile == nullptr) return std::nullopt;
  std::string_view name;
  if (transport == "HCCS")
    name = "hccs";
  else if (transport == "RDMA")
    name = "roce";
  else if (transport == "PCIE")
    name = "pcie";
  else if (transport == "SIO")
    name = "sio";
  else
    return std::nullopt;  // SDMA aggregates several links; LOCAL is on-chip
  for (const LinkBandwidth& link : hardware.profile->links) {
    if (link.transport == name) return link.gb_per_s.value;
  }
  return std::nullopt;
}

std::optional<double> Utilization(std::optional<double> bandwidth, std::optional<double> peak) {
  if (!bandwidth || !peak || *peak <= 0) return std::nullopt;
  return *bandwidth / *peak;
}

AscendTransport ReadTransport(const Trace& trace, const HcclTransportTraffic& traffic, const HardwareSelection& hw) {
  const CommunicationTables& tables = trace.communication();
  AscendTransport t;
  t.transport = std::string(trace.str(traffic.transport));
  t.size_mb = Or0(traffic.transit_size_mb);
  t.time_ms = Or0(traffic.transit_time_ms);
  t.bandwidth_gbps = Finite(traffic.bandwidth_gbps);
  if (!t.bandwidth_gbps && t.time_ms > 0) {
    t.bandwidth_gbps = t.size_mb / t.time_ms;  // MB/ms = GB/s
    t.bandwidth_recomputed = true;
  }
  t.large_packet_ratio = Finite(traffic.large_packet_ratio);
  for (uint32_t b = traffic.first_bucket; b < traffic.first_bucket + traffic.bucket_count; ++b) {
    const HcclPacketBucket& bucket = tables.buckets[b];
    t.packets += static_cast<uint64_t>(std::max<int64_t>(bucket.count, 0));
    if (bucket.packet_mb < SmallPacketMb(t.transport))
      t.small_packets += static_cast<uint64_t>(std::max<int64_t>(bucket.count, 0));
  }
  t.peak_gbps = AscendPeak(t.transport, hw);
  t.utilization = Utilization(t.bandwidth_gbps, t.peak_gbps);
  return t;
}

// The op's time split into transit, wait, synchronization and idle; NaN where the importer dropped it.
void ReadSplit(const HcclOpTime& op, AscendCommOp* out) {
  if (op.split_dropped) {
    out->transit_ms = out->wait_ms = out->synchronization_ms = out->idle_ms = std::nan("");
    return;
  }
  out->transit_ms = Or0(op.transit_ms);
  out->wait_ms = Or0(op.wait_ms);
  out->synchronization_ms = Or0(op.synchronization_ms);
  out->idle_ms = Or0(op.idle_ms);
  out->wait_ratio = Ratio(out->wait_ms, out->transit_ms);
  out->synchronization_ratio = Ratio(out->synchronization_ms, out->transit_ms);
  out->file_wait_ratio = Finite(op.wait_ratio);
}

// Some exports write Transit Time 0 in an op's time info while its bandwidth info holds the transit of
// its traffic: the op's transit is then its longest transport's (the transports run side by side), at
// most the part of the op it did not wait (a transport's time adds up its tasks, which overlap). With no
// transit in either, how much of the op the wait is stays unknown: over a zero transit any wait would
// read as the whole op (wait ratio 1), ranks waiting for each other whether they did or not.
void TakeZeroTransitFromBandwidth(AscendCommOp* op) {
  if (op->total || !SplitKnown(*op) || op->transit_ms > 0) return;
  double longest = 0;
  for (const AscendTransport& t : op->transports) longest = std::max(longest, t.time_ms);
  longest = std::min(longest, op->elapse_ms - op->wait_ms);
  if (longest > 0) {
    op->transit_ms = longest;
    op->transit_from_bandwidth = true;
    op->wait_ratio = Ratio(op->wait_ms, op->transit_ms);
    op->synchronization_ratio = Ratio(op->synchronization_ms, op->transit_ms);
  } else {
    op->wait_ratio = op->synchronization_ratio = std::nullopt;
  }
}

}  // namespace

void ReadAscendOps(const Trace& trace, const HardwareSelection& hw, RankCommunication* rank) {
  const CommunicationTables& tables = trace.communication();
  double wait = 0, transit = 0, sync = 0;
  std::map<std::string, AscendTransportTotal> totals;
  // Exact sizes: a rank's ops stay in its summary until the reduce, where a vector's doubling slack was a
  // tenth of the peak over 1,024 ranks.
  rank->ascend_ops.reserve(tables.ops.size());
  for (const HcclOpTime& op : tables.ops) {
    AscendCommOp out;
    out.step = std::string(trace.str(op.step));
    out.p2p = op.p2p;
    out.total = op.total;
    out.op_name = std::string(trace.str(op.op_name));
    out.group = std::string(trace.str(op.group));
    out.type = out.total ? CollectiveType::kOther : ParseCollectiveType(out.op_name);
    out.elapse_ms = Or0(op.elapse_ms);
    ReadSplit(op, &out);
    for (uint32_t i = op.first_traffic; i < op.first_traffic + op.traffic_count; ++i) {
      AscendTransport t = ReadTransport(trace, tables.traffic[i], hw);
      if (t.size_mb <= 0 && t.time_ms <= 0) continue;
      if (op.total) {
        AscendTransportTotal& total = totals[t.transport];
        total.transport = t.transport;
        total.size_mb += t.size_mb;
        total.time_ms += t.time_ms;
        total.packets += t.packets;
        total.small_packets += t.small_packets;
      }
      out.transports.push_back(std::move(t));
    }
    out.transports.shrink_to_fit();
    TakeZeroTransitFromBandwidth(&out);
    if (!op.total && SplitKnown(out) && out.transit_ms > 0) {
      wait += out.wait_ms;
      transit += out.transit_ms;
      sync += out.synchronization_ms;
    }
    rank->ascend_ops.push_back(std::move(out));
  }
  for (auto& [name, total] : totals) {
    if (total.time_ms > 0) total.bandwidth_gbps = total.size_mb / total.time_ms;
    total.utilization = Utilization(total.bandwidth_gbps, AscendPeak(name, hw));
    rank->ascend_transports.push_back(total);
  }
  if (tables.ops_present) {
    rank->ascend_wait_ratio = Ratio(wait, transit);
    rank->ascend_synchronization_ratio = Ratio(sync, transit);
  }
}

bool IsLinkTransport(std::string_view transport) {
  return transport == "HCCS" || transport == "PCIE" || transport == "RDMA" || transport == "SIO";
}

void KeepAscendOpsTheReduceReads(RankCommunication* rank) {
  std::vector<AscendCommOp>& ops = rank->ascend_ops;
  if (std::all_of(ops.begin(), ops.end(), [](const AscendCommOp& op) { return op.total; })) return;
  std::erase_if(ops, [](const AscendCommOp& op) { return op.total; });
  for (AscendCommOp& op : ops) {
    std::erase_if(op.transports, [](const AscendTransport& t) { return !IsLinkTransport(t.transport); });
    op.transports.shrink_to_fit();
  }
  ops.shrink_to_fit();
}

namespace {

// Newer torch_npu writes "<type>-total" keys per op type; older versions one "Total Op Info" per section.
bool IsMatrixTotal(std::string_view op_key) { return op_key.ends_with("-total") || op_key == "Total Op Info"; }

AscendMatrixLink LinkOf(const Trace& trace, const HcclLink& link) {
  AscendMatrixLink out;
  out.step = std::string(trace.str(link.step));
  out.op_key = std::string(trace.str(link.op_key));
  out.group = std::string(trace.str(link.group));
  out.src_rank = out.src_local = link.src_rank;
  out.dst_rank = out.dst_local = link.dst_rank;
  out.transport = std::string(trace.str(link.transport));
  out.size_mb = Or0(link.transit_size_mb);
  out.time_ms = Or0(link.transit_time_ms);
  out.bandwidth_gbps = Finite(link.bandwidth_gbps);
  return out;
}

// Older torch_npu's "Total Op Info" sums a step's section over all the rank's groups, whose ids are each
// numbered within their own group (member 1 of a pair is not rank 1): where the section lists its ops with
// their groups, its totals are rebuilt per group from them, so that every id keeps the group it counts in.
std::vector<AscendMatrixLink> TotalCells(const Trace& trace) {
  const std::vector<HcclLink>& links = trace.communication().links;
  std::set<std::pair<uint32_t, bool>> mixed;  // (step, p2p) whose total has no group
  for (const HcclLink& link : links) {
    if (trace.str(link.op_key) == "Total Op Info" && trace.str(link.group).empty())
      mixed.insert({link.step.value, link.p2p});
  }
  std::set<std::pair<uint32_t, bool>> rebuilt;
  std::map<std::tuple<std::string, bool, std::string, int64_t, int64_t, std::string>, AscendMatrixLink> sums;
  for (const HcclLink& link : links) {
    const std::string_view key = trace.str(link.op_key);
    if (IsMatrixTotal(key) || trace.str(link.group).empty() || !mixed.contains({link.step.value, link.p2p})) continue;
    rebuilt.insert({link.step.value, link.p2p});
    const AscendMatrixLink cell = LinkOf(trace, link);
    AscendMatrixLink& sum = sums[{cell.step, link.p2p, cell.group, cell.src_local, cell.dst_local, cell.transport}];
    if (sum.op_key.empty()) {
      sum = cell;
      sum.op_key = "Total Op Info";
      sum.size_mb = sum.time_ms = 0;
    }
    sum.size_mb += cell.size_mb;
    sum.time_ms += cell.time_ms;
  }
  std::vector<AscendMatrixLink> out;
  for (const HcclLink& link : links) {
    // Per-op and top1/middle/bottom* cells repeat the totals.
    if (!IsMatrixTotal(trace.str(link.op_key)) || rebuilt.contains({link.step.value, link.p2p})) continue;
    out.push_back(LinkOf(trace, link));
  }
  for (auto& [key, sum] : sums) {
    sum.bandwidth_gbps = sum.time_ms > 0 ? std::optional<double>(sum.size_mb / sum.time_ms) : std::nullopt;
    out.push_back(std::move(sum));
  }
  return out;
}

}  // namespace

void ReadAscendMatrix(const Trace& trace, RankCommunication* rank) {
  rank->ascend_links = TotalCells(trace);
  for (AscendMatrixLink& link : rank->ascend_links) {
    if (!link.bandwidth_gbps && link.time_ms > 0) link.bandwidth_gbps = link.size_mb / link.time_ms;
  }
  rank->ascend_rank_matrix = AggregateLinks(rank->ascend_links);
  MarkSlowLinks(&rank->ascend_links);
}

}  // namespace tuneprof

// communication.small_messages: most collectives carry less than 1 MB, so each
// pays the link's fixed latency instead of moving data (msprof-analyze: small packets; nccl-tests: busbw
// only approaches the link peak from tens of MB up). Gain: if the small messages of a step travelled in
// buckets of the default DDP size (25 MB), the step would pay one latency per bucket instead of one per
// message; the latency is taken as the shortest small collective of the rank (an upper bound of the
// fixed cost), so gain = (messages - buckets) x that latency per step, within the exposed communication.
//
// communication.small_packets (msprof-analyze Packet), the same question per transport on Ascend: of the
// HCCL operators in communication.json (or the Db export's analysis tables) that move data over SDMA (over
// RDMA), the share whose transit size is below `small_packet_sdma_mb` (`small_packet_rdma_mb`); a transport
// fires above `small_packet_share_pct` of its operators, as msprof-analyze counts (its message speaks of the
// data volume, its count is of operators). Small transfers cost latency per transfer, which their count
// measures; the share of the volume they carry is reported beside it. A transport whose small operators hold
// under `small_packet_min_transit_pct` of its transit time (of its volume where no time is recorded) stays
// quiet: a negligible share is not worth a change. Both findings advise the traffic the small transfers
// mostly are: pipeline send / recv, the expert-parallel all-to-all, else gradients. Gain: unknown (a larger
// packet's time is not measured).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"
#include "base/ascii_case.h"

namespace tuneprof {
namespace {

constexpr double kBucketBytes = 25.0 * 1024 * 1024;  // DistributedDataParallel's default bucket_cap_mb

struct SmallMessages {
  uint64_t count = 0;
  uint64_t p2p = 0;          // of `count`, pipeline send / recv
  uint64_t batched_p2p = 0;  // of `p2p`, HCCL batchSendRecv: already one call per batch
  uint64_t all_to_all = 0;   // of `count`, all-to-all (the expert-parallel token exchange)
  uint64_t with_bytes = 0;
  int64_t bytes = 0;
  int64_t time_ns = 0;
  int64_t shortest_ns = 0;
};

// HCCL's batched point-to-point op (hcom_batchSendRecv__...): the sends and receives of one call, batched.
bool IsBatchSendRecv(std::string_view name) { return ContainsNoCase(name, "batchsendrecv"); }

SmallMessages CountSmall(const RankCommunication& comm) {
  SmallMessages small;
  for (const Collective& c : comm.collectives) {
    if (c.bytes < 0) continue;
    ++small.with_bytes;
    if (c.bytes >= kSmallMessageBytes || c.duration_ns <= 0) continue;
    small.shortest_ns = small.count == 0 ? c.duration_ns : std::min(small.shortest_ns, c.duration_ns);
    ++small.count;
    if (c.type == CollectiveType::kSendRecv) ++small.p2p;
    if (c.type == CollectiveType::kSendRecv && IsBatchSendRecv(c.name)) ++small.batched_p2p;
    if (c.type == CollectiveType::kAllToAll) ++small.all_to_all;
    small.bytes += c.bytes;
    small.time_ns += c.duration_ns;
  }
  return small;
}

struct TransportPackets {
  std::string_view transport;
  double limit_mb = 0;
  uint64_t ops = 0, small_ops = 0, small_p2p_ops = 0, small_all_to_all_ops = 0;
  uint64_t small_batched_p2p_ops = 0;  // of the p2p ones, HCCL's batchSendRecv: already one call per batch
  double mb = 0, small_mb = 0, small_ms = 0, ms = 0;
  // The small operators' share of the transport's transit time; of its volume where no time is recorded.
  double SmallCostPct() const {
    if (ms > 0) return 100 * small_ms / ms;
    return mb > 0 ? 100 * small_mb / mb : 0;
  }
  bool fired(double share_pct, double min_cost_pct) const {
    return ops > 0 && small_ops > 0 && 100.0 * static_cast<double>(small_ops) / static_cast<double>(ops) > share_pct &&
           SmallCostPct() >= min_cost_pct;
  }
};

// Each operator's traffic over `packets->transport`, totals left out (they sum the operators).
void CountPackets(const Trace& trace, TransportPackets* packets) {
  const CommunicationTables& tables = trace.communication();
  for (const HcclOpTime& op : tables.ops) {
    if (op.total) continue;
    for (uint32_t i = op.first_traffic; i < op.first_traffic + op.traffic_count && i < tables.traffic.size(); ++i) {
      const HcclTransportTraffic& traffic = tables.traffic[i];
      if (trace.str(traffic.transport) != packets->transport) continue;
      if (!(traffic.transit_size_mb > 0)) continue;  // no traffic over it (NaN too), as msprof-analyze skips
      ++packets->ops;
      packets->mb += traffic.transit_size_mb;
      if (traffic.transit_time_ms > 0) packets->ms += traffic.transit_time_ms;
      if (traffic.transit_size_mb >= packets->limit_mb) continue;
      ++packets->small_ops;
      const std::string_view name = trace.str(op.op_name);
      const CollectiveType type = ParseCollectiveType(name);
      if (op.p2p || type == CollectiveType::kSendRecv) {
        ++packets->small_p2p_ops;
        if (IsBatchSendRecv(name)) ++packets->small_batched_p2p_ops;
      }
      if (!op.p2p && type == CollectiveType::kAllToAll) ++packets->small_all_to_all_ops;
      packets->small_mb += traffic.transit_size_mb;
      if (traffic.transit_time_ms > 0) packets->small_ms += traffic.transit_time_ms;
    }
  }
}

// Small transfers that are mostly pipeline send / recv carry activations between stages, not gradients:
// gradient buckets do not touch them. What does is fewer, larger transfers and overlapping them; batching
// a step's sends and receives into one call too, unless they already are (HCCL's batchSendRecv ops).
void AdviseP2pTransfers(const RankEvidence& rank, uint64_t small, uint64_t small_p2p, uint64_t batched, Finding* f) {
  if (small == 0 || 2 * small_p2p <= small) return;
  f->AddNumber("small_p2p_share_pct", 100.0 * static_cast<double>(small_p2p) / static_cast<double>(small), "%");
  if (batched == small_p2p) {
    f->strategy =
        "Most of the small transfers are pipeline send / recv of activations between stages, which gradient "
        "buckets do not change, already batched into one call each (batchSendRecv): send fewer, larger "
        "transfers (larger micro-batches, so fewer per global batch) and overlap them with the next "
        "micro-batch's compute.";
    f->apis = {std::string(ForPlatform(rank, "Megatron-LM: --micro-batch-size, --overlap-p2p-communication",
                                       "MindSpeed / Megatron: --micro-batch-size, --overlap-p2p-communication",
                                       "larger micro-batches"))};
    return;
  }
  f->strategy =
      "Most of the small transfers are pipeline send / recv of activations between stages, which gradient "
      "buckets do not change: send fewer, larger transfers (larger micro-batches, so fewer per global batch), "
      "batch each step's sends and receives into one call, and overlap them with the next micro-batch's compute.";
  f->apis = {std::string(ForPlatform(
      rank, "Megatron-LM: --micro-batch-size, --overlap-p2p-communication; torch.distributed.batch_isend_irecv",
      "MindSpeed / Megatron: --micro-batch-size, --overlap-p2p-communication; torch.distributed.batch_isend_irecv "
      "over HCCL",
      "larger micro-batches; torch.distributed.batch_isend_irecv"))};
}

// Small transfers that are mostly the expert-parallel all-to-all (dispatch / combine) carry each peer's share
// of a micro-batch's tokens: gradient buckets and fused optimizers do not touch them. What does is more tokens
// per all-to-all and hiding it beside the experts' compute.
void AdviseAllToAllTransfers(const RankEvidence& rank, uint64_t small, uint64_t small_all_to_all, Finding* f) {
  if (small == 0 || !MostOf(small_all_to_all, small)) return;
  f->AddNumber("small_all_to_all_share_pct", 100.0 * static_cast<double>(small_all_to_all) / static_cast<double>(small),
               "%");
  f->strategy =
      "Most of the small transfers are the expert-parallel token all-to-all (dispatch / combine), each peer's "
      "share of a micro-batch's tokens, which gradient buckets do not change: overlap the all-to-all with the "
      "experts' compute of another micro-batch (two-batch overlap; DualPipe-style schedules) or use fused "
      "dispatch / combine kernels, and give each all-to-all more tokens (a larger micro-batch) where memory "
      "allows.";
  f->apis = {std::string(ExpertAllToAllOverlapApis(rank))};
}

Finding SmallPacketsFinding(const RankEvidence& rank, const AdvisorConfig& config,
                            const std::vector<TransportPackets>& fired, double share_pct) {
  Finding f = NewFinding("communication.small_packets", rank, config);
  std::vector<std::string> parts;
  double worst = 0, small_ms = 0;
  uint64_t small = 0, small_p2p = 0, batched = 0, small_all_to_all = 0;
  for (const TransportPackets& t : fired) {
    small += t.small_ops;
    small_p2p += t.small_p2p_ops;
    batched += t.small_batched_p2p_ops;
    small_all_to_all += t.small_all_to_all_ops;
    const double ops_pct = 100.0 * static_cast<double>(t.small_ops) / static_cast<double>(t.ops);
    worst = std::max(worst, ops_pct);
    small_ms += t.small_ms;
    const double volume_pct = t.mb > 0 ? 100 * t.small_mb / t.mb : 0;
    parts.push_back(fmt::format("{:.0f} % of {} operators move less than {:g} MB ({:.3g} % of its volume)", ops_pct,
                                t.transport, t.limit_mb, volume_pct));
    const std::string key(t.transport == "SDMA" ? "sdma" : "rdma");
    f.AddNumber(key + "_small_ops", static_cast<double>(t.small_ops), "count");
    f.AddNumber(key + "_ops", static_cast<double>(t.ops), "count");
    f.AddNumber(key + "_small_ops_pct", ops_pct, "%");
    f.AddNumber(key + "_small_volume_pct", volume_pct, "%");
    f.AddNumber(key + "_small_transit_ms", t.small_ms, "ms");
    if (t.ms > 0) f.AddNumber(key + "_small_transit_pct", 100 * t.small_ms / t.ms, "%");
    f.AddNumber(key + "_limit_mb", t.limit_mb, "MB");
  }
  f.title = fmt::format("{} ({:.3f} ms of transit)", fmt::join(parts, "; "), small_ms);
  f.SetValue(worst, share_pct, "% of operators");
  AdviseP2pTransfers(rank, small, small_p2p, batched, &f);
  AdviseAllToAllTransfers(rank, small, small_all_to_all, &f);
  return f;
}

}  // namespace

void RuleCommSmallPackets(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  const Trace& trace = *rank.trace;
  if (trace.communication().ops.empty()) return;
  const double share_pct = config.Get(threshold::kSmallPacketSharePct);
  const double min_cost_pct = config.Get(threshold::kSmallPacketMinTransitPct);
  std::vector<TransportPackets> fired;
  for (auto [transport, key] :
       {std::pair{"SDMA", threshold::kSmallPacketSdmaMb}, {"RDMA", threshold::kSmallPacketRdmaMb}}) {
    TransportPackets packets{transport, config.Get(key)};
    CountPackets(trace, &packets);
    if (packets.fired(share_pct, min_cost_pct)) fired.push_back(packets);
  }
  if (!fired.empty()) out->push_back(SmallPacketsFinding(rank, config, fired, share_pct));
}

void RuleCommSmallMessages(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.comm == nullptr) return;
  const SmallMessages small = CountSmall(*rank.comm);
  if (small.count == 0 || small.with_bytes == 0) return;
  const double share = 100.0 * static_cast<double>(small.count) / static_cast<double>(small.with_bytes);
  const double threshold = config.Get(threshold::kSmallMessageSharePct);
  const double time_per_step = PerStep(rank, static_cast<double>(small.time_ns));
  if (share < threshold || PctOfStep(rank, time_per_step) < config.Get(threshold::kExposedCommunicationPct)) return;
  const double messages_per_step = PerStep(rank, static_cast<double>(small.count));
  const double buckets_per_step =
      std::max(1.0, std::ceil(PerStep(rank, static_cast<double>(small.bytes)) / kBucketBytes));
  Finding f = NewFinding("communication.small_messages", rank, config);
  f.title = fmt::format(
      "{:.0f} % of the collectives move less than 1 MB ({:.0f} per step, {} per step): "
      "latency-bound",
      share, messages_per_step, FormatDuration(time_per_step));
  f.value = share;
  f.uncapped_gain_ns = std::max(0.0, messages_per_step - buckets_per_step) * static_cast<double>(small.shortest_ns);
  f.AddNumber("small_messages_per_step", messages_per_step, "count");
  f.AddNumber("small_message_summed_us", time_per_step / 1e3, "us");
  f.AddNumber("mean_small_message_bytes", static_cast<double>(small.bytes) / static_cast<double>(small.count), "B");
  f.AddNumber("shortest_small_message_us", static_cast<double>(small.shortest_ns) / 1e3, "us");
  f.AddNumber("buckets_of_25MB_per_step", buckets_per_step, "count");
  AdviseP2pTransfers(rank, small.count, small.p2p, small.batched_p2p, &f);
  AdviseAllToAllTransfers(rank, small.count, small.all_to_all, &f);
  out->push_back(std::move(f));
}

}  // namespace tuneprof

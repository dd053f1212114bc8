#include "analysis/comm/transport_checks.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>

namespace tuneprof {
namespace {

// SDMA is torch_npu's sum of the on-node transports, weighed beside them as msprof-analyze weighs it;
// LOCAL stays on the chip and has no link to be slow.
constexpr std::array<std::string_view, 5> kSpreadTransports = {"HCCS", "PCIE", "RDMA", "SDMA", "SIO"};

bool WeighsSpread(std::string_view transport) {
  return std::find(kSpreadTransports.begin(), kSpreadTransports.end(), transport) != kSpreadTransports.end();
}

struct RankBandwidth {
  int64_t rank = 0;
  double gbps = 0;
  double size_mb = 0;
  double time_ms = 0;
};

TransportSpread Spread(std::string_view transport, const std::vector<RankBandwidth>& ranks) {
  TransportSpread out;
  out.transport = std::string(transport);
  out.ranks = ranks.size();
  double sum = 0;
  const RankBandwidth* slow = &ranks.front();
  const RankBandwidth* fast = &ranks.front();
  for (const RankBandwidth& r : ranks) {
    sum += r.gbps;
    if (r.gbps < slow->gbps) slow = &r;
    if (r.gbps > fast->gbps) fast = &r;
  }
  out.mean_gbps = sum / static_cast<double>(ranks.size());
  out.slow_rank = slow->rank;
  out.slow_gbps = slow->gbps;
  out.slow_size_mb = slow->size_mb;
  out.slow_time_ms = slow->time_ms;
  out.fast_rank = fast->rank;
  out.fast_gbps = fast->gbps;
  out.gap_ratio = out.mean_gbps > 0 ? (fast->gbps - slow->gbps) / out.mean_gbps : 0;
  return out;
}

const AscendTransport* RdmaOf(const AscendCommOp& op) {
  for (const AscendTransport& t : op.transports) {
    if (t.transport == "RDMA" && t.size_mb > 0) return &t;
  }
  return nullptr;
}

// The same operation on every rank that ran it: communication.json names it alike on each.
std::string OpKey(std::string_view group, std::string_view op_name, std::string_view step) {
  std::string key;
  key.reserve(group.size() + op_name.size() + step.size() + 2);
  key.append(group).append(1, '\n').append(op_name).append(1, '\n').append(step);
  return key;
}

std::string OpKey(const AscendCommOp& op) { return OpKey(op.group, op.op_name, op.step); }

}  // namespace

std::vector<TransportSpread> SpreadOfTransports(const std::vector<RankCommunication>& ranks) {
  std::map<std::string_view, std::vector<RankBandwidth>> by_transport;
  for (const RankCommunication& rank : ranks) {
    for (const AscendTransportTotal& t : rank.ascend_transports) {
      if (!WeighsSpread(t.transport) || t.size_mb < kSlowLinkMinMb || !t.bandwidth_gbps || *t.bandwidth_gbps <= 0) {
        continue;
      }
      by_transport[t.transport].push_back(RankBandwidth{rank.rank, *t.bandwidth_gbps, t.size_mb, t.time_ms});
    }
  }
  std::vector<TransportSpread> out;
  for (const auto& [transport, bandwidths] : by_transport) {
    if (bandwidths.size() >= 2) out.push_back(Spread(transport, bandwidths));
  }
  return out;
}

std::vector<RetransmissionSuspect> FindRetransmissions(const std::vector<RankCommunication>& ranks) {
  std::vector<RetransmissionSuspect> suspects;
  std::unordered_map<std::string, double> min_elapse;
  for (const RankCommunication& rank : ranks) {
    for (const AscendCommOp& op : rank.ascend_ops) {
      const AscendTransport* rdma = op.total ? nullptr : RdmaOf(op);
      if (rdma == nullptr || rdma->time_ms <= kRetransmissionMs) continue;
      RetransmissionSuspect s{rank.rank,     op.group,      op.op_name,           op.step,
                              rdma->size_mb, rdma->time_ms, rdma->bandwidth_gbps, 0};
      suspects.push_back(std::move(s));
      min_elapse.emplace(OpKey(op), std::numeric_limits<double>::infinity());
    }
  }
  if (suspects.empty()) return suspects;
  for (const RankCommunication& rank : ranks) {
    for (const AscendCommOp& op : rank.ascend_ops) {
      if (op.total) continue;
      auto it = min_elapse.find(OpKey(op));
      if (it != min_elapse.end()) it->second = std::min(it->second, op.elapse_ms);
    }
  }
  // A rank that reached the operation late waited inside it: a long transit on the others is then their
  // wait for it, not a retransmission, and the shortest elapse shows it.
  std::erase_if(suspects, [&](RetransmissionSuspect& s) {
    s.min_elapse_ms = min_elapse.at(OpKey(s.group, s.op_name, s.step));
    return s.min_elapse_ms < kRetransmissionMs;
  });
  return suspects;
}

}  // namespace tuneprof

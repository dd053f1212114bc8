// Two checks of torch_npu's communication.json across the run's ranks (transport_checks.h), as
// msprof-analyze's advisor makes them:
// communication.slow_link: one rank moves data over a transport (HCCS, RDMA, SDMA, PCIE, SIO) materially
// slower than the other ranks do ((fastest - slowest) / mean >= 5 %, msprof-analyze's ratio). It fires on
// the slowest rank, naming the transport, its bandwidth, the mean and the fastest rank's. Gain: the time
// its traffic on that transport would take less at the mean bandwidth.
// communication.retransmission: an RDMA transfer whose transit exceeds 4 s while every rank's copy of the
// operation lasted as long (so not a rank arriving late): the network retransmitted. Gain unknown.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/advisor/rules/finding_specs.h"
#include "analysis/advisor/rules/rule_support.h"
#include "analysis/advisor/rules/rules.h"

namespace tuneprof {
namespace {

std::vector<const TransportSpread*> SlowTransportsOf(const CrossRankCommunication& cross, int64_t rank) {
  std::vector<const TransportSpread*> out;
  for (const TransportSpread& s : cross.transport_spread) {
    if (s.slow_rank == rank && s.gap_ratio >= kSlowLinkGapRatio) out.push_back(&s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TransportSpread* a, const TransportSpread* b) { return a->gap_ratio > b->gap_ratio; });
  return out;
}

// The time the slow rank's traffic on the transport would take less at the mean bandwidth (MB / GB/s = ms).
double ExtraMs(const TransportSpread& s) { return std::max(0.0, s.slow_time_ms - s.slow_size_mb / s.mean_gbps); }

std::string Describe(const TransportSpread& s) {
  return fmt::format("{} {:.3f} GB/s against a mean of {:.3f} GB/s over {} ranks (fastest rank {}: {:.3f} GB/s)",
                     s.transport, s.slow_gbps, s.mean_gbps, s.ranks, s.fast_rank, s.fast_gbps);
}

}  // namespace

void RuleCommSlowLink(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.cross == nullptr) return;
  const std::vector<const TransportSpread*> slow = SlowTransportsOf(*rank.cross, rank.rank_id);
  if (slow.empty()) return;
  const TransportSpread& worst = *slow.front();
  double extra_ms = 0;
  for (const TransportSpread* s : slow) extra_ms += ExtraMs(*s);
  Finding f = NewFinding("communication.slow_link", rank, config);
  f.title = fmt::format(
      "rank {}'s {} bandwidth is the slowest of the run: {:.3f} GB/s against a mean of {:.3f} GB/s "
      "({:.1f} % spread across {} ranks)",
      rank.rank_id, worst.transport, worst.slow_gbps, worst.mean_gbps, 100 * worst.gap_ratio, worst.ranks);
  f.SetValue(100 * worst.gap_ratio, 100 * kSlowLinkGapRatio, "%");
  f.uncapped_gain_ns = PerStep(rank, extra_ms * 1e6);
  for (const TransportSpread* s : slow) {
    const std::string key = fmt::format("{}", s->transport);
    f.AddText(fmt::format("slow_link_{}", key), Describe(*s));
    f.AddNumber(fmt::format("{}_gbps", key), s->slow_gbps, "GB/s");
    f.AddNumber(fmt::format("{}_mean_gbps", key), s->mean_gbps, "GB/s");
    f.AddNumber(fmt::format("{}_fastest_rank", key), static_cast<double>(s->fast_rank), "rank");
    f.AddNumber(fmt::format("{}_fastest_gbps", key), s->fast_gbps, "GB/s");
  }
  const bool network = worst.transport == "RDMA";
  f.strategy =
      fmt::format("Check rank {}'s {} links ({}); compare with rank {}, the fastest.", rank.rank_id, worst.transport,
                  network ? "its NIC and port state, optical modules and the switch ports they use"
                          : "the HCCS / PCIe topology on its node and the devices sharing those links",
                  worst.fast_rank);
  out->push_back(std::move(f));
}

void RuleCommRetransmission(const RankEvidence& rank, const AdvisorConfig& config, std::vector<Finding>* out) {
  if (rank.cross == nullptr) return;
  std::vector<const RetransmissionSuspect*> mine;
  for (const RetransmissionSuspect& s : rank.cross->retransmissions) {
    if (s.rank == rank.rank_id) mine.push_back(&s);
  }
  if (mine.empty()) return;
  const RetransmissionSuspect& longest = **std::max_element(
      mine.begin(), mine.end(), [](const auto* a, const auto* b) { return a->rdma_time_ms < b->rdma_time_ms; });
  Finding f = NewFinding("communication.retransmission", rank, config);
  f.title = fmt::format(
      "{} RDMA transfer{} of rank {} took over {:.0f} s, longest {:.3f} s ({} of group {}, {}): "
      "the network likely retransmitted",
      mine.size(), mine.size() == 1 ? "" : "s", rank.rank_id, kRetransmissionMs / 1e3, longest.rdma_time_ms / 1e3,
      longest.op_name, longest.group, longest.step);
  f.value = static_cast<double>(mine.size());
  f.AddNumber("transfers", static_cast<double>(mine.size()), "count");
  f.AddNumber("limit_ms", kRetransmissionMs, "ms");
  f.AddNumber("longest_transit_ms", longest.rdma_time_ms, "ms");
  f.AddNumber("longest_size_mb", longest.rdma_size_mb, "MB");
  if (longest.rdma_gbps) f.AddNumber("longest_bandwidth_gbps", *longest.rdma_gbps, "GB/s");
  f.AddNumber("shortest_elapse_over_ranks_ms", longest.min_elapse_ms, "ms");
  f.AddText("operation", fmt::format("{} (group {}, {})", longest.op_name, longest.group, longest.step));
  out->push_back(std::move(f));
}

}  // namespace tuneprof

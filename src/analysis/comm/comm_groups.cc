#include "analysis/comm/comm_groups.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/comm/collective_matching.h"
#include "analysis/comm/comm_links.h"
#include "analysis/comm/parallel_roles.h"
#include "analysis/core/cpu_work.h"
#include "analysis/core/device_work.h"
#include "analysis/core/intervals.h"
#include "base/rank_ranges.h"
#include "base/saturating.h"

namespace tuneprof {
namespace {

// HCCL waits (Σ wait ms per rank) closer than this share of the largest do not single out a rank.
constexpr double kWaitNoiseShare = 0.05;

constexpr std::string_view kParallelGroupPrefix = "profiler_metadata.parallel_group_info.";

// Rounded, and held at int64's ends: a damaged communication.json gives sizes and times past them, where
// llround is unspecified (and its sum overflows).
int64_t RoundClamped(double value) {
  constexpr double kEnd = 9.2e18;  // below 2^63, so that the clamped value rounds into range
  return std::isfinite(value) ? std::llround(std::clamp(value, -kEnd, kEnd)) : 0;
}
int64_t MsToNs(double ms) { return RoundClamped(ms * 1e6); }
int64_t MbToBytes(double mb) { return RoundClamped(mb * 1e6); }

void AddSaturating(int64_t* sum, int64_t value) {
  if (__builtin_add_overflow(*sum, value, sum)) {
    *sum = value < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
}

// Groups keyed by (source, group id), kept in order of first appearance.
class GroupTable {
 public:
  CommGroupSummary* Get(std::string_view source, const std::string& group) {
    auto [it, added] = index_.try_emplace({std::string(source), group}, groups_.size());
    if (added) {
      groups_.emplace_back();
      groups_.back().source = std::string(source);
      groups_.back().group = group;
    }
    return &groups_[it->second];
  }
  std::vector<CommGroupSummary> Take() { return std::move(groups_); }

 private:
  std::map<std::pair<std::string, std::string>, size_t> index_;
  std::vector<CommGroupSummary> groups_;
};

// hcom_* ops of a rank with communication.json are counted under its groups instead.
bool CountsOnTimeline(const RankCommunication& r, const Collective& c) {
  return c.source != CollectiveSource::kHccl || r.ascend_ops.empty();
}

void AddRank(CommGroupSummary* g, int64_t rank) {
  if (std::find(g->ranks.begin(), g->ranks.end(), rank) == g->ranks.end()) g->ranks.push_back(rank);
}

// Per group: Σ busbw·duration and Σ duration over the collectives with busbw, for the weighted mean.
struct Weighted {
  double busbw_x_ns = 0;
  int64_t busbw_ns = 0;
  int64_t bytes_ns = 0;
  double utilization_x_ns = 0;  // Σ utilization·duration over the collectives with one (intra-node, known link)
  int64_t utilization_ns = 0;
  std::map<CollectiveType, int64_t> type_ns;  // Σ duration per primitive
};

void AddTimelineCollective(int64_t rank, const Collective& c, CommGroupSummary* g, Weighted* w) {
  AddRank(g, rank);
  ++g->collectives;
  g->duration_ns = SaturatingAdd(g->duration_ns, c.duration_ns);
  if (g->label.empty()) g->label = c.group_desc;
  if (g->global_ranks.empty()) g->global_ranks = ParseGroupRanks(c.group_ranks);
  if (c.bytes >= 0) {
    ++g->count_with_bytes;
    g->bytes = SaturatingAdd(g->bytes, c.bytes);
    w->bytes_ns = SaturatingAdd(w->bytes_ns, c.duration_ns);
  }
  if (c.busbw_gbps) {
    w->busbw_x_ns += *c.busbw_gbps * static_cast<double>(c.duration_ns);
    w->busbw_ns = SaturatingAdd(w->busbw_ns, c.duration_ns);
  }
  if (c.utilization) {
    w->utilization_x_ns += *c.utilization * static_cast<double>(c.duration_ns);
    w->utilization_ns = SaturatingAdd(w->utilization_ns, c.duration_ns);
  }
  w->type_ns[c.type] = SaturatingAdd(w->type_ns[c.type], c.duration_ns);
  if (c.exposed_ns != kNoId) {
    g->exposed_ns = SaturatingAdd(g->exposed_ns, c.exposed_ns);
    g->exposure_known_ns = SaturatingAdd(g->exposure_known_ns, c.duration_ns);
  }
}

// The rank whose late arrivals cost the group's other ranks the most waiting (comm_cross_rank.h's rule), over
// the collectives as the cross-rank waits match them (collective_matching.h: a send / recv of a larger
// communicator with its peer's kernel), its arrivals compared on one clock: each rank's start less the
// offset the run's alignment applied, as the straggler is found (a rank whose clock runs ahead is not late).
void NameSlowestTimelineRanks(const std::vector<RankCommunication>& ranks, const ClockAlignment& clocks,
                              GroupTable* table) {
  auto aligned_start = [&](const MatchedArrival& a) {
    const int64_t correction = a.rank_index < clocks.ranks.size() ? clocks.ranks[a.rank_index].correction_ns() : 0;
    return a.collective->start_ns - correction;
  };
  std::map<std::string, std::map<int64_t, int64_t>> caused;  // group -> rank -> others' wait
  for (const auto& [key, matched] : MatchAcrossRanks(ranks)) {
    std::vector<MatchedArrival> arrivals;
    for (const MatchedArrival& a : matched) {
      if (CountsOnTimeline(ranks[a.rank_index], *a.collective)) arrivals.push_back(a);
    }
    if (arrivals.size() < 2) continue;
    const CollectiveType first_type = arrivals[0].collective->type;
    if (std::any_of(arrivals.begin(), arrivals.end(),
                    [&](const MatchedArrival& a) { return a.collective->type != first_type; }))
      continue;
    const MatchedArrival& last = *std::max_element(
        arrivals.begin(), arrivals.end(),
        [&](const MatchedArrival& a, const MatchedArrival& b) { return aligned_start(a) < aligned_start(b); });
    int64_t wait = 0;
    for (const MatchedArrival& a : arrivals) {
      wait += std::clamp<int64_t>(aligned_start(last) - aligned_start(a), 0, a.collective->duration_ns);
    }
    caused[std::get<0>(key)][ranks[last.rank_index].rank] += wait;
  }
  for (const auto& [group, by_rank] : caused) {
    const auto best = std::max_element(by_rank.begin(), by_rank.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    if (best->second <= 0) continue;
    CommGroupSummary* g = table->Get("timeline", group);
    g->slowest_rank = best->first;
    g->slowest_why = "others waited " + std::to_string(best->second / 1000) + " us for its late arrivals";
  }
}

// One link transport's traffic within a group, against its standard bandwidth.
struct TransportTraffic {
  double size_mb = 0;
  double time_ms = 0;
  std::optional<double> peak_gbps;
};
using GroupTransports = std::map<std::string, std::map<std::string, TransportTraffic>>;  // group -> transport

std::optional<double> LinkUtilization(const std::map<std::string, TransportTraffic>& transports) {
  double weighted = 0, time = 0;
  for (const auto& [name, t] : transports) {
    if (!t.peak_gbps || *t.peak_gbps <= 0 || t.time_ms <= 0) continue;
    weighted += (t.size_mb / t.time_ms) / *t.peak_gbps * t.time_ms;
    time += t.time_ms;
  }
  return time > 0 ? std::optional<double>(weighted / time) : std::nullopt;
}

void AddAscendOps(const RankCommunication& r, GroupTable* table,
                  std::map<std::string, std::map<int64_t, double>>* waits, std::map<std::string, double>* transit_ms,
                  GroupTransports* transports) {
  std::unordered_map<std::string, const Collective*> timeline;  // hcom op name -> its timeline op
  for (const Collective& c : r.collectives) {
    if (c.source == CollectiveSource::kHccl) timeline.emplace(c.name, &c);
  }
  for (const AscendCommOp& op : r.ascend_ops) {
    if (op.total) continue;
    CommGroupSummary* g = table->Get("communication.json", op.group);
    AddRank(g, r.rank);
    ++g->collectives;
    ++g->count_with_bytes;
    AddSaturating(&g->duration_ns, MsToNs(op.elapse_ms));
    if (SplitKnown(op)) {
      g->op_transit_ms += op.transit_ms;
      g->op_wait_ms += op.wait_ms;
      (*waits)[op.group][r.rank] += op.wait_ms;
    }
    for (const AscendTransport& t : op.transports) {
      if (!IsLinkTransport(t.transport)) continue;
      AddSaturating(&g->bytes, MbToBytes(t.size_mb));
      (*transit_ms)[op.group] += t.time_ms;
      TransportTraffic& traffic = (*transports)[op.group][t.transport];
      traffic.size_mb += t.size_mb;
      traffic.time_ms += t.time_ms;
      if (t.peak_gbps) traffic.peak_gbps = t.peak_gbps;
    }
    if (auto it = timeline.find(op.op_name); it != timeline.end() && it->second->exposed_ns != kNoId) {
      g->exposed_ns = SaturatingAdd(g->exposed_ns, it->second->exposed_ns);
      g->exposure_known_ns = SaturatingAdd(g->exposure_known_ns, it->second->duration_ns);
    }
  }
}

void LabelAscendGroups(const std::vector<RankCommunication>& ranks, CommGroupSummary* g) {
  for (const RankCommunication& r : ranks) {
    for (const ParallelGroupInfo& p : r.parallel_groups) {
      if (p.id != g->group && HcclGroupHash(p.id) != g->group) continue;
      g->label = p.name;
      g->global_ranks = p.global_ranks;
      return;
    }
  }
}

// The communication.json op type that takes the most of an Ascend group's time over its ranks.
void NameBusiestType(const std::vector<RankCommunication>& ranks, CommGroupSummary* g) {
  std::map<CollectiveType, double> ms;
  for (const RankCommunication& r : ranks) {
    for (const AscendCommOp& op : r.ascend_ops) {
      if (!op.total && op.group == g->group) ms[op.type] += op.elapse_ms;
    }
  }
  for (const auto& [type, time] : ms) {
    if (type == CollectiveType::kOther || time <= g->busiest_type_ms) continue;
    g->busiest_type = type;
    g->busiest_type_ms = time;
  }
}

void NameSlowestLink(const std::vector<RankCommunication>& ranks, CommGroupSummary* g) {
  for (const RankCommunication& r : ranks) {
    for (const AscendMatrixLink& link : r.ascend_links) {
      if (link.group != g->group || IsSelfLink(link) || link.size_mb < kTinyLinkMb || !link.bandwidth_gbps ||
          !IsLinkTransport(link.transport)) {
        continue;
      }
      if (!g->slowest_link || *link.bandwidth_gbps < *g->slowest_link->bandwidth_gbps) g->slowest_link = link;
    }
  }
}

}  // namespace

std::string HcclGroupHash(std::string_view id) {
  uint32_t high = 0, low = 0;  // unsigned: the hashes wrap modulo 2^32
  for (const char c : id) {
    high = high * 29u + static_cast<unsigned char>(c);
    low = low * 131u + static_cast<unsigned char>(c);
  }
  return std::to_string((static_cast<uint64_t>(high) << 32) | low);
}

std::vector<int64_t> ParseGroupRanks(std::string_view text) { return ParseRankList(text, "[]"); }

std::vector<ParallelGroupInfo> ReadParallelGroups(const Trace& trace) {
  std::vector<ParallelGroupInfo> groups;
  auto group_of = [&](std::string_view id) -> ParallelGroupInfo& {
    for (ParallelGroupInfo& g : groups) {
      if (g.id == id) return g;
    }
    groups.push_back(ParallelGroupInfo{std::string(id), "", {}});
    return groups.back();
  };
  for (const MetadataEntry& e : trace.metadata().entries) {
    std::string_view key = e.key;
    if (!key.starts_with(kParallelGroupPrefix)) continue;
    key.remove_prefix(kParallelGroupPrefix.size());
    const size_t dot = key.rfind('.');  // the id may hold dots (an IP address), the field never
    if (dot == std::string_view::npos) continue;
    const std::string_view field = key.substr(dot + 1);
    if (field == "group_name") group_of(key.substr(0, dot)).name = e.value;
    if (field == "global_ranks") group_of(key.substr(0, dot)).global_ranks = ParseGroupRanks(e.value);
  }
  return groups;
}

void MeasureExposure(const Trace& trace, std::vector<Collective>* collectives) {
  std::vector<DeviceWorkEvent> work = ListDeviceWork(trace);
  if (work.empty()) work = ListCpuWork(trace);
  const EventTable& events = trace.events();
  std::vector<Interval> compute, calls;
  for (const DeviceWorkEvent& w : work) {
    const int64_t start = events.ts_ns[w.event];
    const Interval span{start, start + std::max<int64_t>(events.dur_ns[w.event], 0)};
    if (Computes(w.work)) compute.push_back(span);
    // On a CPU-only trace the step's thread inside a collective call computes nothing (cpu_work.h).
    if (w.work == WorkClass::kCommunication && !IsDeviceKind(events.kind[w.event]) && IsCollectiveCall(trace, w.event))
      calls.push_back(span);
  }
  const IntervalSet busy = Subtract(UnionOf(std::move(compute)), UnionOf(std::move(calls)));
  for (Collective& c : *collectives) {
    const IntervalSet own = UnionOf({Interval{c.start_ns, c.start_ns + c.duration_ns}});
    c.exposed_ns = c.duration_ns - IntersectionLength(own, busy);
  }
}

namespace {

void NameMissingMembers(const std::vector<RankCommunication>& ranks, std::vector<CommGroupSummary>* groups) {
  std::vector<int64_t> present;
  for (const RankCommunication& r : ranks) present.push_back(r.rank);
  std::sort(present.begin(), present.end());
  for (CommGroupSummary& g : *groups) {
    for (int64_t member : g.global_ranks) {
      if (!std::binary_search(present.begin(), present.end(), member)) g.missing_ranks.push_back(member);
    }
  }
}

}  // namespace

std::vector<CommGroupSummary> SummarizeGroups(const std::vector<RankCommunication>& ranks,
                                              const ClockAlignment& clocks) {
  GroupTable table;
  std::map<std::string, Weighted> weighted;
  for (const RankCommunication& r : ranks) {
    for (const Collective& c : r.collectives) {
      if (CountsOnTimeline(r, c)) AddTimelineCollective(r.rank, c, table.Get("timeline", c.group), &weighted[c.group]);
    }
  }
  NameSlowestTimelineRanks(ranks, clocks, &table);
  std::map<std::string, std::map<int64_t, double>> waits;
  std::map<std::string, double> transit_ms;
  GroupTransports transports;
  for (const RankCommunication& r : ranks) AddAscendOps(r, &table, &waits, &transit_ms, &transports);
  std::vector<CommGroupSummary> groups = table.Take();
  for (CommGroupSummary& g : groups) {
    if (g.exposure_known_ns > 0) {
      g.exposed_share = static_cast<double>(g.exposed_ns) / static_cast<double>(g.exposure_known_ns);
    }
    if (g.source == "timeline") {
      const Weighted& w = weighted[g.group];
      if (w.bytes_ns > 0) g.algbw_gbps = static_cast<double>(g.bytes) / static_cast<double>(w.bytes_ns);  // B/ns = GB/s
      if (w.busbw_ns > 0) g.busbw_gbps = w.busbw_x_ns / static_cast<double>(w.busbw_ns);
      if (w.utilization_ns > 0) g.utilization = w.utilization_x_ns / static_cast<double>(w.utilization_ns);
      for (const auto& [type, ns] : w.type_ns) {
        if (type == CollectiveType::kOther || static_cast<double>(ns) / 1e6 <= g.busiest_type_ms) continue;
        g.busiest_type = type;
        g.busiest_type_ms = static_cast<double>(ns) / 1e6;
      }
      continue;
    }
    LabelAscendGroups(ranks, &g);
    if (transit_ms[g.group] > 0) g.algbw_gbps = static_cast<double>(g.bytes) / 1e6 / transit_ms[g.group];  // MB/ms
    g.utilization = LinkUtilization(transports[g.group]);
    for (const auto& [name, t] : transports[g.group]) {
      GroupTransport out{name, MbToBytes(t.size_mb), t.time_ms, std::nullopt, std::nullopt};
      if (t.time_ms > 0) out.bandwidth_gbps = t.size_mb / t.time_ms;  // MB/ms = GB/s
      if (out.bandwidth_gbps && t.peak_gbps && *t.peak_gbps > 0) out.utilization = *out.bandwidth_gbps / *t.peak_gbps;
      g.transports.push_back(std::move(out));
    }
    NameBusiestType(ranks, &g);
    NameSlowestLink(ranks, &g);
    const std::map<int64_t, double>& by_rank = waits[g.group];
    if (by_rank.size() < 2) continue;
    const auto [least, most] = std::minmax_element(by_rank.begin(), by_rank.end(),
                                                   [](const auto& a, const auto& b) { return a.second < b.second; });
    // Waits a few percent apart single out no rank: the least is then chance.
    if (most->second - least->second < kWaitNoiseShare * most->second) {
      g.slowest_why = "the ranks' HCCL waits are within 5 % of each other: no rank stands out";
      continue;
    }
    g.slowest_rank = least->first;
    g.slowest_why = "least HCCL wait of the group's ranks: the others wait for it";
  }
  NameMissingMembers(ranks, &groups);
  int64_t input_world = 0;
  for (const RankCommunication& r : ranks) input_world = std::max(input_world, r.rank + 1);
  AssignRoles(&groups, nullptr, input_world);
  return groups;
}

}  // namespace tuneprof

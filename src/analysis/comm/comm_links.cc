#include "analysis/comm/comm_links.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace tuneprof {
namespace {

// msprof's slowest-link rule: a link slower than 20 % of the mean of its transport.
constexpr double kSlowLinkShareOfMean = 0.2;

// A link between two members of its group that carried enough bytes for its bandwidth to mean one.
bool CarriesTraffic(const AscendMatrixLink& link) {
  return !IsSelfLink(link) && link.bandwidth_gbps && link.size_mb >= kTinyLinkMb;
}

// Unknown ids sort after the known ones.
int64_t SortKey(int64_t rank) { return rank == kNoId ? std::numeric_limits<int64_t>::max() : rank; }

int64_t LocalOr(int64_t local, int64_t written) { return local != kNoId ? local : written; }

// One group's numbering: member i's global rank, or the world's own numbering.
struct Numbering {
  std::vector<int64_t> global_ranks;
  bool identity = false;
  int64_t Map(int64_t local) const {
    if (identity) return local;
    if (local >= 0 && static_cast<uint64_t>(local) < global_ranks.size()) return global_ranks[local];
    return kNoId;
  }
};

// The id under which rank `r` appears in each of its groups: the source all its cells of the group share
// (a rank's file holds the links it sends on); kNoId when they disagree.
std::map<std::string, int64_t> SelfIds(const RankCommunication& r) {
  std::map<std::string, int64_t> self;
  for (const AscendMatrixLink& link : r.ascend_links) {
    auto [it, added] = self.try_emplace(link.group, link.src_local);
    if (!added && it->second != link.src_local) it->second = kNoId;
  }
  return self;
}

const ParallelGroupInfo* ListedGroup(const std::vector<RankCommunication>& ranks, const std::string& group) {
  for (const RankCommunication& r : ranks) {
    for (const ParallelGroupInfo& p : r.parallel_groups) {
      if (!group.empty() && (p.id == group || HcclGroupHash(p.id) == group)) return &p;
    }
  }
  return nullptr;
}

// Per group: parallel_group_info's members when they cover every id its cells use and every input rank
// sits in them at its own index, else the world numbering when two or more input ranks confirm it and
// none contradicts it.
std::map<std::string, Numbering> NumberGroups(const std::vector<RankCommunication>& ranks,
                                              const std::vector<std::map<std::string, int64_t>>& self_ids) {
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> holders;  // group -> (global, self id)
  std::map<std::string, int64_t> largest_id;
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (const auto& [group, self] : self_ids[i]) holders[group].emplace_back(ranks[i].rank, self);
    for (const AscendMatrixLink& link : ranks[i].ascend_links) {
      int64_t& largest = largest_id[link.group];
      largest = std::max({largest, link.src_local, link.dst_local});
    }
  }
  std::map<std::string, Numbering> out;
  for (const auto& [group, held] : holders) {
    Numbering n;
    if (const ParallelGroupInfo* listed = ListedGroup(ranks, group)) n.global_ranks = listed->global_ranks;
    bool listed_fits = largest_id[group] < static_cast<int64_t>(n.global_ranks.size());
    bool world_fits = held.size() >= 2;
    for (const auto& [global, self] : held) {
      if (n.Map(self) != global) listed_fits = false;
      if (self != global) world_fits = false;
    }
    if (!listed_fits) n.global_ranks.clear();
    n.identity = !listed_fits && world_fits;
    out.emplace(group, std::move(n));
  }
  return out;
}

}  // namespace

bool IsSelfLink(const AscendMatrixLink& link) {
  return link.src_local != kNoId ? link.src_local == link.dst_local : link.src_rank == link.dst_rank;
}

void MarkSlowLinks(std::vector<AscendMatrixLink>* links) {
  std::map<std::string, std::pair<double, int>> mean_by_transport;
  for (const AscendMatrixLink& link : *links) {
    if (!CarriesTraffic(link)) continue;
    auto& [sum, n] = mean_by_transport[link.transport];
    sum += *link.bandwidth_gbps;
    ++n;
  }
  for (AscendMatrixLink& link : *links) {
    link.slow = false;
    auto it = mean_by_transport.find(link.transport);
    if (it == mean_by_transport.end() || !CarriesTraffic(link)) continue;
    link.slow = *link.bandwidth_gbps < kSlowLinkShareOfMean * it->second.first / it->second.second;
  }
}

std::vector<AscendMatrixLink> AggregateLinks(const std::vector<AscendMatrixLink>& links) {
  // (src, dst, transport, and for an unknown end its group and member) -> the summed cell
  using Key = std::tuple<int64_t, int64_t, std::string, std::string, int64_t, int64_t>;
  std::map<Key, AscendMatrixLink> cells;
  for (const AscendMatrixLink& link : links) {
    const bool known = link.src_rank != kNoId && link.dst_rank != kNoId;
    const Key key{SortKey(link.src_rank),  SortKey(link.dst_rank),     link.transport,
                  known ? "" : link.group, known ? 0 : link.src_local, known ? 0 : link.dst_local};
    AscendMatrixLink& cell = cells[key];
    cell.op_key = "all";
    cell.group = known ? "" : link.group;
    cell.src_rank = link.src_rank;
    cell.dst_rank = link.dst_rank;
    cell.src_local = link.src_local;
    cell.dst_local = link.dst_local;
    cell.transport = link.transport;
    cell.size_mb += link.size_mb;
    cell.time_ms += link.time_ms;
  }
  std::vector<AscendMatrixLink> out;
  out.reserve(cells.size());
  for (auto& [key, cell] : cells) {
    if (cell.time_ms > 0) cell.bandwidth_gbps = cell.size_mb / cell.time_ms;
    out.push_back(std::move(cell));
  }
  return out;
}

void ResolveLinkRanks(std::vector<RankCommunication>* ranks) {
  std::vector<std::map<std::string, int64_t>> self_ids;
  for (RankCommunication& r : *ranks) {
    for (AscendMatrixLink& link : r.ascend_links) {
      link.src_local = LocalOr(link.src_local, link.src_rank);
      link.dst_local = LocalOr(link.dst_local, link.dst_rank);
    }
    self_ids.push_back(SelfIds(r));
  }
  const std::map<std::string, Numbering> numbering = NumberGroups(*ranks, self_ids);
  for (size_t i = 0; i < ranks->size(); ++i) {
    RankCommunication& r = (*ranks)[i];
    if (r.ascend_links.empty()) continue;
    for (AscendMatrixLink& link : r.ascend_links) {
      const Numbering& n = numbering.at(link.group);
      const int64_t self = self_ids[i].at(link.group);
      // The rank's own id in the group is itself, whatever the rest of the numbering.
      link.src_rank = self != kNoId && link.src_local == self ? r.rank : n.Map(link.src_local);
      link.dst_rank = self != kNoId && link.dst_local == self ? r.rank : n.Map(link.dst_local);
    }
    MarkSlowLinks(&r.ascend_links);
    r.ascend_rank_matrix = AggregateLinks(r.ascend_links);
  }
}

std::string LinkEndName(int64_t global_rank, int64_t local_rank) {
  if (global_rank != kNoId) return fmt::format("{}", global_rank);
  return local_rank != kNoId ? fmt::format("?{}", local_rank) : std::string("?");
}

}  // namespace tuneprof

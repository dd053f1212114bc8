#include "analysis/comm/comm_link_matrix.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/comm/comm_groups.h"

namespace tuneprof {
namespace {

// Sums the pairs' values into their blocks, then takes each block's mean.
class BlockMeans {
 public:
  explicit BlockMeans(int64_t block) : block_(block) {}
  void Add(int64_t src, int64_t dst, double value) {
    auto& [sum, pairs] = sums_[{src / block_ * block_, dst / block_ * block_}];
    sum += value;
    ++pairs;
  }
  RankLinkMatrix Finish(LinkMatrixSource source) const {
    RankLinkMatrix matrix;
    matrix.block = block_;
    for (const auto& [key, sum_and_pairs] : sums_) {
      matrix.cells[key] = sum_and_pairs.first / static_cast<double>(sum_and_pairs.second);
    }
    if (!matrix.cells.empty()) matrix.source = source;
    return matrix;
  }

 private:
  int64_t block_;
  std::map<std::pair<int64_t, int64_t>, std::pair<double, uint64_t>> sums_;
};

// ceil((largest + 1) / kMaxMatrixBlocks), without overflow on a hostile rank id.
int64_t BlockSize(int64_t largest_rank) { return std::max<int64_t>(largest_rank, 0) / kMaxMatrixBlocks + 1; }

RankLinkMatrix AscendBandwidth(const CommAnalysis& comm) {
  std::map<std::pair<int64_t, int64_t>, std::pair<double, double>> size_and_time;  // MB, ms
  int64_t largest = 0;
  for (const RankCommunication& rank : comm.ranks) {
    for (const AscendMatrixLink& link : rank.ascend_rank_matrix) {
      if (link.src_rank == kNoId || link.dst_rank == kNoId) continue;
      auto& [size_mb, time_ms] = size_and_time[{link.src_rank, link.dst_rank}];
      size_mb += link.size_mb;
      time_ms += link.time_ms;
      largest = std::max({largest, link.src_rank, link.dst_rank});
    }
  }
  BlockMeans blocks(BlockSize(largest));
  for (const auto& [pair, st] : size_and_time) {
    if (st.second > 0) blocks.Add(pair.first, pair.second, st.first / st.second);  // MB/ms = GB/s
  }
  return blocks.Finish(LinkMatrixSource::kAscendBandwidth);
}

// Each rank's traffic with every peer, one rank at a time: a group's members are parsed once per run,
// so the work is ranks x the sizes of their groups and the memory one rank's peers plus the blocks.
RankLinkMatrix SharedCollectiveBytes(const CommAnalysis& comm) {
  std::map<std::string_view, std::vector<int64_t>> members;  // group text -> rank ids
  int64_t largest = 0;
  for (const RankCommunication& rank : comm.ranks) {
    largest = std::max(largest, rank.rank);
    for (const Collective& c : rank.collectives) {
      if (c.bytes == kNoId || members.contains(c.group_ranks)) continue;
      const std::vector<int64_t>& ids = members[c.group_ranks] = ParseGroupRanks(c.group_ranks);
      for (int64_t id : ids) largest = std::max(largest, id);
    }
  }
  BlockMeans blocks(BlockSize(largest));
  std::unordered_map<int64_t, double> peer_gb;
  for (const RankCommunication& rank : comm.ranks) {
    std::map<std::string_view, double> group_gb;
    for (const Collective& c : rank.collectives) {
      if (c.bytes != kNoId) group_gb[c.group_ranks] += static_cast<double>(c.bytes) / 1e9;
    }
    peer_gb.clear();
    for (const auto& [text, gb] : group_gb) {
      for (int64_t peer : members[text]) {
        if (peer != rank.rank) peer_gb[peer] += gb;
      }
    }
    std::vector<std::pair<int64_t, double>> peers(peer_gb.begin(), peer_gb.end());
    std::sort(peers.begin(), peers.end());  // sums in rank order, whatever the hash order
    for (const auto& [peer, gb] : peers) blocks.Add(rank.rank, peer, gb);
  }
  return blocks.Finish(LinkMatrixSource::kSharedCollectiveBytes);
}

}  // namespace

RankLinkMatrix BuildRankLinkMatrix(const CommAnalysis& comm) {
  RankLinkMatrix ascend = AscendBandwidth(comm);
  return ascend.source != LinkMatrixSource::kNone ? ascend : SharedCollectiveBytes(comm);
}

}  // namespace tuneprof

#include "analysis/comm/comm_link_matrix.h"

#include "analysis/comm/comm_groups.h"

namespace tuneprof {
namespace {

RankLinkMatrix AscendBandwidth(const CommAnalysis& comm) {
  std::map<std::pair<int64_t, int64_t>, std::pair<double, double>> size_and_time;  // MB, ms
  for (const RankCommunication& rank : comm.ranks) {
    for (const AscendMatrixLink& link : rank.ascend_rank_matrix) {
      if (link.src_rank == kNoId || link.dst_rank == kNoId) continue;
      auto& [size_mb, time_ms] = size_and_time[{link.src_rank, link.dst_rank}];
      size_mb += link.size_mb;
      time_ms += link.time_ms;
    }
  }
  RankLinkMatrix matrix;
  if (size_and_time.empty()) return matrix;
  matrix.source = LinkMatrixSource::kAscendBandwidth;
  for (const auto& [pair, st] : size_and_time) {
    if (st.second > 0) matrix.cells[pair] = st.first / st.second;  // MB/ms = GB/s
  }
  return matrix;
}

RankLinkMatrix SharedCollectiveBytes(const CommAnalysis& comm) {
  RankLinkMatrix matrix;
  for (const RankCommunication& rank : comm.ranks) {
    for (const Collective& c : rank.collectives) {
      if (c.bytes == kNoId) continue;
      for (int64_t peer : ParseGroupRanks(c.group_ranks)) {
        if (peer != rank.rank) matrix.cells[{rank.rank, peer}] += static_cast<double>(c.bytes) / 1e9;
      }
    }
  }
  if (!matrix.cells.empty()) matrix.source = LinkMatrixSource::kSharedCollectiveBytes;
  return matrix;
}

}  // namespace

RankLinkMatrix BuildRankLinkMatrix(const CommAnalysis& comm) {
  RankLinkMatrix ascend = AscendBandwidth(comm);
  return ascend.source != LinkMatrixSource::kNone ? ascend : SharedCollectiveBytes(comm);
}

}  // namespace tuneprof

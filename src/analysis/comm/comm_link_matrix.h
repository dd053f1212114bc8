#pragma once
// Rank-to-rank traffic of a run as one matrix. Ascend runs give each (source, destination) pair's
// bandwidth from communication_matrix.json (size summed over transports and op types / time summed
// likewise); elsewhere each source rank's trace gives the bytes of the collectives whose group holds both
// ranks (a rank does not know how much of a collective's payload each peer carried, so the cell is the
// traffic the two ranks took part in together, not a measured link load).
//
// A run of more than kMaxMatrixBlocks ranks is drawn in blocks of consecutive rank ids: each cell is the
// mean over the block's rank pairs that carried traffic. A world-size group makes every pair a cell, so a
// dense matrix of thousands of ranks would take gigabytes and say no more than its blocks do.
#include <cstdint>
#include <map>
#include <utility>

#include "analysis/comm/comm_cross_rank.h"

namespace tuneprof {

enum class LinkMatrixSource : uint8_t {
  kNone,                  // no pair of ranks with traffic
  kAscendBandwidth,       // GB/s, from communication_matrix.json
  kSharedCollectiveBytes  // GB, bytes of collectives whose group holds both ranks
};

inline constexpr int64_t kMaxMatrixBlocks = 64;

struct RankLinkMatrix {
  LinkMatrixSource source = LinkMatrixSource::kNone;
  int64_t block = 1;  // ranks per block: ceil((largest rank + 1) / kMaxMatrixBlocks), 1 for smaller runs
  // (first rank of the source block, first rank of the destination block) -> GB/s or GB, the mean over
  // the block's rank pairs with traffic (one pair's value when `block` is 1).
  std::map<std::pair<int64_t, int64_t>, double> cells;
};

RankLinkMatrix BuildRankLinkMatrix(const CommAnalysis& comm);

}  // namespace tuneprof

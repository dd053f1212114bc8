#pragma once
// Rank-to-rank traffic of a run as one matrix. Ascend runs give each (source, destination) pair's
// bandwidth from communication_matrix.json (size summed over transports and op types / time summed
// likewise); elsewhere each source rank's trace gives the bytes of the collectives whose group holds both
// ranks (a rank does not know how much of a collective's payload each peer carried, so the cell is the
// traffic the two ranks took part in together, not a measured link load).
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

struct RankLinkMatrix {
  LinkMatrixSource source = LinkMatrixSource::kNone;
  std::map<std::pair<int64_t, int64_t>, double> cells;  // (source rank, destination rank) -> GB/s or GB
};

RankLinkMatrix BuildRankLinkMatrix(const CommAnalysis& comm);

}  // namespace tuneprof

#include "base/rank_ranges.h"

#include <algorithm>
#include <vector>

namespace tuneprof {

std::string RankRanges(std::span<const int64_t> ranks) {
  std::vector<int64_t> sorted(ranks.begin(), ranks.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t last = i;
    while (last + 1 < sorted.size() && sorted[last + 1] == sorted[last] + 1) ++last;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (last > i) {
      out += last == i + 1 ? ',' : '-';
      out += std::to_string(sorted[last]);
    }
    i = last + 1;
  }
  return out;
}

}  // namespace tuneprof

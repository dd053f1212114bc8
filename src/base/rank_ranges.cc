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

std::vector<int64_t> ParseRankList(std::string_view text, std::string_view brackets) {
  constexpr int64_t kLargestRankId = 100000000;
  std::vector<int64_t> ranks;
  int64_t value = 0;
  bool in_number = false;
  for (const char c : text) {
    if (c >= '0' && c <= '9') {
      if (value > kLargestRankId) return {};
      value = value * 10 + (c - '0');
      in_number = true;
    } else if (c == ',' || c == ' ' || brackets.find(c) != std::string_view::npos) {
      if (in_number) ranks.push_back(value);
      value = 0;
      in_number = false;
    } else {
      return {};
    }
  }
  if (in_number) ranks.push_back(value);
  return ranks;
}

}  // namespace tuneprof

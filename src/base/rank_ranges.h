#pragma once
// Rank ids as runs of consecutive ids ("0-2,4,6-1023"), in increasing order, each once: a finding that
// fired on 1,023 of 1,024 ranks reads as two ranges instead of 4,000 characters. In base so that the
// reports and the warnings the pipeline writes name rank sets alike.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tuneprof {

std::string RankRanges(std::span<const int64_t> ranks);

// A written rank list, "[0, 1, 2]" or "(0, 1, 2)" (`brackets` says which pair) -> {0, 1, 2}; empty when the
// text holds anything else or an id beyond any real job's (10^8).
std::vector<int64_t> ParseRankList(std::string_view text, std::string_view brackets);

}  // namespace tuneprof

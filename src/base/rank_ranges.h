#pragma once
// Rank ids as runs of consecutive ids ("0-2,4,6-1023"), in increasing order, each once: a finding that
// fired on 1,023 of 1,024 ranks reads as two ranges instead of 4,000 characters. In base so that the
// reports and the warnings the pipeline writes name rank sets alike.
#include <cstdint>
#include <span>
#include <string>

namespace tuneprof {

std::string RankRanges(std::span<const int64_t> ranks);

}  // namespace tuneprof

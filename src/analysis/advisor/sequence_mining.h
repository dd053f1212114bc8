#pragma once
// Repeated runs of consecutive symbols (operator names in launch order): every distinct window of
// `min_length`..`max_length` symbols that occurs at least `min_occurrences` times without overlapping
// itself. Windows are told apart exactly, by ranks, not hashes: the window of length k at i is the pair
// (rank of the window of length k - 1 at i, symbol i + k - 1), ranked by one sort per length, so the cost
// is O(n log n) per length and memory O(n) whatever the input.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace tuneprof {

// A symbol that never repeats: put between two independent runs (streams), no window spans it.
inline constexpr uint32_t kSequenceBreak = 0xFFFFFFFFu;

struct SequenceMiningLimits {
  size_t min_length = 2;
  size_t max_length = 10;
  size_t min_occurrences = 5;
};

// Called once per repeated window: its length and the starts of its occurrences, ascending, none
// overlapping the one before (taken greedily from the left).
using RepeatedWindowSink = std::function<void(size_t length, std::span<const uint32_t> starts)>;

void ForEachRepeatedWindow(std::span<const uint32_t> symbols, const SequenceMiningLimits& limits,
                           const RepeatedWindowSink& sink);

}  // namespace tuneprof

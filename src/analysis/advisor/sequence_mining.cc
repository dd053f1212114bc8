#include "analysis/advisor/sequence_mining.h"

#include <algorithm>
#include <vector>

namespace tuneprof {
namespace {

constexpr uint32_t kUnique = 0xFFFFFFFFu;  // a window rank that matches nothing (too rare, or a break)

struct Window {
  uint64_t key = 0;  // (rank of the window one shorter) << 32 | its next symbol
  uint32_t start = 0;
};

// Greedy non-overlapping occurrences of one window group, sorted by start.
void TakeNonOverlapping(std::span<const Window> group, size_t length, std::vector<uint32_t>* starts) {
  starts->clear();
  for (const Window& w : group) {
    if (starts->empty() || w.start >= starts->back() + length) starts->push_back(w.start);
  }
}

}  // namespace

void ForEachRepeatedWindow(std::span<const uint32_t> symbols, const SequenceMiningLimits& limits,
                           const RepeatedWindowSink& sink) {
  const size_t n = symbols.size();
  if (n == 0 || limits.max_length == 0 || limits.min_occurrences == 0) return;
  // rank[i]: the rank of the window of the current length at i; kUnique where it cannot repeat often
  // enough (its prefix did not), so longer windows there are never sorted again.
  std::vector<uint32_t> rank(symbols.begin(), symbols.end());
  std::vector<Window> windows;
  std::vector<uint32_t> starts;
  for (size_t length = 2; length <= limits.max_length && length <= n; ++length) {
    windows.clear();
    for (size_t i = 0; i + length <= n; ++i) {
      const uint32_t next = symbols[i + length - 1];
      if (rank[i] == kUnique || next == kSequenceBreak) continue;
      windows.push_back({uint64_t{rank[i]} << 32 | next, static_cast<uint32_t>(i)});
    }
    std::fill(rank.begin(), rank.end(), kUnique);
    if (windows.empty()) break;
    std::sort(windows.begin(), windows.end(),
              [](const Window& a, const Window& b) { return a.key != b.key ? a.key < b.key : a.start < b.start; });
    uint32_t next_rank = 0;
    for (size_t lo = 0; lo < windows.size();) {
      size_t hi = lo + 1;
      while (hi < windows.size() && windows[hi].key == windows[lo].key) ++hi;
      const std::span<const Window> group(windows.data() + lo, hi - lo);
      // Overlapping occurrences still count here: a longer window that repeats apart needs its prefix
      // to occur that often, overlapping or not.
      if (group.size() >= limits.min_occurrences) {
        for (const Window& w : group) rank[w.start] = next_rank;
        ++next_rank;
        TakeNonOverlapping(group, length, &starts);
        if (length >= limits.min_length && starts.size() >= limits.min_occurrences) sink(length, starts);
      }
      lo = hi;
    }
  }
}

}  // namespace tuneprof

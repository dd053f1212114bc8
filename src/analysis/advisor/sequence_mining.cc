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

// One stable counting pass: `from` ordered by the 32 bits of key at `shift`, into `to`.
void CountingPass(const std::vector<Window>& from, int shift, uint32_t most, std::vector<uint32_t>* counts,
                  std::vector<Window>* to) {
  counts->assign(size_t{most} + 2, 0);
  for (const Window& w : from) ++(*counts)[static_cast<uint32_t>(w.key >> shift) + size_t{1}];
  for (size_t v = 1; v < counts->size(); ++v) (*counts)[v] += (*counts)[v - 1];
  to->resize(from.size());
  for (const Window& w : from) (*to)[(*counts)[static_cast<uint32_t>(w.key >> shift)]++] = w;
}

// Sorts windows by key, ties by start. They arrive by start, so two stable counting passes (the next
// symbol, then the rank) give that order in linear time; where a part of the key is too large to count
// (symbols that are no small ids), a comparison sort.
void SortWindows(std::vector<Window>* windows, std::vector<Window>* scratch, std::vector<uint32_t>* counts) {
  uint32_t most_rank = 0, most_next = 0;
  for (const Window& w : *windows) {
    most_rank = std::max(most_rank, static_cast<uint32_t>(w.key >> 32));
    most_next = std::max(most_next, static_cast<uint32_t>(w.key));
  }
  const size_t countable = 4 * windows->size() + 4096;
  if (most_rank >= countable || most_next >= countable) {
    std::sort(windows->begin(), windows->end(),
              [](const Window& a, const Window& b) { return a.key != b.key ? a.key < b.key : a.start < b.start; });
    return;
  }
  CountingPass(*windows, 0, most_next, counts, scratch);
  CountingPass(*scratch, 32, most_rank, counts, windows);
}

}  // namespace

void ForEachRepeatedWindow(std::span<const uint32_t> symbols, const SequenceMiningLimits& limits,
                           const RepeatedWindowSink& sink) {
  const size_t n = symbols.size();
  if (n == 0 || limits.max_length == 0 || limits.min_occurrences == 0) return;
  // rank[i]: the rank of the window of the current length at i; kUnique where it cannot repeat often
  // enough (its prefix did not), so longer windows there are never sorted again.
  std::vector<uint32_t> rank(symbols.begin(), symbols.end());
  std::vector<Window> windows, scratch;
  std::vector<uint32_t> starts, counts;
  for (size_t length = 2; length <= limits.max_length && length <= n; ++length) {
    windows.clear();
    for (size_t i = 0; i + length <= n; ++i) {
      const uint32_t next = symbols[i + length - 1];
      if (rank[i] == kUnique || next == kSequenceBreak) continue;
      windows.push_back({uint64_t{rank[i]} << 32 | next, static_cast<uint32_t>(i)});
    }
    std::fill(rank.begin(), rank.end(), kUnique);
    if (windows.empty()) break;
    SortWindows(&windows, &scratch, &counts);
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

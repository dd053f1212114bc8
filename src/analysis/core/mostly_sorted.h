#pragma once
// Sorting of lists that are mostly in order already: a thread's ranges as profilers write them, or the device
// work of a few streams listed one after another, each nearly by start.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace tuneprof {
namespace mostly_sorted_internal {

// Sorts [first, last): the entries that come before one kept ahead of them are moved behind the kept ones,
// sorted the same way (each level keeps at least one entry) and merged back from the end through `scratch`.
// A list of k streams, each nearly in order, takes about k levels of linear passes; past `depth` levels the
// rest is sorted plainly, so the cost stays O(n log n) whatever the input.
template <typename T, typename Less>
void SortLevels(T* first, T* last, std::vector<T>* scratch, Less less, int depth) {
  if (std::is_sorted(first, last, less)) return;
  if (depth == 0) {
    std::sort(first, last, less);
    return;
  }
  scratch->clear();
  T* kept = first;
  for (T* p = first; p != last; ++p) {
    if (kept == first || !less(*p, kept[-1])) {
      *kept++ = *p;
    } else {
      scratch->push_back(*p);
    }
  }
  std::copy(scratch->begin(), scratch->end(), kept);
  SortLevels(kept, last, scratch, less, depth - 1);
  scratch->assign(kept, last);
  // Merged from the back: the write position never passes the kept entries not yet read.
  T* write = last;
  T* k = kept;
  auto l = scratch->end();
  while (l != scratch->begin()) *--write = k != first && less(l[-1], k[-1]) ? *--k : *--l;
}

}  // namespace mostly_sorted_internal

// Sorts `items` by `less`, in linear passes where the list is nearly in order or a few such lists one after
// another. Entries equal under `less` may come out in any order, as with std::sort: callers sort by a total
// order or read the result in a way that does not depend on the order of equal entries.
template <typename T, typename Less>
void SortMostlySorted(std::vector<T>* items, Less less) {
  constexpr int kLevels = 8;
  if (std::is_sorted(items->begin(), items->end(), less)) return;
  std::vector<T> scratch;
  scratch.reserve(items->size());
  mostly_sorted_internal::SortLevels(items->data(), items->data() + items->size(), &scratch, less, kLevels);
}

}  // namespace tuneprof
